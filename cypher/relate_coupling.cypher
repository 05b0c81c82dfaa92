// Relate, source 2: bibliographic coupling of a seed. Papers sharing >= $min_shared cited works,
// by Jaccard of the cited-work sets, then shared count, then id. $paper_id, $min_shared=2, $limit=50
MATCH (s:Paper {paper_id: $paper_id})-[:CITES]->(w:Work)<-[:CITES]-(o:Paper)
WHERE o <> s
WITH s, o, count(DISTINCT w) AS shared
WHERE shared >= $min_shared
CALL (s) { MATCH (s)-[:CITES]->(x:Work) RETURN count(DISTINCT x) AS ns }
CALL (o) { MATCH (o)-[:CITES]->(y:Work) RETURN count(DISTINCT y) AS no }
RETURN o.paper_id AS paper_id, toFloat(shared) / (ns + no - shared) AS jaccard, shared
ORDER BY jaccard DESC, shared DESC, paper_id
LIMIT $limit
