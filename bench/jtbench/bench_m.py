"""Benchmark M: filtering records on a short field (MARC-like).

N catalogue records (100,000 at scale 1) from bench/M/marc_gen.py: an
`instance_id` uuid column and a `content` jsonb document with a short
`leader` string and a `fields` array of 20-60 entries (2-10 KB per
record).  Three sequential-scan filters, each as EXPLAIN (ANALYZE, BUFFERS,
TIMING OFF, SERIALIZE text) on a table with no index:

  instance_id = $1                                     the floor
  content->>'leader' = $1                              a short field
  content #>> '{fields,33,999,subfields,0,i}' = $1     deep in the array

with $1 taken from the data (the leader and instance_id of the middle
record, the item id of the first record whose 34th field is its 999
field), so each filter finds a few rows.  One warm-up each, then
--rm-runs rounds in which the filters of a configuration run one after
the other: a ratio compares runs made at the same time, not minutes apart
on a machine whose speed drifts.  The buffers of the last run and the
median time of each filter; parallel query off.
The headline: time (and buffers) of the leader filter divided by the floor
of the same configuration; the time ratio is the median of the rounds'
ratios, each of two runs made one after the other, so that the machine's
speed drifting over the minutes of a run does not enter it.  A reference point: the floor and the leader
filter on a copy of the rows whose document holds only the leader (a small
jsonb in the row, read by the builtin).
"""


from . import db
from .configs import forms_text, shared_tables

SERIAL = "-c max_parallel_workers_per_gather=0"

FLOOR = "instance_id = $1"
LEADER = "content->>'leader' = $1"
PATH = "content #>> '{fields,33,999,subfields,0,i}' = $1"
FILTERS = [FLOOR, LEADER, PATH]


def rows_for(scale):
    return max(1000, int(100000 * scale))


def setup(configs, args, log):
    count = rows_for(args.scale)
    data = db.generated_data(args, log, "M", "records", "M/marc_gen.py", count)
    for t, owner in shared_tables(configs, "marc"):
        log(f"M: loading {t}")
        owner.execute(owner.create_table(
            t, f"id int, instance_id uuid, {owner.column('content')}", "content"))
        db.copy_in(f"{t} (id, instance_id, content)", data, owner.session_options)
        owner.execute(f"VACUUM ANALYZE {t};")
        forms = owner.check_storage(t, "content")
        log(f"M: {t}: " + forms_text(forms))
    return count


def parameters(cfg, count):
    """The $1 of each filter, read from the data with the builtins."""
    t = cfg.table("marc", shared=True)
    off = "-c jsonb_toaster.override_builtins=off"
    leader, instance_id = db.query(
        f"SELECT content->>'leader', instance_id FROM {t} WHERE id = {count // 2 + 1}", off)[0]
    item = db.value(
        f"SELECT coalesce(min(content #>> '{{fields,33,999,subfields,0,i}}'), 'none') "
        f"FROM {t} WHERE id = (SELECT min(id) FROM {t} "
        f"WHERE content #>> '{{fields,33,999,subfields,0,i}}' IS NOT NULL)", off)
    return {FLOOR: instance_id, LEADER: leader, PATH: item}


def run(configs, results, args, log):
    nrows = setup(configs, args, log)
    params = parameters(configs[0], nrows)
    for cfg in configs:
        t = cfg.table("marc", shared=True)
        forms = cfg.check_storage(t, "content")
        for form, n in forms.items():
            results.add("M", cfg.name, "table", "rows", n, form=form)
        heap, toast = db.relation_sizes(t, pages=True)
        results.add("M", cfg.name, "table", "heap_pages", heap, rows=nrows)
        results.add("M", cfg.name, "table", "toast_pages", toast, rows=nrows)
    for cfg in configs:
        t = cfg.table("marc", shared=True)
        opts = cfg.session_options + " " + SERIAL
        queries = {flt: query_for(t, flt, params) for flt in FILTERS}
        runs = interleaved_runs(queries, opts, args.rm_runs)
        for flt, query in queries.items():
            found = db.value(f"SELECT count(*) FROM ({query}) q", opts)
            buffers, ms = runs[flt][-1][0], db.median([r[1] for r in runs[flt]])
            results.add("M", cfg.name, flt, "buffers", buffers, rows=nrows,
                        found=int(found), parameter=params[flt])
            results.add("M", cfg.name, flt, "ms", ms, rows=nrows,
                        rounds=[r[1] for r in runs[flt]])
            log(f"M: {flt} on {cfg.name}: {buffers} buffers, {ms:.0f} ms, {found} rows")
    reference(configs[0], params, results, args, log)
    dropped = {cfg.table("marc", shared=True) for cfg in configs}
    db.execute("".join(f"DROP TABLE {t};" for t in sorted(dropped)))


def query_for(table, flt, params):
    value = params[flt].replace("'", "''")
    return f"SELECT id, instance_id FROM {table} WHERE " + flt.replace("$1", f"'{value}'")


def interleaved_runs(queries, options, rounds):
    """EXPLAIN runs of each query: one warm-up each, then rounds in which
    every query runs once, in turn.  {key: [(buffers, ms), ...]}"""
    for query in queries.values():
        db.explain(query, options)
    runs = {key: [] for key in queries}
    for _ in range(rounds):
        for key, query in queries.items():
            runs[key].append(db.explain(query, options))
    return runs


def reference(cfg, params, results, args, log):
    """A reference point for the leader target: the floor and the leader
    filter on the same rows with a document that holds only the leader, a
    small jsonb stored in the row as it is (no TOAST, no skeleton), read
    by the builtin ->>: what a jsonb field costs at best."""
    src = cfg.table("marc", shared=True)
    t = "marc_reference"
    off = "-c jsonb_toaster.override_builtins=off " + SERIAL
    db.execute(f"DROP TABLE IF EXISTS {t}; CREATE TABLE {t} AS SELECT id, instance_id, "
               f"jsonb_build_object('leader', content->'leader') AS content FROM {src}; "
               f"VACUUM ANALYZE {t};", off)
    runs = interleaved_runs({flt: query_for(t, flt, params) for flt in (FLOOR, LEADER)},
                            off, args.rm_runs)
    for flt, fruns in runs.items():
        ms = db.median([r[1] for r in fruns])
        results.add("M", "reference", flt, "ms", ms, buffers=fruns[-1][0])
        log(f"M: {flt} on {t}: {ms:.0f} ms")
    db.execute(f"DROP TABLE {t};")
