// Exploration: the shortest citation path between two papers, through CITES in either
// direction (works shared or cited in between). $from, $to
MATCH (a:Paper {paper_id: $from}), (b:Paper {paper_id: $to})
MATCH path = shortestPath((a)-[:CITES*..8]-(b))
RETURN [n IN nodes(path) | coalesce(n.paper_id, n.work_id)] AS nodes, length(path) AS hops
