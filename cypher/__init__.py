"""Every Cypher statement of Lit3R as a named .cypher file (see :func:`graph.cypher.statement`).

Users paste them into Neo4j Browser; ``graph/`` loads them by name and passes parameters only.
"""
