// Delete up to $batch works no corpus paper cites (and that are not papers) and authors of no
// paper; run until it returns 0.
CALL () {
  MATCH (w:Work) WHERE NOT w:Paper AND NOT EXISTS { ()-[:CITES]->(w) } RETURN w AS n
  UNION
  MATCH (a:Author) WHERE NOT EXISTS { ()-[:AUTHORED_BY]->(a) } RETURN a AS n
}
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
