"""Benchmark C: what storing documents costs.

For each dataset and storing configuration (stock-X and toaster-X; the
partial configurations store as stock does and are skipped), a table
(id int, name text, jb jsonb) is loaded and measured:

  documents          rows
  total_bytes        pg_total_relation_size (heap, TOAST, their indexes)
  heap_bytes         pg_relation_size of the heap
  toast_bytes        pg_total_relation_size of the TOAST relation
  toast_values       TOAST values the relation holds (distinct chunk_id)
  toasted_documents  documents stored in TOAST (external, or skeletons with
                     chunks: an inline skeleton is in the row)
  other_column_update  WAL bytes per row of UPDATE .. SET id = id + 1, which
                     leaves the document alone (after a CHECKPOINT, so that
                     every configuration pays the same full-page images)
  load_ms            the time of the load itself (the COPY or INSERT, as the
                     server reports it to psql's \timing): the faster of
                     LOAD_ROUNDS loads, the configurations of a dataset
                     taking turns

The trade a column's inline budget controls (--c-budgets, for R, M, I and
U's documents): for each budget (toaster_options = 'inline_budget=N'), case
"<dataset> budget", with a field "budget": total_bytes, heap_bytes,
other_column_update as above, and short_field_us, the time of reading one
short field (R: username, M: leader, I: imdb_id, U: the key "1") per row, every row read
in one query, the best of three; stock's figures on the same documents
have no budget.

Datasets (case): real published JSON from Debian packages (bench/C/
corpora.py: botocore, mdn_bcd, iso_codes; one document per file), and the
documents of S, I, U, R and M as those benchmarks generate them.
"""

import os
import subprocess
import sys

from . import bench_m, bench_r, bench_s, bench_u, db

HERE = os.path.dirname(__file__)
CORPORA = os.path.join(HERE, "..", "C", "corpora.py")
REAL = ["botocore", "mdn_bcd", "iso_codes"]
GENERATED = ["S", "I", "U", "R", "M"]
# the datasets of the inline budget's trade, and the short field read
BUDGET_FIELDS = {"R": "jb->>'username'", "M": "jb->>'leader'", "I": "jb->>'imdb_id'",
                 "U": "jb->>'1'"}
SHORT_FIELD = os.path.join(HERE, "..", "C", "short_field.sql")
LOAD_ROUNDS = 2


