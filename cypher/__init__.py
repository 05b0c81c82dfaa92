"""Every Cypher statement of Lit3R as a named .cypher file (see :func:`graph.cypher.statement`).

Users paste them into Neo4j Browser; ``graph/`` loads them by name and passes parameters only.

Header convention (read by :func:`graph.cypher.info`, shown by ``lit3r cypher --list``): the
file starts with ``//`` lines whose first sentence is the statement's purpose and which end
with its parameters, a default written as ``$name=VALUE`` (JSON: ``$limit=25``, ``$text=null``);
the parameters themselves are the ``$names`` its code uses.
"""
