// Claim the servers' load lease for one ingest's load (lit3r/index/lock.py): taken when free,
// held by this owner, or not renewed for $lease_ms; returns whether it is this owner's, who holds
// it and how many seconds ago it was renewed. $owner $who $lease_ms=60000
MERGE (l:Lit3rLoadLock {id: 'load'})
ON CREATE SET l.owner = $owner, l.who = $who, l.renewed = timestamp()
WITH l, l.owner = $owner OR l.renewed < timestamp() - $lease_ms AS mine
SET l.owner = CASE WHEN mine THEN $owner ELSE l.owner END,
    l.who = CASE WHEN mine THEN $who ELSE l.who END,
    l.renewed = CASE WHEN mine THEN timestamp() ELSE l.renewed END
RETURN l.owner = $owner AS mine, l.who AS who, (timestamp() - l.renewed) / 1000 AS age_s
