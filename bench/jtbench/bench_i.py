"""Benchmark I: IMDB-like documents.

Documents come from bench/imdb_gen.py (deterministic, seeded).  After the
load, each document gets a size bucket from its storage form and stored
size (as reported by jsonb_toaster_storage, which reads no TOAST):

  bucket = form rank * 10 + decade of the stored size

so that plain documents, compressed inline ones, TOASTed ones and
skeletons (stored by the toaster) of each size decade are timed
separately.  For each query of docs/benchmarks.md the mean time per access over
a bucket is measured with a pgbench script (bench/I/<query>.sql), next to
the floor of visiting the same rows without reading their documents
(bench/I/floor.sql).

A toaster table stores documents its own way, so its buckets differ from
its baseline's; each of its documents also gets the bucket the baseline
gave it (base_bucket, seen as bucket through the view <table>_by_base),
and the toaster configuration is timed on those buckets too, to compare
the two on the same documents.  Each storage form is also timed as a
whole (form, seen as bucket through the view <table>_by_form), which is
what the toaster's I target compares: skeletons against plain documents;
those times are net of the query's fixed cost (the same query on no rows).

The access alone: for the three short keys of the I target, each form is
also timed with the access evaluated REPEAT_FEW and REPEAT_MANY times per
document (bench/I/repeated.sql); the difference, divided by the extra
accesses, is the cost of one access without the visit of the row, which
differs between forms (a skeleton row is as wide as the largest plain
documents, and fewer of them share a page).
"""

import os

from . import db
from .configs import forms_text

QUERIES = {
    "jb->'id'": "id",
    "jb->'imdb_id'": "imdb_id",
    "jb->'height'": "height",
    "jb->'roles'": "roles",
    "jb->'roles'->0": "roles_0",
    "jsonb_array_length(jb->'roles')": "roles_length",
    # whole-document consumers (and jsonb_typeof, which needs the root only)
    "jb::text": "text",
    "jsonb_pretty(jb)": "pretty",
    "jsonb_each(jb)": "each",
    "jsonb_object_keys(jb)": "object_keys",
    "jb = jb": "equal",
    "jsonb_hash(jb)": "hash",
    "jsonb_typeof(jb)": "typeof",
}
FLOOR = "floor"
HERE = os.path.dirname(__file__)
FORMS = {"plain": 1, "compressed": 2, "external": 3, "skeleton": 4}
# The keys of the I target, timed as repeated accesses (bench/I/repeated.sql)
REPEATED = {"jb->'id'": "id", "jb->'imdb_id'": "imdb_id", "jb->'height'": "height"}
# 20 extra accesses per document: with 5, the difference between the two
# timings was within the machine's run-to-run noise for the fastest forms.
REPEAT_FEW, REPEAT_MANY = 1, 21
# Buckets with fewer documents are counted but not timed: the query's
# fixed cost would dominate a per-document figure.
MIN_DOCUMENTS = 5


def bucket_label(bucket):
    if bucket < 10:  # a whole storage form (the view <table>_by_form)
        return f"{ {v: k for k, v in FORMS.items()}[bucket]}, all sizes"
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
    count = max(100, int(40000 * args.scale))
    data = db.generated_data(args, log, "I", "documents", "imdb_gen.py", count)
    # Standard tables first: a toaster table is also bucketed as its
    # baseline stores the same documents (base_bucket), so that the two can
    # be compared document for document.
    loaded = {}  # owner configuration -> its table
    for cfg in sorted(configs, key=lambda c: c.toaster):
        t = cfg.table("imdb", shared=True)
        owner = cfg.owner()
        if owner.name in loaded:
            continue
        base_t = loaded.get(owner.baseline) if owner.toaster else None
        log(f"I: loading {t}")
        owner.execute(owner.create_table(
            t, f"n int PRIMARY KEY, {owner.column()}, bucket int, base_bucket int, form int"))
        db.copy_in(f"{t} (n, jb)", data, owner.session_options)
        owner.execute(f"""
UPDATE {t} SET bucket = (
  SELECT CASE s.form WHEN 'plain' THEN 10 WHEN 'compressed' THEN 20
                     WHEN 'external' THEN 30 ELSE 40 END
         + floor(log(s.stored_size))::int
  FROM jsonb_toaster_storage(jb) s);
UPDATE {t} SET form = bucket / 10;
CREATE INDEX ON {t} (form);
CREATE VIEW {t}_by_form AS SELECT n, jb, form AS bucket FROM {t};
""" + (f"""
UPDATE {t} SET base_bucket = b.bucket FROM {base_t} b WHERE b.n = {t}.n;
CREATE INDEX ON {t} (base_bucket);
CREATE VIEW {t}_by_base AS SELECT n, jb, base_bucket AS bucket FROM {t};
""" if base_t else "") + f"""
CREATE INDEX ON {t} (bucket);
VACUUM FULL {t};
VACUUM ANALYZE {t};
""")
        loaded[owner.name] = t
        forms = owner.check_storage(t)
        log(f"I: {t}: " + forms_text(forms))


