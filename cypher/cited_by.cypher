// Corpus papers whose reference lists resolve to this paper. $paper_id
MATCH (c:Paper)-[:CITES]->(:Paper {paper_id: $paper_id})
RETURN DISTINCT c.paper_id AS paper_id ORDER BY paper_id
