// The CITES edges touching works (a corpus paper is also the work "paper:<id>"), as distinct
// (citing work id, cited work id) pairs: one breadth-first step of `lit3r graph path`. $ids
UNWIND $ids AS id
MATCH (n:Work {work_id: id})
CALL (n) {
  MATCH (n)-[:CITES]->(m:Work) RETURN n.work_id AS citing, m.work_id AS cited
  UNION
  MATCH (m:Paper)-[:CITES]->(n) RETURN m.work_id AS citing, n.work_id AS cited
}
RETURN DISTINCT citing, cited