def has_base_buckets(cfg):
    return db.value(f"SELECT to_regclass('{cfg.table('imdb', shared=True)}_by_base') "
                    f"IS NOT NULL") == "t"


def run(configs, results, args, log):
    setup(configs, args, log)
    # Each configuration is measured on the buckets of its own storage;
    # a toaster configuration also on those of its baseline (the view
    # <table>_by_base), to compare the same documents.  And every
    # configuration on each storage form as a whole (the view
    # <table>_by_form): thousands of documents per query, so the query's
    # fixed cost is negligible in the per-document time.
    plans = []  # (config, table or view, count metric, time metric)
    for cfg in configs:
        t = cfg.table("imdb", shared=True)
        plans.append((cfg, t, "count", "us_per_access"))
        plans.append((cfg, t + "_by_form", "count_by_form", "us_per_access_by_form"))
        if cfg.toaster and has_base_buckets(cfg):
            plans.append((cfg, t + "_by_base", "count_on_base", "us_per_access_on_base"))
    for cfg, t, count_metric, _ in plans:
        for bucket, n, stored in db.query(
                f"SELECT bucket, count(*), avg(s.stored_size)::bigint "
                f"FROM {t}, jsonb_toaster_storage(jb) s "
                f"GROUP BY bucket ORDER BY bucket"):
            results.add("I", cfg.name, "documents", count_metric, int(n),
                        bucket=int(bucket), bucket_label=bucket_label(int(bucket)),
                        mean_stored_size=int(stored))
    buckets = sorted({r["bucket"] for r in results.select(bench="I", metric="count")} |
                     {r["bucket"] for r in results.select(bench="I", metric="count_on_base")} |
                     {r["bucket"] for r in results.select(bench="I", metric="count_by_form")})
    log(f"I: measuring {len(buckets)} buckets x {len(QUERIES) + 1} queries x {len(plans)} "
        f"configurations and bucketings")
    for bucket in buckets:
        for case, script in list(QUERIES.items()) + [("scan floor", FLOOR)]:
            for cfg, t, count_metric, time_metric in plans:
                rows = results.select(bench="I", config=cfg.name, metric=count_metric,
                                      bucket=bucket)
                if not rows:
                    continue
                n = rows[0]["value"]
                if n < MIN_DOCUMENTS:
                    continue
                path = os.path.join(HERE, "..", "I", script + ".sql")
                variables = {"tab": t, "bucket": bucket}
                db.pgbench(path, variables, 1, cfg.session_options)  # warm up
                lat = db.pgbench(path, variables, args.i_transactions, cfg.session_options)
                extra = {}
                ms = db.median(lat)
                if time_metric == "us_per_access_by_form":
                    # A pgbench run is a new session, whose first query pays
                    # for loading catalog caches (about 2 ms): take away the
                    # time of the same query on no rows (bucket 0).
                    fixed = db.median(db.pgbench(path, dict(variables, bucket=0),
                                                 args.i_transactions, cfg.session_options))
                    extra = {"ms": ms, "fixed_ms": fixed}
                    ms = max(0.0, ms - fixed)
                results.add("I", cfg.name, case, time_metric,
                            ms * 1000.0 / n, bucket=bucket,
                            bucket_label=bucket_label(bucket), documents=n,
                            mean_stored_size=rows[0]["mean_stored_size"], **extra)
        log(f"I: bucket {bucket_label(bucket)} done")
    measure_repeated(plans, results, args, log)


def measure_repeated(plans, results, args, log):
    """The cost of one access alone, per storage form (see the docstring)."""
    path = os.path.join(HERE, "..", "I", "repeated.sql")
    for cfg, t, count_metric, _ in plans:
        if count_metric != "count_by_form":
            continue
        for row in results.select(bench="I", config=cfg.name, metric=count_metric):
            n, form = row["value"], row["bucket"]
            if n < MIN_DOCUMENTS:
                continue
            for case, key in REPEATED.items():
                # the two timings alternate, so that a change in the
                # machine's load weighs on both alike
                lat = {REPEAT_FEW: [], REPEAT_MANY: []}
                for run in range(args.i_transactions + 1):
                    for reps in (REPEAT_FEW, REPEAT_MANY):
                        variables = {"tab": t, "bucket": form, "key": key, "reps": reps}
                        ms = db.pgbench(path, variables, 1, cfg.session_options)
                        if run > 0:  # the first is a warm-up
                            lat[reps] += ms
                ms = {reps: db.median(v) for reps, v in lat.items()}
                extra = ms[REPEAT_MANY] - ms[REPEAT_FEW]
                results.add("I", cfg.name, case, "us_per_access_repeated",
                            max(0.0, extra) * 1000.0 / (n * (REPEAT_MANY - REPEAT_FEW)),
                            bucket=form, bucket_label=bucket_label(form), documents=n,
                            mean_stored_size=row["mean_stored_size"],
                            ms_few=ms[REPEAT_FEW], ms_many=ms[REPEAT_MANY],
                            reps_few=REPEAT_FEW, reps_many=REPEAT_MANY)
        log(f"I: repeated accesses on {t} done")
