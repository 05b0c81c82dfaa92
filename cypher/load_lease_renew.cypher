// Renew the servers' load lease this owner holds (none renewed: n = 0). $owner
MATCH (l:Lit3rLoadLock {id: 'load', owner: $owner}) SET l.renewed = timestamp() RETURN count(l) AS n
