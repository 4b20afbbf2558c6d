"""Benchmark I: IMDB-like documents.

Documents come from bench/imdb_gen.py (deterministic, seeded).  After the
load, each document gets a size bucket from its storage form and stored
size (as reported by jsonb_toaster_storage, which reads no TOAST):

  bucket = form rank * 10 + decade of the stored size

so that plain documents, compressed inline ones and TOASTed ones of each
size decade are timed separately.  For each query of BENCHMARKS.md the mean
time per access over a bucket is measured with a pgbench script
(bench/I/<query>.sql), next to the floor of visiting the same documents
without reading them (bench/I/floor.sql).
"""

import os
import subprocess
import sys

from . import db

QUERIES = {
    "jb->'id'": "id",
    "jb->'imdb_id'": "imdb_id",
    "jb->'height'": "height",
    "jb->'roles'": "roles",
    "jb->'roles'->0": "roles_0",
    "jsonb_array_length(jb->'roles')": "roles_length",
}
FLOOR = "floor"
HERE = os.path.dirname(__file__)
FORMS = {"plain": 1, "compressed": 2, "external": 3}
# Buckets with fewer documents are counted but not timed: the query's
# fixed cost would dominate a per-document figure.
MIN_DOCUMENTS = 5


def bucket_label(bucket):
    form = {v: k for k, v in FORMS.items()}[bucket // 10]
    decade = bucket % 10
    lo = 10 ** decade

    def fmt(n):
        for div, u in [(10 ** 6, "MB"), (10 ** 3, "kB"), (1, "B")]:
            if n >= div:
                return f"{n // div}{u}"
        return f"{n}B"
    return f"{form} {fmt(lo)}-{fmt(lo * 10)}"


def setup(configs, args, log):
    data = os.path.join(args.work, "imdb.copy")
    count = max(100, int(40000 * args.scale))
    if not os.path.exists(data):
        log(f"I: generating {count} documents (seed {args.seed})")
        with open(data, "w") as out:
            subprocess.run([sys.executable, os.path.join(HERE, "..", "imdb_gen.py"),
                            "--count", str(count), "--seed", str(args.seed)],
                           stdout=out, check=True)
    loaded = set()
    for cfg in configs:
        t = cfg.table("imdb", shared=True)
        if t in loaded:
            continue
        loaded.add(t)
        log(f"I: loading {t}")
        db.execute(f"DROP TABLE IF EXISTS {t};"
                   f"CREATE TABLE {t} (n int PRIMARY KEY, {cfg.column()}, bucket int);")
        db.copy_in(f"{t} (n, jb)", data)
        db.execute(f"""
UPDATE {t} SET bucket = (
  SELECT CASE s.form WHEN 'plain' THEN 10 WHEN 'compressed' THEN 20 ELSE 30 END
         + floor(log(s.stored_size))::int
  FROM jsonb_toaster_storage(jb) s);
CREATE INDEX ON {t} (bucket);
VACUUM FULL {t};
VACUUM ANALYZE {t};
""")


def run(configs, results, args, log):
    setup(configs, args, log)
    # Buckets present in every configuration (lz4 and pglz bucket alike in
    # most, not all, cases); each configuration is measured on its own.
    for cfg in configs:
        t = cfg.table("imdb", shared=True)
        for bucket, n, stored in db.query(
                f"SELECT bucket, count(*), avg(pg_column_size(jb))::bigint FROM {t} "
                f"GROUP BY bucket ORDER BY bucket"):
            results.add("I", cfg.name, "documents", "count", int(n),
                        bucket=int(bucket), bucket_label=bucket_label(int(bucket)),
                        mean_stored_size=int(stored))
    buckets = sorted({r["bucket"] for r in results.select(bench="I", metric="count")})
    log(f"I: measuring {len(buckets)} buckets x {len(QUERIES) + 1} queries x {len(configs)} configurations")
    for bucket in buckets:
        for case, script in list(QUERIES.items()) + [("scan floor", FLOOR)]:
            for cfg in configs:
                rows = results.select(bench="I", config=cfg.name, metric="count", bucket=bucket)
                if not rows:
                    continue
                n = rows[0]["value"]
                if n < MIN_DOCUMENTS:
                    continue
                path = os.path.join(HERE, "..", "I", script + ".sql")
                variables = {"tab": cfg.table("imdb", shared=True), "bucket": bucket}
                db.pgbench(path, variables, 1, cfg.session_options)  # warm up
                lat = db.pgbench(path, variables, args.i_transactions, cfg.session_options)
                results.add("I", cfg.name, case, "us_per_access",
                            db.median(lat) * 1000.0 / n, bucket=bucket,
                            bucket_label=bucket_label(bucket), documents=n,
                            mean_stored_size=rows[0]["mean_stored_size"])
        log(f"I: bucket {bucket_label(bucket)} done")
