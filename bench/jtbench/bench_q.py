"""Benchmark Q: short-key access through every syntax.

On S's table (rows 1..100, documents from 130 B to 3.3 MB raw), the time of
one evaluation of an access to key1 and key3 (short fields, before and
after S's long arrays) through each way PostgreSQL offers: ->, subscripts,
the jsonpath functions and operators, the SQL/JSON query functions,
JSON_TABLE, containment and jsonb_to_record; and of a subscript
assignment, with the WAL it writes.  Timed as S is: the expression
repeated in one query (bench/Q/expr.sql, bench/Q/from.sql), the repetition
count sized to take about --q-target-ms (up to a million: a short read takes
a fraction of a microsecond, the query itself about a millisecond, which
must not count), the configurations taking turns,
the fastest of --q-runs runs counting.  One results line per point:
case = the syntax, metric "ms_per_call" (and "wal_bytes_per_row" for
subscript_assign), with row, stored_size and raw_size.

Whole-document consumers (case "whole: <consumer>"): on I's documents that
each toaster configuration stores as skeletons, the consumers that need the
whole document (jb::text, jsonb_each, jsonb_pretty, jsonb_hash, jsonb_send,
equality), a sub-document one (jsonb_array_elements of jb->'roles') and
jsonb_to_record with every key, each timed on the toaster's table and on its
baseline's over the same documents (bench/Q/whole.sql, the list joined to
the table in both), the two taking turns for --q-whole-runs rounds of
--q-whole-transactions each.  Metric "ms" (the fastest round), with
"documents" and "median_ratio" (baseline time / toaster time, the median
over the rounds) on the toaster's line.
"""

import os

from . import bench_i, bench_s, db

HERE = os.path.join(os.path.dirname(__file__), "..", "Q")
EXPR = os.path.join(HERE, "expr.sql")
FROM = os.path.join(HERE, "from.sql")
ASSIGN = os.path.join(HERE, "assign.sql")
WHOLE = os.path.join(HERE, "whole.sql")

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

# whole-document consumers, on I's documents: case -> expression over t.jb
WHOLE_CONSUMERS = {
    "whole: jb::text": "length(t.jb::text)",
    "whole: jsonb_each(jb)": "(SELECT count(*) FROM jsonb_each(t.jb))",
    "whole: jsonb_pretty(jb)": "length(jsonb_pretty(t.jb))",
    "whole: jsonb_hash(jb)": "jsonb_hash(t.jb)",
    "whole: jsonb_send(jb)": "length(jsonb_send(t.jb))",
    "whole: jb = jb": "NULLIF(t.jb = t.jb, false)",
    "whole: jsonb_to_record(jb), every key":
        "(SELECT r FROM jsonb_to_record(t.jb) AS r(id text, imdb_id text, "
        "real_name text, height text, date_of_birth text, roles jsonb, "
        "biographies jsonb, trivia jsonb))",
    "whole: jsonb_array_elements(jb->'roles')":
        "(SELECT count(*) FROM jsonb_array_elements(t.jb->'roles'))",
}


MAX_REPS = 1000000


def sized_reps(cfg, script, variables, target_ms):
    """The repetition count that makes one run of script take about
    target_ms, sized again from each pilot: a pilot's time per call counts
    the query's fixed cost divided by its count, which shrinks at each."""
    reps = 3
    for _ in range(4):
        lat = db.pgbench(script, dict(variables, reps=reps), 1, cfg.session_options)[0]
        reps = int(max(1, min(MAX_REPS, target_ms / max(lat / reps, 1e-6))))
    return reps


def measure_reads(configs, rows, key, case, target_ms, runs):
    """{(config, row): (ms per call, reps)}, the points taking turns."""
    script, var, template = READS[case]
    points = []
    for cfg in configs:
        table = cfg.table("s", shared=True)
        for row in rows:
            variables = {"tab": table, "id": row, var: template.replace("KEY", key)}
            points.append((cfg, row, variables,
                           sized_reps(cfg, script, variables, target_ms)))
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
    run_whole(configs, results, args, log)


def run_whole(configs, results, args, log):
    """Whole-document consumers on I's documents (see the docstring)."""
    pairs = [(c, next(b for b in configs if b.name == c.baseline)) for c in configs
             if c.toaster and any(b.name == c.baseline for b in configs)]
    if not pairs:
        return
    if any(db.value(f"SELECT to_regclass('{c.table('imdb', shared=True)}') IS NULL") == "t"
           for c in configs):
        bench_i.setup(configs, args, log)
    for cfg, base in pairs:
        docs = f"q_whole_{cfg.name.replace('-', '_')}"
        db.execute(f"DROP TABLE IF EXISTS {docs}; "
                   f"CREATE TABLE {docs} AS SELECT n FROM {cfg.table('imdb', shared=True)} t "
                   f"WHERE (SELECT form FROM jsonb_toaster_storage(t.jb)) = 'skeleton'; "
                   f"ALTER TABLE {docs} ADD PRIMARY KEY (n); VACUUM ANALYZE {docs};")
        ndocs = int(db.value(f"SELECT count(*) FROM {docs}"))
        log(f"Q: whole-document consumers, {cfg.name} against {base.name}, "
            f"{ndocs} documents")
        for case, consumer in WHOLE_CONSUMERS.items():
            times = {cfg.name: [], base.name: []}
            for _ in range(args.q_whole_runs):
                for c in (base, cfg):
                    variables = {"tab": c.table("imdb", shared=True), "docs": docs,
                                 "consumer": consumer}
                    times[c.name].append(db.pgbench(
                        WHOLE, variables, 1, c.session_options,
                        transactions=args.q_whole_transactions)[0])
            ratios = sorted(b / t for b, t in zip(times[base.name], times[cfg.name]))
            results.add("Q", base.name, case, "ms", min(times[base.name]),
                        documents=ndocs, against=cfg.name)
            results.add("Q", cfg.name, case, "ms", min(times[cfg.name]),
                        documents=ndocs, baseline=base.name,
                        median_ratio=ratios[len(ratios) // 2])
        db.execute(f"DROP TABLE {docs};")
    log("Q: whole-document consumers done")
