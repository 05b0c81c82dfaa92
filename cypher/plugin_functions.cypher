// The names of the user-defined (plugin) functions of the server, such as APOC's: `lit3r cypher`
// refuses them without --write (graph/cypher_guard.py). No parameters.
SHOW FUNCTIONS YIELD name, isBuiltIn WHERE NOT isBuiltIn RETURN name
