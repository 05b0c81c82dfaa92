// $rows: [{paper_id, title, venue, year, abstract, n_pages, file, sha256, parser}]
// A corpus paper is also a :Work (work_id "paper:<id>") so that citations resolve onto it; the
// node is merged on the work id, so a citation written before its paper lands on the same node.
UNWIND $rows AS row
MERGE (p:Work {work_id: 'paper:' + row.paper_id})
SET p:Paper, p.paper_id = row.paper_id, p.title = row.title, p.venue = row.venue,
    p.year = row.year, p.abstract = row.abstract, p.n_pages = row.n_pages, p.file = row.file,
    p.sha256 = row.sha256, p.parser = row.parser
