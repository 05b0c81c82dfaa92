// Browser guide: the corpus at a glance: papers, chunks, cited works, authors, citation edges
// between corpus papers, SIMILAR_TO edges and stored question traces. No parameters.
CALL () { MATCH (p:Paper) RETURN count(p) AS papers }
CALL () { MATCH (c:Chunk) RETURN count(c) AS chunks }
CALL () { MATCH (w:Work) WHERE NOT w:Paper RETURN count(w) AS outside_works }
CALL () { MATCH (a:Author) RETURN count(a) AS authors }
CALL () { MATCH (:Paper)-[r:CITES]->(:Paper) RETURN count(r) AS corpus_citations }
CALL () { MATCH (:Paper)-[s:SIMILAR_TO]->(:Paper) RETURN count(s) AS similar_edges }
CALL () { MATCH (q:Question) RETURN count(q) AS traced_questions }
RETURN papers, chunks, outside_works, authors, corpus_citations, similar_edges, traced_questions
