"""Benchmark R: read amplification on projections.

N users (100,000 at scale 1) from bench/R/users_gen.py: a few short fields
(name, username, email, login {last, count}) next to a 5,000-character bio
that does not compress, so every document is TOASTed.  Each query of
the benchmark runs as EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SERIALIZE
text), which counts the shared buffers that executing the query and
turning its result into text touch (a returned TOASTed value is fetched
while serialising); one warm-up, then the buffers of the last run and the
median time of --rm-runs runs.  Parallel query is off in these sessions, so
one process does all the work on every configuration.

The headline: buffers of the projection of three short fields, without
`data`, divided by the heap pages of the table.  Reading those fields from
the row alone costs about one access per heap page; standard TOAST fetches
every document for them.
"""


from . import db
from .configs import forms_text, shared_tables

SERIAL = "-c max_parallel_workers_per_gather=0"

QUERIES = [
    ("id, data", "SELECT id, data FROM {t}"),
    ("+ data->>'username'", "SELECT id, data, data->>'username' FROM {t}"),
    ("+ data->'login'->>'last'",
     "SELECT id, data, data->>'username', data->'login'->>'last' FROM {t}"),
    ("three short fields, no data",
     "SELECT id, (data->'login'->>'count')::int, data->'login'->>'last', "
     "data->>'username' FROM {t}"),
]
HEADLINE = "three short fields, no data"


def rows_for(scale):
    return max(1000, int(100000 * scale))


def setup(configs, args, log):
    count = rows_for(args.scale)
    data = db.generated_data(args, log, "R", "users", "R/users_gen.py", count)
    for t, owner in shared_tables(configs, "users"):
        log(f"R: loading {t}")
        owner.execute(owner.create_table(t, f"id int PRIMARY KEY, {owner.column('data')}",
                                         "data"))
        db.copy_in(f"{t} (id, data)", data, owner.session_options)
        owner.execute(f"VACUUM ANALYZE {t};")
        forms = owner.check_storage(t, "data")
        log(f"R: {t}: " + forms_text(forms))
    return count


def run(configs, results, args, log):
    nrows = setup(configs, args, log)
    for cfg in configs:
        t = cfg.table("users", shared=True)
        heap, toast = db.relation_sizes(t, pages=True)
        forms = cfg.check_storage(t, "data")
        results.add("R", cfg.name, "table", "heap_pages", heap, rows=nrows)
        results.add("R", cfg.name, "table", "toast_pages", toast, rows=nrows)
        for form, n in forms.items():
            results.add("R", cfg.name, "table", "rows", n, form=form)
    for case, sql in QUERIES:
        for cfg in configs:
            t = cfg.table("users", shared=True)
            opts = cfg.session_options + " " + SERIAL
            query = sql.format(t=t)
            db.explain(query, opts)  # warm-up
            runs = [db.explain(query, opts) for _ in range(args.rm_runs)]
            buffers, ms = runs[-1][0], db.median([r[1] for r in runs])
            results.add("R", cfg.name, case, "buffers", buffers, rows=nrows)
            results.add("R", cfg.name, case, "ms", ms, rows=nrows)
            log(f"R: {case} on {cfg.name}: {buffers} buffers, {ms:.0f} ms")
    # the same answers everywhere: a digest of the projection and of the
    # documents, read in each configuration's sessions
    for cfg in configs:
        t = cfg.table("users", shared=True)
        digest = db.value(
            f"SELECT md5(string_agg(concat_ws('|', id, (data->'login'->>'count')::int, "
            f"data->'login'->>'last', data->>'username'), ',' ORDER BY id)) "
            f"|| '/' || sum(hashtextextended(data::text, 0)) FROM {t}",
            cfg.session_options)
        results.add("R", cfg.name, "answers", "digest", digest, rows=nrows)
    # the tables are large: give their memory back to the benchmarks after
    dropped = {cfg.table("users", shared=True) for cfg in configs}
    db.execute("".join(f"DROP TABLE {t};" for t in sorted(dropped)))
