// The papers in the database and those whose load finished (content hash set), for `lit3r doctor`. No parameters.
MATCH (p:Paper) RETURN count(p) AS n, count(p.hash) AS done
