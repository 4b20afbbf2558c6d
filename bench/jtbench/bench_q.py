"""Benchmark Q: short-key access through every syntax.

On S's table (rows 1..100, documents from 130 B to 3.3 MB raw), the time of
one evaluation of an access to key1 and key3 (short fields, before and
after S's long arrays) through each way PostgreSQL offers: ->, subscripts,
the jsonpath functions and operators, the SQL/JSON query functions,
JSON_TABLE, containment and jsonb_to_record; and of a subscript
assignment, with the WAL it writes.  Timed as S is: the expression
repeated in one query (bench/Q/expr.sql, bench/Q/from.sql), the repetition
count sized to take about --q-target-ms, the configurations taking turns,
the fastest of --q-runs runs counting.  One results line per point:
case = the syntax, metric "ms_per_call" (and "wal_bytes_per_row" for
subscript_assign), with row, stored_size and raw_size.
"""

import os

from . import bench_s, db

HERE = os.path.join(os.path.dirname(__file__), "..", "Q")
EXPR = os.path.join(HERE, "expr.sql")
FROM = os.path.join(HERE, "from.sql")
ASSIGN = os.path.join(HERE, "assign.sql")

KEYS = ["key1", "key3"]

# case: (script, variable, template); KEY stands for the key
READS = {
    "arrow": (EXPR, "expr", "jb -> 'KEY'"),
    "subscript": (EXPR, "expr", "jb['KEY']"),
    "path_query_first": (EXPR, "expr", "jsonb_path_query_first(jb, '$.KEY')"),
    "path_exists_op": (EXPR, "expr", "jb @? '$.KEY'"),
    "path_match_op": (EXPR, "expr", "jb @@ '$.KEY == 1'"),
    "json_value": (EXPR, "expr", "JSON_VALUE(jb, '$.KEY')"),
    "json_query": (EXPR, "expr", "JSON_QUERY(jb, '$.KEY')"),
    "json_exists": (EXPR, "expr", "JSON_EXISTS(jb, '$.KEY')"),
    "json_table": (FROM, "from",
                   "JSON_TABLE(t.jb, '$' PASSING g AS g COLUMNS (k int PATH '$.KEY')) x"),
    "contains": (EXPR, "expr", "jb @> '{\"KEY\": 1}'"),
    "to_record": (FROM, "from",
                  "jsonb_to_record(CASE WHEN g > 0 THEN t.jb END) AS r(KEY int)"),
}


def measure_reads(configs, rows, key, case, target_ms, runs):
    """{(config, row): (ms per call, reps)}, the points taking turns."""
    script, var, template = READS[case]
    points = []
    for cfg in configs:
        table = cfg.table("s", shared=True)
        for row in rows:
            variables = {"tab": table, "id": row, var: template.replace("KEY", key)}
            points.append((cfg, row, variables,
                           bench_s.sized_reps(cfg, script, variables, target_ms, 1000)))
    best = {}
    for _ in range(runs):
        for cfg, row, variables, reps in points:
            lat = db.pgbench(script, dict(variables, reps=reps), 1, cfg.session_options)[0]
            best[(cfg.name, row)] = min(best.get((cfg.name, row), lat), lat)
    return {(cfg.name, row): (best[(cfg.name, row)] / reps, reps)
            for cfg, row, _, reps in points}


def measure_assign(cfg, row, key, transactions):
    """ms per assignment and WAL bytes per assignment on one row."""
    table = cfg.table("s", shared=True)
    before = db.value("SELECT pg_current_wal_insert_lsn()")
    ms = db.pgbench(ASSIGN, {"tab": table, "id": row, "key": key}, 1,
                    cfg.session_options, transactions=transactions)[0]
    wal = db.value(f"SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '{before}')")
    return ms, float(wal) / transactions


def run(configs, results, args, log):
    missing = [c for c in configs
               if db.value(f"SELECT to_regclass('{c.table('s', shared=True)}') IS NULL") == "t"]
    if missing:
        bench_s.setup(missing, log)
    sizes = {}
    for cfg in configs:
        t = cfg.table("s", shared=True)
        for row_id, stored, raw, form in db.query(
                f"SELECT id, s.stored_size, s.raw_size, s.form FROM {t}, "
                f"jsonb_toaster_storage(jb) s ORDER BY id"):
            sizes[(cfg.name, int(row_id))] = (int(stored), int(raw), form)
    rows = bench_s.rows_to_measure(args.q_step)
    log(f"Q: {len(READS)} syntaxes x {len(KEYS)} keys x {len(rows)} rows x "
        f"{len(configs)} configurations")
    for case in READS:
        for key in KEYS:
            points = measure_reads(configs, rows, key, case, args.q_target_ms, args.q_runs)
            for (name, row), (ms, reps) in points.items():
                stored, raw, form = sizes[(name, row)]
                results.add("Q", name, case, "ms_per_call", ms, key=key, row=row,
                            stored_size=stored, raw_size=raw, form=form, reps=reps)
        log(f"Q: {case} done")
    for key in KEYS:
        for row in rows:
            for cfg in configs:
                ms, wal = measure_assign(cfg, row, key, args.q_assignments)
                stored, raw, form = sizes[(cfg.name, row)]
                results.add("Q", cfg.name, "subscript_assign", "ms_per_call", ms, key=key,
                            row=row, stored_size=stored, raw_size=raw, form=form)
                results.add("Q", cfg.name, "subscript_assign", "wal_bytes_per_row", wal,
                            key=key, row=row, stored_size=stored, raw_size=raw, form=form)
    log("Q: subscript_assign done")
