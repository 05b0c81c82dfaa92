// Release the servers' load lease this owner holds. $owner
MATCH (l:Lit3rLoadLock {id: 'load', owner: $owner}) DELETE l
