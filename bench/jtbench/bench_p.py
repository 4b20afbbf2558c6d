"""Benchmark P: a tiny update pushes rows into TOAST.

10,000 documents of about 1,960 bytes in a STORAGE EXTERNAL column stay
inline; jb || '{"bar": "baz"}' pushes them over the TOAST threshold, and
reading jb->'id' then has to visit the TOAST relation for every row.
Buffer accesses and time of EXPLAIN (ANALYZE, BUFFERS) SELECT jb->'id' are
measured before and after (median of 5 runs for time; buffers are exact).
"""

import json

from . import db


def explain(table, options):
    plan = json.loads(db.output(
        f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT jb->'id' FROM {table}",
        options))[0]
    top = plan["Plan"]
    return (top["Shared Hit Blocks"] + top["Shared Read Blocks"],
            plan["Execution Time"])


def measure(cfg, table, results, phase):
    runs = [explain(table, cfg.session_options) for _ in range(6)][1:]
    buffers = runs[-1][0]
    ms = db.median([r[1] for r in runs])
    results.add("P", cfg.name, "jb->'id'", "buffers", buffers, phase=phase)
    results.add("P", cfg.name, "jb->'id'", "ms", ms, phase=phase)
    return buffers, ms


def run(configs, results, args, log):
    nrows = max(100, int(10000 * args.scale))
    for cfg in configs:
        t = cfg.table("p")
        cfg.execute(cfg.create_table(t, cfg.column(storage='EXTERNAL')) + f"""
INSERT INTO {t} SELECT jsonb_build_object('id', i,
  'foo', (SELECT jsonb_agg(0) FROM generate_series(1, 1960/12))) jb
FROM generate_series(1, {nrows}) i;
VACUUM ANALYZE {t};
""")
        cfg.check_storage(t, expect_skeleton=False)
        b0, ms0 = measure(cfg, t, results, "before")
        cfg.execute(f"UPDATE {t} SET jb = jb || '{{\"bar\": \"baz\"}}'; "
                    f"VACUUM FULL {t}; ANALYZE {t};")
        forms = cfg.check_storage(t)
        b1, ms1 = measure(cfg, t, results, "after")
        for form, n in forms.items():
            results.add("P", cfg.name, "storage after", "rows", n, form=form)
        log(f"P: {cfg.name}: {b0} -> {b1} buffers, {ms0:.1f} -> {ms1:.1f} ms "
            f"({', '.join(f'{n} {f}' for f, n in forms.items())} after)")
