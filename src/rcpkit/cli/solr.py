"""``rcpkit solr up|down --dir DIR``: a local SolrCloud for tests and trials (issue 48).

``up`` starts ZooKeeper and ``--nodes`` Solr nodes (one JVM each, on 127.0.0.1),
uploads the configset rcpkit ships, creates the collection, prints its store URL
(``solr://127.0.0.1:PORT/solr/NAME``) and returns while the cluster runs; ``down``
stops it. Production users run their own SolrCloud and point rcpkit at it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["HELP", "add_arguments", "run"]

HELP = "start or stop a local SolrCloud (tests and trials)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["up", "down"], help="start the cluster, or stop it")
    parser.add_argument(
        "--dir", type=Path, required=True, metavar="DIR",
        help="the cluster's folder: data, logs and the pids `down` stops",
    )  # fmt: skip
    parser.add_argument("--nodes", type=int, default=3, help="Solr nodes (JVMs), default 3")
    parser.add_argument("--shards", type=int, default=2, help="the collection's shards")
    parser.add_argument("--replicas", type=int, default=1, help="replicas of each shard")
    parser.add_argument("--collection", default="rcpkit", help="the collection's name")


def run(args: argparse.Namespace) -> int:
    from rcpkit.engine.store.solr.localcloud import start_cluster, stop_cluster

    try:
        if args.action == "down":
            stop_cluster(args.dir)
            return 0
        cluster = start_cluster(args.dir, args.nodes, args.shards, args.replicas, args.collection)
    except RuntimeError as error:  # no Java, Maven or a node that would not start
        raise ValueError(str(error)) from error
    print(cluster.url, flush=True)
    return 0
