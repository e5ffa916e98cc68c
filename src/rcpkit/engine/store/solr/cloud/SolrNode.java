import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;

/**
 * One SolrCloud node in its own JVM, for `rcpkit solr up` (tests and trials).
 *
 * <p>Usage: {@code SolrNode SOLR_HOME PORT ZK_HOST}. Solr's own embedded runner
 * (the one its test framework starts clusters with) serves {@code /solr} on
 * 127.0.0.1:PORT, a SolrCloud node of the ensemble at ZK_HOST. It prints
 * {@code READY <port>} once serving and stops cleanly on SIGTERM; kill -9 is a
 * node crash, which is what the fault tests want.
 */
public final class SolrNode {
  private SolrNode() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: SolrNode SOLR_HOME PORT ZK_HOST");
      System.exit(2);
    }
    Path home = Path.of(args[0]);
    Files.createDirectories(home);
    Properties node = new Properties();
    node.setProperty("zkHost", args[2]);
    node.setProperty("host", "127.0.0.1");
    node.setProperty("hostPort", args[1]);
    JettyConfig config =
        JettyConfig.builder().setPort(Integer.parseInt(args[1])).setContext("/solr").build();
    JettySolrRunner runner = new JettySolrRunner(home.toString(), node, config);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    runner.stop();
                  } catch (Exception error) {
                    error.printStackTrace();
                  }
                  stopped.countDown();
                }));
    runner.start();
    System.out.println("READY " + runner.getLocalPort());
    System.out.flush();
    stopped.await();
  }
}
