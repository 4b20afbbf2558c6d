"""Benchmark Y: YCSB-style mixed load with pgbench.

Two kinds of documents, N of each (10,000 at scale 1), in tables
y_<kind>_<config> (id int PRIMARY KEY, jb jsonb):

  large    100 keys field0..field99, each a 200-character string (hex
           digits of SHA-512 hashes of the row and field numbers: they do
           not compress), about 21 kB;
  complex  100 keys k0..k99, each an object of 3 objects p0..p2 of 3
           values v0 (12 hex characters), v1 (a number), v2 (6 hex
           characters): 3 levels of nesting, about 24 kB raw, 9-11 kB
           compressed (the keys repeat).

Three workloads, the pgbench scripts of bench/Y/, each run with 1, 2, 4
and 8 clients (-j: as many threads as clients, at most one per core) for a
fixed time (-T):

  workload C   read one field by primary key (<kind>_read.sql);
  workload A   50% of that read, 50% an update of one field with jsonb_set
               (<kind>_read.sql@1 and <kind>_update.sql@1);
  10 fields    a projection of 10 fields of one document
               (<kind>_fields.sql);
  workload A floor
               workload A with an update that leaves the document as it
               was (<kind>_read.sql@1 and floor_update.sql@1): a new row
               version and its WAL, no work on the document, so the most
               workload A could reach with any storage of the documents.

Those run with pgbench's default, the simple query protocol: every
statement is parsed, analysed and planned anew, a cost the same for every
storage that narrows the ratios between them (docs/toaster.md: 6.7 us
more for workload A's update than for the floor's).  Applications mostly
prepare their statements (YCSB's JDBC client does), so workload A and its
floor also run with prepared statements (-M prepared, the scripts of bench/Y/prepared/: the same
transactions, with the keys computed in the statement, since a parameter
cannot be part of a literal; the table name, which cannot be a parameter,
is written into a copy of each script):

  workload A, prepared
  workload A floor, prepared

Rows, fields and paths are drawn uniformly at random (pgbench's random(),
seeded with --seed).  For each point: pgbench's TPS (without the initial
connection time), and latency percentiles (p50, p95, p99, in ms) and mean
from pgbench's per-transaction log (-l), for workload A also per script
(the read and the update); for workload A the WAL written per transaction
and per update (difference of pg_current_wal_insert_lsn() over the run)
and the part of it that is full-page images (pg_walinspect's
pg_get_wal_stats(), when the extension is available).

Tables are loaded once per storage: partial-X runs on stock-X's tables, as
in S, I, R and M.  Loading: the documents of a kind are generated once into
a source table whose column is STORAGE EXTERNAL (TOASTed uncompressed), and
copied into each configuration's table, which compresses them its own way
(or hands them to the toaster); then VACUUM ANALYZE, the storage check, and
a read of every document in a session of each configuration (a digest of a
few fields and of the whole documents, compared across configurations;
this also brings the table into shared buffers).  The read-only workloads
run first, on the tables as loaded.  Then every document is updated
--y-age times (10 by default; AGE: one field a round, the same in every
configuration) and the tables VACUUMed, and the documents read again in
every configuration (digest_aged): the updating workloads run on
documents edited before, as in a table in service.  Measured on documents
as loaded, the toaster's updates would find the room for their deltas
that a document edited a few times has used up (bench/Y/aging.sh, by
hand: 2.0-3.3 kB of WAL an update on documents as loaded, 7.4-13 kB
after a few rounds, and TPS 0-25% lower).  Before every workload A (and
floor) run the table is VACUUMed (autovacuum is off), and a CHECKPOINT is
taken so that each run starts from the same state: its WAL then includes the full-page images of
the pages it touches first, as a run that follows a checkpoint would.
Points are measured configuration after configuration for each client
count, so that all see about the same machine state.  The point of issue
6's target (workload A and its floor on "large" documents at 4 clients,
both protocols) is measured --y-rounds times (3 by default), the
configurations taking turns in an order reversed every round: one
2-second point after another moves by 10-20% on this shared machine, and
the report takes each configuration's median over the rounds (round 0 is
the point itself, the others record their TPS only).  The tables of a kind
are dropped before the next kind is loaded (memory stays bounded by one
kind's tables).
"""

import os
import shutil
import tempfile

from . import db
from .configs import forms_text, shared_tables

HERE = os.path.dirname(__file__)
SCRIPTS = os.path.join(HERE, "..", "Y")

