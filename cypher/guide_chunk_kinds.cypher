// Browser guide: chunks by kind (title_abstract, text, table, figure, equation), with how many
// papers have chunks of that kind. No parameters.
MATCH (p:Paper)-[:HAS_CHUNK]->(c:Chunk)
RETURN c.kind AS kind, count(c) AS chunks, count(DISTINCT p) AS papers
ORDER BY chunks DESC, kind
