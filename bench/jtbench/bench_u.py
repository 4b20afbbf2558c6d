"""Benchmark U: partial update, WAL and storage.

Table t: N rows (10,000 at scale 1) holding the same 1000-key object.  Each
update form runs on a fresh copy of the table, after a CHECKPOINT, and is
measured for duration, WAL bytes (insert LSN difference) and heap and TOAST
relation sizes before and after, and how much of the WAL is full-page
images (pg_walinspect).  "id = id + 1" touches no jsonb and is the
floor.  Each update runs --u-runs times (3 by default) per configuration,
the configurations taking turns, so that a slow spell of the machine
falls on all of them; the run of median duration is kept, with the
fastest and slowest durations beside it.  The ORM pattern sends the
whole new document as a literal, with one value changed, as a client
holding the document would.

On the S table (documents of 130 B to 3.3 MB) every row is updated on its
own, in one transaction, to get WAL per row against document size: setting
key1, and appending one element to key2.
"""

import json

from . import db
from .configs import forms_text

DOC = "(SELECT jsonb_object_agg(j, j) FROM generate_series(1, 1000) j)"


def client_document():
    doc = {str(j): j for j in range(1, 1001)}
    doc["500"] = 0
    return json.dumps(doc).replace("'", "''")


CASES = [
    ("id = id + 1", "id = id + 1"),
    ("js - '1'", "js = js - '1'"),
    ("jsonb_set(js, '{500}', '0')", "js = jsonb_set(js, '{500}', '0')"),
    ("js || '{\"bar\": \"baz\"}'", "js = js || '{\"bar\": \"baz\"}'"),
    # not in the benchmark definitions: the ORM's merge of a few changed fields, here
    # two keys far apart (the first and the last of its 11 parts)
    ("js || '{\"2\": 0, \"999\": 0}'", "js = js || '{\"2\": 0, \"999\": 0}'"),
    ("client-sent document", None),
]

S_CASES = [
    ("S: set key1", "jb = jsonb_set(jb, '{key1}', to_jsonb(-id))"),
    ("S: append to key2", "jb = jsonb_insert(jb, '{key2,-1}', '1', true)"),
]

PER_ROW_FUNC = """
CREATE OR REPLACE FUNCTION bench_update_each_row(tab regclass, assignment text)
RETURNS TABLE (row_id int, wal_bytes numeric, ms float8)
LANGUAGE plpgsql AS $$
DECLARE
  l0 pg_lsn;
  t0 timestamptz;
BEGIN
  FOR row_id IN EXECUTE format('SELECT id FROM %s ORDER BY id', tab) LOOP
    l0 := pg_current_wal_insert_lsn();
    t0 := clock_timestamp();
    EXECUTE format('UPDATE %s SET %s WHERE id = $1', tab, assignment) USING row_id;
    wal_bytes := pg_current_wal_insert_lsn() - l0;
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
    RETURN NEXT;
  END LOOP;
END $$;
"""


