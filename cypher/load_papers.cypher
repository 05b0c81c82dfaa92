// $rows: [{paper_id, title, venue, year, abstract, n_pages, file, sha256, parser}]
// A corpus paper is also a :Work (work_id "paper:<id>") so that citations resolve onto it.
UNWIND $rows AS row
MERGE (p:Paper {paper_id: row.paper_id})
SET p:Work, p.work_id = 'paper:' + row.paper_id, p.title = row.title, p.venue = row.venue,
    p.year = row.year, p.abstract = row.abstract, p.n_pages = row.n_pages, p.file = row.file,
    p.sha256 = row.sha256, p.parser = row.parser
