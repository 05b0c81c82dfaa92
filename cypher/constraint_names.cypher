// The names of the database's constraints (`lit3r doctor` checks Lit3R's are there). No parameters.
SHOW CONSTRAINTS YIELD name RETURN name
