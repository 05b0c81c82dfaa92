"""The storage backends: running Cypher on the Neo4j store (``cypher_run``)."""
