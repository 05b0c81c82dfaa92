// $rows: [{paper_id, authors: [{name, position}]}]: one row per distinct name of a paper, position its
// last place in the author order (1-based; the caller folds repeated names). The paper's
// AUTHORED_BY edges were deleted first (forget_papers), so the edges are created, not merged.
UNWIND $rows AS row
MATCH (p:Paper {paper_id: row.paper_id})
UNWIND row.authors AS author
MERGE (a:Author {name: author.name})
CREATE (p)-[:AUTHORED_BY {position: author.position}]->(a)
