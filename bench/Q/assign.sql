-- Benchmark Q: one subscript assignment of row :id's :key to its own value
-- (the document stays the same, the row gets a new version).  Run with
-- pgbench -t N: one transaction per assignment.
UPDATE :tab SET jb[':key'] = to_jsonb(:id) WHERE id = :id;