KINDS = ["large", "complex"]
CLIENTS = [1, 2, 4, 8]
# issue 6's target point: workload A on "large" documents at 4 clients
TARGET_KIND = "large"
TARGET_CLIENTS = 4
ROUNDS = 3

# workload name -> [(script, weight)]; {kind} is large or complex.  The
# order within a workload gives pgbench's script numbers (0, 1).
WORKLOADS = [
    ("workload C", [("{kind}_read.sql", 1)]),
    ("workload A", [("{kind}_read.sql", 1), ("{kind}_update.sql", 1)]),
    ("10 fields", [("{kind}_fields.sql", 1)]),
    ("workload A floor", [("{kind}_read.sql", 1), ("floor_update.sql", 1)]),
    ("workload A, prepared", [("prepared/{kind}_read.sql", 1),
                              ("prepared/{kind}_update.sql", 1)]),
    ("workload A floor, prepared", [("prepared/{kind}_read.sql", 1),
                                    ("prepared/floor_update.sql", 1)]),
]
# the order in which they run: reads first, on the tables as loaded
RUN_ORDER = ["workload C", "10 fields", "workload A", "workload A floor",
             "workload A, prepared", "workload A floor, prepared"]
# workload A, and its floor, by protocol
UPDATES = "workload A"
FLOORS = {"workload A": "workload A floor",
          "workload A, prepared": "workload A floor, prepared"}
# the workloads that update: each run after a VACUUM and a CHECKPOINT, and
# its WAL measured
UPDATING = set(FLOORS) | set(FLOORS.values())
# the workloads run with prepared statements (pgbench -M prepared)
PREPARED = {"workload A, prepared", "workload A floor, prepared"}
# script names of the updating workloads, by pgbench script number
A_SCRIPTS = ["read", "update"]

KIND_TEXT = {
    "large": "100 keys of 200 characters",
    "complex": "100 keys, 3 levels of nesting",
}

WORKLOAD_TEXT = {
    "workload C": "read one field by primary key",
    "workload A": "50% read one field, 50% update one field (jsonb_set)",
    "10 fields": "projection of 10 fields of one document",
    "workload A floor": "workload A, the update leaving the document (SET id = id)",
    "workload A, prepared": "workload A's transactions as prepared statements",
    "workload A floor, prepared": "the floor's transactions as prepared statements",
}

# The documents of row i, from i alone: the same in every run.
GENERATE = {
    # two SHA-512 hashes (256 hex digits) per field, cut to 200
    "large": """
INSERT INTO {table}
SELECT i, (SELECT jsonb_object_agg('field' || j,
                    left(encode(sha512(convert_to(i || '/' || j || '/1', 'UTF8')), 'hex')
                         || encode(sha512(convert_to(i || '/' || j || '/2', 'UTF8')), 'hex'), 200))
           FROM generate_series(0, 99) j)
FROM generate_series(1, {rows}) i;
""",
    # an MD5 per (row, k, p) gives v0, v1 and v2; the document is written as
    # text, "kK": {"p0": {...}, "p1": {...}, "p2": {...}} for each K in turn
    # (one aggregate per row: a third faster than nested jsonb_object_agg)
    "complex": """
INSERT INTO {table}
SELECT i, (SELECT '{{' || string_agg(
                    CASE WHEN p = 0 THEN '"k' || k || '": {{' ELSE '' END
                    || '"p' || p || '": {{"v0": "' || substr(h, 1, 12)
                    || '", "v1": ' || ('x' || substr(h, 17, 7))::bit(28)::int
                    || ', "v2": "' || substr(h, 25, 6) || '"}}'
                    || CASE WHEN p = 2 THEN '}}' ELSE '' END, ', ' ORDER BY k, p) || '}}'
           FROM generate_series(0, 99) k, generate_series(0, 2) p,
                LATERAL md5(i || '/' || k || '/' || p) h)::jsonb
FROM generate_series(1, {rows}) i;
""",
}