def corpora(args, log):
    """{corpus: (copy file, description)} of the real datasets."""
    out = subprocess.run([sys.executable, CORPORA, "--work", args.work],
                         check=True, capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        name, package, version, licence, files, nbytes = line.split("\t")
        log(f"C: {name}: {files} files, {int(nbytes) / 2**20:.1f} MB, "
            f"from {package} {version} ({licence})")
        found[name] = (os.path.join(args.work, f"corpus-{name}.copy"),
                       f"{package} {version}, {licence}")
    return found


def load_statement(table, case, args, log, real):
    """The statement (or psql's \\copy) that loads dataset case into table."""
    if case in real:
        return f"\\copy {table} (id, name, jb) FROM '{real[case][0]}'"
    if case == "S":
        return bench_s.GENERATE.format(table=table).replace(
            "INSERT INTO " + table, f"INSERT INTO {table} (id, jb)")
    if case == "I":
        data = db.generated_data(args, log, "I", "documents", "imdb_gen.py",
                                 max(100, int(40000 * args.scale)))
        return f"\\copy {table} (id, jb) FROM '{data}'"
    if case == "U":
        rows = max(100, int(10000 * args.scale))
        return (f"INSERT INTO {table} (id, jb) SELECT i, {bench_u.DOC} "
                f"FROM generate_series(1, {rows}) i;")
    if case == "R":
        data = db.generated_data(args, log, "R", "users", "R/users_gen.py",
                                 bench_r.rows_for(args.scale))
        return f"\\copy {table} (id, jb) FROM '{data}'"
    if case == "M":
        data = db.generated_data(args, log, "M", "records", "M/marc_gen.py",
                                 bench_m.rows_for(args.scale))
        # the record's instance_id goes to name
        return f"\\copy {table} (id, name, jb) FROM '{data}'"
    raise ValueError(f"unknown dataset {case}")


def load(cfg, table, case, args, log, real, budget=None):
    """Create and load table with dataset case; the load's time in ms."""
    cfg.execute(cfg.create_table(table, f"id int, name text, {cfg.column()}"))
    if budget is not None:
        cfg.execute(f"ALTER TABLE {table} ALTER COLUMN jb SET "
                    f"(toaster_options = 'inline_budget={budget}');")
    ms = db.timed(load_statement(table, case, args, log, real),
                  options=cfg.session_options)
    cfg.execute(f"VACUUM ANALYZE {table};")
    return ms


def measure(cfg, table):
    toast = db.value(f"SELECT reltoastrelid::regclass FROM pg_class "
                     f"WHERE oid = '{table}'::regclass")
    m = {
        "documents": int(db.value(f"SELECT count(*) FROM {table}")),
        "total_bytes": int(db.value(f"SELECT pg_total_relation_size('{table}')")),
        "heap_bytes": int(db.value(f"SELECT pg_relation_size('{table}')")),
        "toast_bytes": int(db.value(f"SELECT pg_total_relation_size('{toast}')")),
        "toast_values": int(db.value(f"SELECT count(DISTINCT chunk_id) FROM {toast}")),
        "toasted_documents": int(db.value(
            f"SELECT count(*) FROM {table}, jsonb_toaster_storage(jb) s "
            f"WHERE s.form = 'external' OR (s.form = 'skeleton' AND s.chunks > 0)")),
    }
    db.execute("CHECKPOINT")
    before = db.value("SELECT pg_current_wal_insert_lsn()")
    cfg.execute(f"UPDATE {table} SET id = id + 1;")
    wal = float(db.value(f"SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '{before}')"))
    m["other_column_update"] = wal / max(1, m["documents"])
    return m


def run(configs, results, args, log):
    storing = [c for c in configs if c.data_of == c.name]
    real = corpora(args, log)
    for case in REAL + GENERATED:
        tables = {cfg.name: f"c_{case.lower()}_{cfg.name.replace('-', '_')}"
                  for cfg in storing}
        load_ms = {cfg.name: [] for cfg in storing}
        for round_no in range(LOAD_ROUNDS):
            for cfg in storing:
                table = tables[cfg.name]
                log(f"C: loading {case} into {table}")
                load_ms[cfg.name].append(load(cfg, table, case, args, log, real))
                if round_no < LOAD_ROUNDS - 1:
                    cfg.execute(f"DROP TABLE {table};")
        for cfg in storing:
            table = tables[cfg.name]
            m = dict(measure(cfg, table), load_ms=min(load_ms[cfg.name]))
            for metric, value in m.items():
                results.add("C", cfg.name, case, metric, value,
                            source=real[case][1] if case in real else "generated")
            cfg.execute(f"DROP TABLE {table};")
        log(f"C: {case} done")
    budgets = [int(b) for b in args.c_budgets.split(",") if b]
    if budgets:
        run_budgets(storing, results, args, log, budgets, real)


def short_field_us(cfg, table, expr, rows):
    """Microseconds per row of reading one short field of every row."""
    variables = {"tab": table, "expr": expr}
    db.pgbench(SHORT_FIELD, variables, 1, cfg.session_options)  # warm up
    return min(db.pgbench(SHORT_FIELD, variables, 3, cfg.session_options)) * 1000 / max(1, rows)


def run_budgets(storing, results, args, log, budgets, real):
    for case, expr in BUDGET_FIELDS.items():
        for cfg in storing:
            for budget in (budgets if cfg.toaster else [None]):
                table = f"c_budget_{case.lower()}_{cfg.name.replace('-', '_')}"
                load(cfg, table, case, args, log, real, budget)
                m = measure(cfg, table)
                m["short_field_us"] = short_field_us(cfg, table, expr, m["documents"])
                for metric in ("total_bytes", "heap_bytes", "other_column_update",
                               "short_field_us"):
                    results.add("C", cfg.name, f"{case} budget", metric, m[metric],
                                budget=budget)
                log(f"C: {case}, {cfg.name}, budget {budget}: "
                    f"{m['other_column_update']:.0f} B WAL/row, "
                    f"{m['short_field_us']:.2f} us/read")
                cfg.execute(f"DROP TABLE {table};")
