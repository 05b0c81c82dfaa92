// Exploration: the citation neighbourhood of a paper: corpus papers it cites, corpus papers
// citing it, and its most coupled papers. $paper_id
MATCH (p:Paper {paper_id: $paper_id})
OPTIONAL MATCH (p)-[:CITES]->(out:Paper)
WITH p, collect(DISTINCT out.paper_id) AS cites
OPTIONAL MATCH (inn:Paper)-[:CITES]->(p)
WITH p, cites, collect(DISTINCT inn.paper_id) AS cited_by
OPTIONAL MATCH (p)-[:CITES]->(w:Work)<-[:CITES]-(o:Paper) WHERE o <> p
WITH p, cites, cited_by, o, count(DISTINCT w) AS shared ORDER BY shared DESC, o.paper_id
RETURN p.paper_id AS paper_id, p.title AS title, cites, cited_by,
       [x IN collect({paper_id: o.paper_id, shared: shared})[0..10] WHERE x.paper_id IS NOT NULL] AS coupled