# Aging, before the updating workloads: round r sets one field of every
# document, chosen from the row's id and r, to a value made from them (the
# same in every configuration, so that the documents stay comparable).
# The value is as long as workload A's (200 characters for "large", 12
# for "complex").
AGE = {
    "large": """
UPDATE {table} SET jb = jsonb_set(jb,
    ARRAY['field' || (abs(hashint4(id * 131 + {round})) % 100)],
    to_jsonb(left(encode(sha512(convert_to(id || '/age/' || {round}, 'UTF8')), 'hex')
                  || encode(sha512(convert_to(id || '/age2/' || {round}, 'UTF8')), 'hex'), 200)));
""",
    "complex": """
UPDATE {table} SET jb = jsonb_set(jb,
    ARRAY['k' || (abs(hashint4(id * 131 + {round})) % 100),
          'p' || (abs(hashint4(id * 137 + {round})) % 3), 'v0'],
    to_jsonb(left(encode(sha512(convert_to(id || '/age/' || {round}, 'UTF8')), 'hex'), 12)));
""",
}
AGE_ROUNDS = 10

# read in every configuration's session after loading: a few fields of
# every document, and every whole document
DIGEST = {
    "large": "concat_ws('|', jb->>'field0', jb->>'field57', jb->>'field99')",
    "complex": "concat_ws('|', jb->'k0'->'p0'->>'v0', jb->'k42'->'p1'->>'v1', "
               "jb #>> '{k99,p2,v2}')",
}


def rows_for(scale):
    return max(100, int(10000 * scale))


def seconds_for(args):
    if getattr(args, "y_seconds", None):
        return args.y_seconds
    return max(1, round(2 * args.scale))


def clients_for(args):
    text = getattr(args, "y_clients", None)
    if not text:
        return CLIENTS
    return [int(c) for c in str(text).split(",") if c.strip()]


def rounds_for(args):
    rounds = getattr(args, "y_rounds", None)
    return ROUNDS if rounds is None else max(1, rounds)


def read_digest(kind, table, cfg):
    """A digest of a few fields of every document of table and of every
    whole document, read in a session of configuration cfg."""
    return db.value(
        f"SELECT md5(string_agg({DIGEST[kind]}, ',' ORDER BY id)) "
        f"|| '/' || sum(hashtextextended(jb::text, 0)) FROM {table}", cfg.session_options)


def load(kind, configs, rows, results, log):
    """Load the tables of one kind (once per storage), check and record
    their storage, read them in every configuration; return the tables."""
    src = f"y_{kind}_src"
    log(f"Y: generating {rows} {kind} documents")
    db.execute(f"DROP TABLE IF EXISTS {src}; "
               f"CREATE TABLE {src} (id int, jb jsonb STORAGE EXTERNAL);"
               + GENERATE[kind].format(table=src, rows=rows))
    tables = shared_tables(configs, f"y_{kind}")
    for t, owner in tables:
        log(f"Y: loading {t}")
        owner.execute(owner.create_table(t, f"id int PRIMARY KEY, {owner.column()}")
                      + f"INSERT INTO {t} SELECT id, jb FROM {src} ORDER BY id;"
                      + f"VACUUM ANALYZE {t};")
        forms = owner.check_storage(t)
        log(f"Y: {t}: " + forms_text(forms))
    db.execute(f"DROP TABLE {src};")
    for cfg in configs:
        t = cfg.table(f"y_{kind}", shared=True)
        heap, toast = db.relation_sizes(t, pages=True)
        results.add("Y", cfg.name, "table", "heap_pages", heap, doc=kind, rows=rows)
        results.add("Y", cfg.name, "table", "toast_pages", toast, doc=kind, rows=rows)
        for form, n, stored, raw in db.query(
                f"SELECT s.form, count(*), round(avg(s.stored_size)), round(avg(s.raw_size)) "
                f"FROM {t}, jsonb_toaster_storage(jb) s GROUP BY s.form ORDER BY s.form",
                cfg.session_options):
            results.add("Y", cfg.name, "table", "rows", int(n), doc=kind, form=form,
                        mean_stored_size=int(stored), mean_raw_size=int(raw))
        results.add("Y", cfg.name, "answers", "digest", read_digest(kind, t, cfg),
                    doc=kind, rows=rows)
    return sorted(t for t, _ in tables)


def record_end_sizes(kind, configs, results):
    """The tables' sizes after every workload of a kind (a VACUUM first),
    against those after loading (case "table"): how the TOAST relation
    grew over the updates."""
    for cfg in configs:
        t = cfg.table(f"y_{kind}", shared=True)
        cfg.execute(f"VACUUM {t};")
        heap, toast = db.relation_sizes(t, pages=True)
        results.add("Y", cfg.name, "table_end", "heap_pages", heap, doc=kind)
        results.add("Y", cfg.name, "table_end", "toast_pages", toast, doc=kind)