def run(configs, results, args, log):
    nrows = max(100, int(10000 * args.scale))
    # full-page images, counted apart (pg_get_wal_stats): after the
    # CHECKPOINT, the first change to each page logs the whole page
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect;")
    for cfg in configs:
        base = cfg.table("u_base")
        log(f"U: loading {base} ({nrows} rows)")
        cfg.execute(cfg.create_table(base, f"id int, {cfg.column('js')}", "js") +
                    f"INSERT INTO {base} SELECT i, {DOC} FROM generate_series(1, {nrows}) i;"
                    f"VACUUM ANALYZE {base};")
        forms = cfg.check_storage(base, "js")
        log(f"U: {base}: " + forms_text(forms))
    runs = max(1, getattr(args, "u_runs", 1))
    for case, assignment in CASES:
        if assignment is None:
            assignment = "js = '" + client_document() + "'"
        measured = {cfg.name: [] for cfg in configs}
        for _ in range(runs):
            for cfg in configs:
                m = update_once(cfg, assignment)
                measured[cfg.name].append(m)
                log(f"U: {case} on {cfg.name}: {m['ms']:.0f} ms, "
                    f"{m['wal_bytes']} WAL bytes")
        for cfg in configs:
            by_ms = sorted(measured[cfg.name], key=lambda m: m["ms"])
            for metric, v in by_ms[(len(by_ms) - 1) // 2].items():
                results.add("U", cfg.name, case, metric, v, rows=nrows, runs=runs)
            results.add("U", cfg.name, case, "ms_min", by_ms[0]["ms"], rows=nrows, runs=runs)
            results.add("U", cfg.name, case, "ms_max", by_ms[-1]["ms"], rows=nrows, runs=runs)
    s_update_per_row(configs, results, log)


def update_once(cfg, assignment):
    """One UPDATE of every row of a fresh copy of cfg's table: its metrics."""
    base, t = cfg.table("u_base"), cfg.table("u")
    cfg.execute(cfg.create_table(t, f"id int, {cfg.column('js')}", "js") +
                f"INSERT INTO {t} SELECT * FROM {base};"
                f"VACUUM ANALYZE {t}; CHECKPOINT;")
    cfg.check_storage(t, "js")
    heap0, toast0 = db.relation_sizes(t)
    # the TOAST values there before: those the UPDATE writes are the others
    toastrel = db.value(f"SELECT reltoastrelid::regclass FROM pg_class WHERE oid = '{t}'::regclass")
    db.execute(f"DROP TABLE IF EXISTS u_values_before;"
               f"CREATE TABLE u_values_before AS SELECT DISTINCT chunk_id FROM {toastrel};")
    lsn0 = db.value("SELECT pg_current_wal_insert_lsn()")
    ms = db.timed(f"UPDATE {t} SET {assignment};", options=cfg.session_options)
    lsn1 = db.value("SELECT pg_current_wal_insert_lsn()")
    wal = int(db.value(f"SELECT '{lsn1}'::pg_lsn - '{lsn0}'"))
    fpi = db.fpi_bytes(lsn0, lsn1)
    heap1, toast1 = db.relation_sizes(t)
    written = int(db.value(f"SELECT count(DISTINCT chunk_id) FROM {toastrel} "
                           f"WHERE chunk_id NOT IN (SELECT chunk_id FROM u_values_before)"))
    cfg.check_storage(t, "js")
    db.execute(f"DROP TABLE {t}, u_values_before;")
    return {"ms": ms, "wal_bytes": wal, "wal_fpi_bytes": fpi,
            "toast_values_written": written,
            "heap_bytes_before": heap0, "heap_bytes_after": heap1,
            "toast_bytes_before": toast0, "toast_bytes_after": toast1}


def s_update_per_row(configs, results, log):
    from .bench_s import setup as s_setup
    db.execute(PER_ROW_FUNC)
    for cfg in configs:
        if not db.value(f"SELECT to_regclass('{cfg.table('s', shared=True)}') IS NOT NULL") == "t":
            s_setup([cfg], log)
    for case, assignment in S_CASES:
        for cfg in configs:
            src, t = cfg.table("s", shared=True), cfg.table("s_upd")
            cfg.execute(cfg.create_table(t, f"id int PRIMARY KEY, {cfg.column()}") +
                        f"INSERT INTO {t} SELECT * FROM {src};"
                        f"VACUUM ANALYZE {t}; CHECKPOINT;")
            cfg.check_storage(t)
            stored = dict((int(i), int(s)) for i, s in db.query(
                f"SELECT id, s.stored_size FROM {t}, jsonb_toaster_storage(jb) s"))
            for row, wal, ms in db.query(
                    f"SELECT * FROM bench_update_each_row('{t}', $q${assignment}$q$)",
                    cfg.session_options):
                row = int(row)
                results.add("U", cfg.name, case, "wal_bytes", int(wal), row=row,
                            stored_size=stored[row])
                results.add("U", cfg.name, case, "ms", float(ms), row=row,
                            stored_size=stored[row])
            db.execute(f"DROP TABLE {t};")
            log(f"U: {case} on {cfg.name} done")