def age(kind, configs, rounds, results, log):
    """Update every document of each table of a kind `rounds` times (one
    field a round, AGE), VACUUM, and check that every configuration reads
    the same documents after."""
    for t, owner in shared_tables(configs, f"y_{kind}"):
        log(f"Y: aging {t}: {rounds} updates of every document")
        for r in range(rounds):
            owner.execute(AGE[kind].format(table=t, round=r))
        owner.execute(f"VACUUM {t};")
    for cfg in configs:
        t = cfg.table(f"y_{kind}", shared=True)
        results.add("Y", cfg.name, "answers", "digest_aged", read_digest(kind, t, cfg),
                    doc=kind, rounds=rounds)


def walinspect():
    """Whether pg_walinspect can be used (for the full-page image bytes)."""
    try:
        db.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
        return True
    except db.DBError:
        return False


def ms(us):
    return None if us is None else us / 1000.0


def with_table(path, table, work):
    """A copy of the script at path, in work, with :tab replaced by the
    table's name (for prepared statements, where a name cannot be a
    parameter)."""
    with open(path) as f:
        text = f.read()
    copy = os.path.join(work, f"{table}_{os.path.basename(path)}")
    with open(copy, "w") as f:
        f.write(text.replace(":tab", table))
    return copy


def is_target_point(kind, workload, clients):
    return kind == TARGET_KIND and workload in UPDATING and clients == TARGET_CLIENTS


def protocol_of(workload):
    return "prepared" if workload in PREPARED else "simple"


def add_round(results, cfg, kind, workload, clients, seconds, rows, round_no, tps):
    """The TPS of one round of the target point."""
    results.add("Y", cfg.name, workload, "round_tps", tps, doc=kind,
                clients=clients, seconds=seconds, rows=rows, round=round_no)


def run_pgbench(cfg, kind, workload, scripts, clients, seconds, rows, seed, work):
    """One pgbench run of a workload on cfg's table of a kind (after a
    VACUUM and a CHECKPOINT for the updating workloads); pgbench's output,
    and the WAL insert position before it (None for the others)."""
    t = cfg.table(f"y_{kind}", shared=True)
    paths = [(os.path.join(SCRIPTS, s.format(kind=kind)), w) for s, w in scripts]
    variables = {"tab": t, "rows": rows}
    if workload in PREPARED:
        paths = [(with_table(p, t, work), w) for p, w in paths]
        del variables["tab"]
    lsn0 = None
    if workload in UPDATING:
        cfg.execute(f"VACUUM {t}; CHECKPOINT;")
        lsn0 = db.value("SELECT pg_current_wal_insert_lsn()")
    out = db.pgbench_load(paths, variables, clients, seconds,
                          cfg.session_options, log_prefix=os.path.join(work, "y_log"),
                          seed=seed, protocol=protocol_of(workload))
    return out, lsn0


def measure_round(cfg, kind, workload, scripts, clients, seconds, rows, seed, work,
                  results, round_no):
    """A further round of the target point: its TPS only."""
    out, _ = run_pgbench(cfg, kind, workload, scripts, clients, seconds, rows,
                         seed + round_no, work)
    add_round(results, cfg, kind, workload, clients, seconds, rows, round_no, out["tps"])
    return f"{out['tps']:.0f} tps"


def toast_values_table(cfg, kind):
    t = cfg.table(f"y_{kind}", shared=True)
    return db.value(f"SELECT reltoastrelid::regclass FROM pg_class WHERE oid = '{t}'::regclass")


def measure(cfg, kind, workload, scripts, clients, seconds, rows, seed, work,
            results, use_walinspect):
    # at the target point of an updating workload, the TOAST values the
    # run writes: those in the table after it that were not there before
    count_values = workload in UPDATING and is_target_point(kind, workload, clients)
    if count_values:
        toastrel = toast_values_table(cfg, kind)
        db.execute(f"DROP TABLE IF EXISTS y_values_before;"
                   f"CREATE TABLE y_values_before AS SELECT DISTINCT chunk_id FROM {toastrel};")
    out, lsn0 = run_pgbench(cfg, kind, workload, scripts, clients, seconds, rows,
                            seed, work)
    params = dict(doc=kind, clients=clients, seconds=seconds, rows=rows,
                  protocol=protocol_of(workload))
    if is_target_point(kind, workload, clients):
        add_round(results, cfg, kind, workload, clients, seconds, rows, 0, out["tps"])
    lat = out["latencies"]
    every = sorted(x for xs in lat.values() for x in xs)
    zero = sum(1 for x in every if x == 0)
    results.add("Y", cfg.name, workload, "tps", out["tps"], **params)
    results.add("Y", cfg.name, workload, "transactions", out["transactions"],
                failed=out["failed"] + out["failed_in_log"], zero_latency=zero,
                logged=len(every), **params)
    results.add("Y", cfg.name, workload, "latency_mean_ms",
                ms(sum(every) / len(every)) if every else None, **params)
    for p in (50, 95, 99):
        results.add("Y", cfg.name, workload, f"latency_p{p}_ms",
                    ms(db.percentile(every, p)), **params)
    line = (f"{out['tps']:.0f} tps, p50 {ms(db.percentile(every, 50)) or 0:.2f} ms, "
            f"p99 {ms(db.percentile(every, 99)) or 0:.2f} ms")
    if workload in UPDATING:
        lsn1 = db.value("SELECT pg_current_wal_insert_lsn()")
        wal = int(db.value(f"SELECT '{lsn1}'::pg_lsn - '{lsn0}'"))
        updates = len(lat.get(1, []))
        for n, name in enumerate(A_SCRIPTS):
            xs = sorted(lat.get(n, []))
            for p in (50, 95, 99):
                results.add("Y", cfg.name, workload, f"{name}_latency_p{p}_ms",
                            ms(db.percentile(xs, p)), **params)
        results.add("Y", cfg.name, workload, "wal_bytes", wal, updates=updates,
                    transactions=out["transactions"], **params)
        if out["transactions"]:
            results.add("Y", cfg.name, workload, "wal_bytes_per_tx",
                        wal / out["transactions"], **params)
        if updates:
            results.add("Y", cfg.name, workload, "wal_bytes_per_update", wal / updates,
                        **params)
        if count_values:
            written = int(db.value(f"SELECT count(DISTINCT chunk_id) FROM {toastrel} "
                                   f"WHERE chunk_id NOT IN (SELECT chunk_id FROM y_values_before)"))
            db.execute("DROP TABLE y_values_before;")
            results.add("Y", cfg.name, workload, "toast_values_written", written,
                        updates=updates, **params)
        fpi = db.fpi_bytes(lsn0, lsn1) if use_walinspect else None
        if fpi is not None:
            results.add("Y", cfg.name, workload, "fpi_bytes", fpi, updates=updates, **params)
        line += f", {wal / max(1, updates) / 1024:.1f} kB WAL per update"
        if fpi is not None and wal:
            line += f" ({100.0 * fpi / wal:.0f}% full-page images)"
    if zero:
        line += f", {zero} of {len(every)} logged latencies 0"
    return line


def run(configs, results, args, log):
    rows = rows_for(args.scale)
    seconds = seconds_for(args)
    clients = clients_for(args)
    rounds = getattr(args, "y_age", None)
    if rounds is None:
        rounds = AGE_ROUNDS
    target_rounds = rounds_for(args)
    workloads = dict(WORKLOADS)
    use_walinspect = walinspect()
    work = tempfile.mkdtemp(prefix="y_", dir=args.work)
    try:
        for kind in KINDS:
            tables = load(kind, configs, rows, results, log)
            aged = rounds == 0
            for workload in RUN_ORDER:
                if workload in UPDATING and not aged:
                    age(kind, configs, rounds, results, log)
                    aged = True
                for c in clients:
                    for cfg in configs:
                        line = measure(cfg, kind, workload, workloads[workload], c,
                                       seconds, rows, args.seed, work, results,
                                       use_walinspect)
                        log(f"Y: {kind}, {workload}, {c} clients, {cfg.name}: {line}")
                    if not is_target_point(kind, workload, c):
                        continue
                    for r in range(1, target_rounds):
                        for cfg in (configs[::-1] if r % 2 else configs):
                            line = measure_round(cfg, kind, workload, workloads[workload],
                                                 c, seconds, rows, args.seed, work,
                                                 results, r)
                            log(f"Y: {kind}, {workload}, {c} clients, {cfg.name}, "
                                f"round {r}: {line}")
            record_end_sizes(kind, configs, results)
            db.execute("".join(f"DROP TABLE {t};" for t in tables))
    finally:
        shutil.rmtree(work, ignore_errors=True)
