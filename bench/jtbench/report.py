"""Comparison tables and the markdown report, computed from the results.

Nothing here is typed in by hand: every figure is read back from the
measurements of the run (results.jsonl).
"""

import statistics

from . import bench_b, bench_m, bench_r, bench_y
from .bench_i import QUERIES
from .configs import ALL as CONFIGS
from .bench_s import KEYS
from .bench_u import CASES, S_CASES


def fmt_bytes(n):
    for div, unit in [(1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "kB")]:
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{int(n)} B"


def fmt_num(x, digits=3):
    if x is None:
        return "-"
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def ratio(a, b):
    return a / b if a is not None and b else None


def table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def s_section(res, configs):
    pts = res.select(bench="S", metric="ms_per_call")
    if not pts:
        return None
    rows_measured = sorted({p["row"] for p in pts})
    first, last = rows_measured[0], rows_measured[-1]
    lines = ["## S: synthetic key access",
             "",
             "Time of one `jb -> 'keyN'` (µs per call) against the row's document; "
             "the ratio compares the largest row with the smallest.",
             ""]
    head = ["key"] + [f"{c} row {first}" for c in configs] + \
        [f"{c} row {last}" for c in configs] + [f"{c} ratio" for c in configs]
    body = []
    for key in KEYS:
        a = [res.one(bench="S", config=c, case=key, metric="ms_per_call", row=first) for c in configs]
        b = [res.one(bench="S", config=c, case=key, metric="ms_per_call", row=last) for c in configs]
        body.append([f"`{key}`"] + [fmt_num(x * 1000) for x in a] +
                    [fmt_num(x * 1000) for x in b] +
                    [f"**{fmt_num(ratio(y, x))}x**" for x, y in zip(a, b)])
    lines.append(table(head, body))
    lines += ["", "Stored size of the rows (bytes): " + ", ".join(
        f"{c}: row {first} {res.select(bench='S', config=c, row=first)[0]['stored_size']}, "
        f"row {last} {res.select(bench='S', config=c, row=last)[0]['stored_size']}"
        for c in configs), ""]
    sample = [r for r in rows_measured if r in (first, last) or r % 20 in (0, 1)]
    for key in KEYS:
        lines += [f"<details><summary>{key}: µs per call by row</summary>", ""]
        body = []
        for r in sample:
            body.append([r] + [fmt_bytes(res.select(bench="S", config=c, row=r)[0]["stored_size"])
                               for c in configs] +
                        [fmt_num(res.one(bench="S", config=c, case=key, metric="ms_per_call", row=r) * 1000)
                         for c in configs])
        lines.append(table(["row"] + [f"stored {c}" for c in configs] +
                           [f"µs {c}" for c in configs], body))
        lines += ["", "</details>", ""]
    compared = [c for c in configs if CONFIGS[c].baseline in configs]
    if compared:
        lines += ["Against the stock configuration with the same compression: time per "
                  "call of the configuration divided by the stock one (below 1 is "
                  "faster), on the largest row and the median over all rows.", ""]
        body = []
        for key in KEYS:
            row = [f"`{key}`"]
            for c in compared:
                b = CONFIGS[c].baseline
                ratios = [res.one(bench="S", config=c, case=key, metric="ms_per_call", row=r) /
                          res.one(bench="S", config=b, case=key, metric="ms_per_call", row=r)
                          for r in rows_measured]
                row += [f"{fmt_num(ratios[-1])}", f"{fmt_num(statistics.median(ratios))}"]
            body.append(row)
        head = ["key"]
        for c in compared:
            head += [f"{c} / {CONFIGS[c].baseline}, row {last}", f"{c} / {CONFIGS[c].baseline}, median"]
        lines += [table(head, body), ""]
    lines.append("![S](S.png)")
    return "\n".join(lines)


def c_section(res, configs):
    pts = res.select(bench="C")
    if not pts:
        return None
    from .bench_c import REAL, GENERATED
    storing = [c for c in configs if res.select(bench="C", config=c)]
    pairs = [(c, CONFIGS[c].baseline) for c in storing
             if CONFIGS[c].toaster and CONFIGS[c].baseline in storing]
    lines = ["## C: what storing documents costs", "",
             "Per dataset: the relation's total size, TOAST values (distinct chunk "
             "ids), documents in TOAST, and the WAL per row of an UPDATE that "
             "leaves the document alone (`id = id + 1`); toaster / stock ratios.  "
             "Real datasets: " + "; ".join(
                 f"{case} ({res.select(bench='C', case=case)[0]['source']})"
                 for case in REAL if res.select(bench="C", case=case)) + ".", ""]

    def v(c, case, metric):
        m = res.select(bench="C", config=c, case=case, metric=metric)
        return m[0]["value"] if m else None

    head = ["dataset", "documents"]
    for c in storing:
        head += [f"{c} total", f"{c} TOAST values", f"{c} in TOAST", f"{c} WAL B/row"]
    for t, b in pairs:
        head += [f"{t} / {b} total", f"{t} / {b} TOAST values",
                 f"{t} / {b} WAL"]
    body = []
    for case in REAL + GENERATED:
        if not res.select(bench="C", case=case):
            continue
        row = [case, v(storing[0], case, "documents")]
        for c in storing:
            row += [fmt_bytes(v(c, case, "total_bytes")), v(c, case, "toast_values"),
                    v(c, case, "toasted_documents"),
                    fmt_num(v(c, case, "other_column_update"))]
        for t, b in pairs:
            row += [f"{fmt_num(ratio(v(t, case, 'total_bytes'), v(b, case, 'total_bytes')))}x",
                    f"{fmt_num(ratio(v(t, case, 'toast_values'), max(1, v(b, case, 'toast_values'))))}x",
                    f"{fmt_num(ratio(v(t, case, 'other_column_update'), v(b, case, 'other_column_update')))}x"]
        body.append(row)
    lines.append(table(head, body))
    load_lines = c_load_lines(res, pairs, v)
    if load_lines:
        lines += [""] + load_lines
    budget_lines = c_budget_lines(res, storing, pairs)
    if budget_lines:
        lines += [""] + budget_lines
    return "\n".join(lines)


def c_load_lines(res, pairs, v):
    """The time of loading each dataset, toaster against stock."""
    from .bench_c import REAL, GENERATED
    if not pairs or not res.select(bench="C", metric="load_ms"):
        return []
    head = ["dataset"] + [f"{t} / {b}" for t, b in pairs]
    body = []
    for case in REAL + GENERATED:
        if not res.select(bench="C", case=case, metric="load_ms"):
            continue
        row = [case]
        for t, b in pairs:
            mt, mb = v(t, case, "load_ms"), v(b, case, "load_ms")
            row.append(f"{fmt_num(mt)} / {fmt_num(mb)} ms: "
                       f"**{fmt_num(ratio(mt, mb))}x**" if mt and mb else "-")
        body.append(row)
    return ["**Loading** (the `COPY` or `INSERT` of each dataset as the server "
            "timed it, the faster of two loads, a dataset's configurations "
            "taking turns): toaster / stock time.", "", table(head, body)]


def c_budget_lines(res, storing, pairs):
    """The inline budget's trade: one table per dataset."""
    from .bench_c import BUDGET_FIELDS
    if not res.select(bench="C", metric="short_field_us"):
        return []
    lines = ["**What a column's inline budget buys** "
             "(`toaster_options = 'inline_budget=N'`): per budget, the total "
             "size, the WAL per row of `id = id + 1` and the time of reading one "
             "short field per row, each against stock's on the same documents.",
             "", "![C](C.png)", ""]
    for case, expr in BUDGET_FIELDS.items():
        name = f"{case} budget"
        if not res.select(bench="C", case=name):
            continue
        head = ["configuration", "budget", "total", "WAL B/row", f"`{expr}` µs/row",
                "total / stock", "WAL / stock", "read / stock"]
        body = []
        for t, b in pairs:
            def base(metric):
                m = res.select(bench="C", config=b, case=name, metric=metric)
                return m[0]["value"] if m else None
            for p in sorted(res.select(bench="C", config=t, case=name, metric="total_bytes"),
                            key=lambda r: r["budget"]):
                bud = p["budget"]

                def val(metric):
                    return res.select(bench="C", config=t, case=name, metric=metric,
                                      budget=bud)[0]["value"]
                body.append([t, bud, fmt_bytes(val("total_bytes")),
                             fmt_num(val("other_column_update")),
                             fmt_num(val("short_field_us")),
                             f"{fmt_num(ratio(val('total_bytes'), base('total_bytes')))}x",
                             f"{fmt_num(ratio(val('other_column_update'), base('other_column_update')))}x",
                             f"{fmt_num(ratio(val('short_field_us'), base('short_field_us')))}x"])
            body.append([b, "-", fmt_bytes(base("total_bytes")),
                         fmt_num(base("other_column_update")), fmt_num(base("short_field_us")),
                         "1x", "1x", "1x"])
        lines += [f"*{case}'s documents*", "", table(head, body), ""]
    return lines


def q_section(res, configs):
    pts = res.select(bench="Q", metric="ms_per_call")
    if not pts:
        return None
    from .bench_q import KEYS as Q_KEYS, READS
    rows = sorted({p["row"] for p in pts})
    first, last = rows[0], rows[-1]
    lines = ["## Q: short-key access through every syntax", "",
             f"Time of one evaluation (µs) on S's row {first} and row {last}, and "
             f"their ratio (row {last} / row {first}): the largest document should "
             "cost what the smallest does.  `subscript_assign` is an UPDATE "
             "setting the key to its own value (ms), with the WAL it writes per row.",
             ""]

    def val(c, case, key, row, metric="ms_per_call"):
        m = res.select(bench="Q", config=c, case=case, key=key, row=row, metric=metric)
        return m[0]["value"] if m else None

    for key in Q_KEYS:
        body = []
        for case in list(READS) + ["subscript_assign"]:
            row = [f"`{case}`"]
            for c in configs:
                a, b = val(c, case, key, first), val(c, case, key, last)
                if a is None or b is None:
                    row.append("-")
                    continue
                scale = 1 if case == "subscript_assign" else 1000
                row.append(f"{fmt_num(a * scale)} / {fmt_num(b * scale)} "
                           f"(**{fmt_num(ratio(b, a))}x**)")
            body.append(row)
        row = ["`subscript_assign` WAL B/row"]
        for c in configs:
            a = val(c, "subscript_assign", key, first, "wal_bytes_per_row")
            b = val(c, "subscript_assign", key, last, "wal_bytes_per_row")
            row.append(f"{fmt_num(a)} / {fmt_num(b)}" if a is not None and b is not None
                       else "-")
        body.append(row)
        lines += [f"**`{key}`**", "", table(["case"] + configs, body), ""]
    lines += q_whole_lines(res, configs)
    return "\n".join(lines)


def q_whole_lines(res, configs):
    """Q's whole-document consumers: each toaster configuration against its
    baseline on the same documents, the target at least 0.95x."""
    from .bench_q import WHOLE_CONSUMERS
    pairs = [c for c in configs if CONFIGS[c].toaster and CONFIGS[c].baseline in configs]
    if not res.select(bench="Q", metric="ms", case=next(iter(WHOLE_CONSUMERS))):
        return []
    lines = ["**Whole-document consumers on I's documents** (those the toaster stores "
             "as skeletons; the two configurations of a pair taking turns, the fastest "
             "round's time in ms; speed = baseline time / toaster time, the median over "
             "the rounds; target at least 0.95x)", ""]
    body = []
    for case in WHOLE_CONSUMERS:
        row = [f"`{case[len('whole: '):]}`"]
        for c in pairs:
            t = res.select(bench="Q", config=c, case=case, metric="ms")
            b = res.select(bench="Q", config=CONFIGS[c].baseline, case=case, metric="ms",
                           against=c)
            if not t or not b:
                row.append("-")
                continue
            r = t[0]["median_ratio"]
            row.append(f"{fmt_num(b[0]['value'])} / {fmt_num(t[0]['value'])} ms: "
                       f"**{fmt_num(r)}x** {'pass' if r >= 0.95 else 'FAIL'}")
        body.append(row)
    docs = res.select(bench="Q", metric="ms", case=next(iter(WHOLE_CONSUMERS)))
    heads = [f"{CONFIGS[c].baseline} / {c} ({next((d['documents'] for d in docs if d['config'] == c), '-')} documents)"
             for c in pairs]
    return lines + [table(["consumer"] + heads, body), ""]


def i_section(res, configs):
    pts = res.select(bench="I", metric="us_per_access")
    if not pts:
        return None
    lines = ["## I: IMDB-like documents", "",
             "Mean time per access (µs) by storage form and stored-size bucket; "
             "documents per bucket in parentheses (first configuration).  The scan "
             "floor visits the same documents without reading them; the net "
             "speedup compares times after taking each configuration's floor "
             "away.  Buckets of fewer than 5 documents are not timed." +
             ("  A toaster configuration has buckets of its own (`skeleton`: stored "
              "by the toaster); its speedups are computed from a second timing of it "
              "on its baseline's buckets, so that both read the same documents."
              if any(CONFIGS[c].toaster for c in configs) else ""), ""]
    buckets = sorted({p["bucket"] for p in pts})
    compared = [c for c in configs if CONFIGS[c].baseline in configs]

    def value(c, case, b):
        m = res.select(bench="I", config=c, case=case, metric="us_per_access", bucket=b)
        return m[0] if m else None

    def compared_value(c, case, b):
        """The configuration on the documents of its baseline's bucket b:
        a toaster configuration was also timed on its baseline's buckets."""
        if CONFIGS[c].toaster:
            m = res.select(bench="I", config=c, case=case, metric="us_per_access_on_base",
                           bucket=b)
            return m[0] if m else None
        return value(c, case, b)

    for case in list(QUERIES) + ["scan floor"]:
        body = []
        for b in buckets:
            row = []
            label = None
            for c in configs:
                m = value(c, case, b)
                row.append(fmt_num(m["value"]) if m else "-")
                if m and label is None:
                    label = f"{m['bucket_label']} ({m['documents']})"
            for c in compared:
                m, base = compared_value(c, case, b), value(CONFIGS[c].baseline, case, b)
                row.append(f"{fmt_num(ratio(base['value'], m['value']))}x" if m and base else "-")
            if case != "scan floor":
                # the same, after taking away each configuration's scan floor
                for c in compared:
                    b_cfg = CONFIGS[c].baseline
                    m, base = compared_value(c, case, b), value(b_cfg, case, b)
                    fm, fb = compared_value(c, "scan floor", b), value(b_cfg, "scan floor", b)
                    if m and base and fm and fb and m["value"] > fm["value"]:
                        row.append(f"{fmt_num(ratio(base['value'] - fb['value'], m['value'] - fm['value']))}x")
                    else:
                        row.append("-")
            if label:
                body.append([label] + row)
        head = ["bucket"] + configs + [f"speedup {c}" for c in compared]
        if case != "scan floor":
            head += [f"net speedup {c}" for c in compared]
        lines += [f"**`{case}`**", "", table(head, body), ""]
    forms = sorted({p["bucket"] for p in res.select(bench="I", metric="us_per_access_by_form")})
    if forms:
        lines += ["**By storage form, all sizes** (µs per document; each form timed as "
                  "a whole, less the time of the same query on no rows, which a new "
                  "session's first query spends loading caches; documents per form in "
                  "parentheses)", ""]
        body = []
        for case in list(QUERIES) + ["scan floor"]:
            for f in forms:
                row = []
                for c in configs:
                    m = res.select(bench="I", config=c, case=case,
                                   metric="us_per_access_by_form", bucket=f)
                    row.append(f"{fmt_num(m[0]['value'])} ({m[0]['documents']})" if m else "-")
                if any(x != "-" for x in row):
                    label = res.select(bench="I", metric="us_per_access_by_form",
                                       bucket=f)[0]["bucket_label"].split(",")[0]
                    body.append([f"`{case}`", label] + row)
        lines += [table(["query", "form"] + configs, body), ""]
    lines.append("![I](I.png)")
    return "\n".join(lines)


def u_section(res, configs):
    if not res.select(bench="U"):
        return None
    runs = max((r.get("runs", 1) for r in res.select(bench="U", metric="ms")),
               default=1)
    lines = ["## U: partial update", "",
             "UPDATE of every row of the 1000-key table, after a CHECKPOINT; ratios "
             "against the `id = id + 1` floor of the same configuration.  FPI: the "
             "full-page images in the WAL (pg_walinspect), one per page first "
             "changed after the checkpoint." +
             (f"  Each update ran {runs} times per configuration, the configurations "
              "taking turns: the run of median duration is shown, with the fastest "
              "and slowest durations in parentheses." if runs > 1 else ""), ""]
    body = []
    for case, _ in CASES:
        for c in configs:
            def g(metric):
                m = res.select(bench="U", config=c, case=case, metric=metric)
                return m[0]["value"] if m else None
            ms, wal, fpi = g("ms"), g("wal_bytes"), g("wal_fpi_bytes")
            if ms is None:
                continue  # a case added after this run
            fl_ms = res.one(bench="U", config=c, case="id = id + 1", metric="ms")
            fl_wal = res.one(bench="U", config=c, case="id = id + 1", metric="wal_bytes")
            spread = ""
            if g("ms_min") is not None and runs > 1:
                spread = f" ({fmt_num(g('ms_min'))}-{fmt_num(g('ms_max'))})"
            body.append([f"`{case}`", c, fmt_num(ms) + spread,
                         f"{fmt_num(ratio(ms, fl_ms))}x",
                         fmt_bytes(wal), "-" if fpi is None else fmt_bytes(fpi),
                         f"{fmt_num(ratio(wal, fl_wal))}x",
                         f"{fmt_bytes(g('toast_bytes_before'))} → {fmt_bytes(g('toast_bytes_after'))}",
                         f"{fmt_num(ratio(g('toast_bytes_after'), g('toast_bytes_before')))}x",
                         f"{fmt_bytes(g('heap_bytes_before'))} → {fmt_bytes(g('heap_bytes_after'))}"])
    lines.append(table(["update", "config", "ms", "vs floor", "WAL", "of which FPI",
                        "vs floor",
                        "TOAST size", "TOAST growth", "heap size"], body))
    lines += ["", "Per-row updates of the S table (documents of 130 B to 3.3 MB): "
              "WAL of the smallest and the largest row.", ""]
    body = []
    for case, _ in S_CASES:
        for c in configs:
            pts = sorted(res.select(bench="U", config=c, case=case, metric="wal_bytes"),
                         key=lambda p: p["row"])
            if not pts:
                continue
            body.append([case, c, fmt_bytes(pts[0]["value"]), fmt_bytes(pts[-1]["value"]),
                         f"{fmt_num(ratio(pts[-1]['value'], pts[0]['value']))}x"])
    lines.append(table(["update", "config", "WAL smallest row", "WAL largest row", "ratio"], body))
    lines += ["", "![U](U.png)"]
    return "\n".join(lines)


def p_section(res, configs):
    if not res.select(bench="P"):
        return None
    body = []
    for c in configs:
        b0 = res.one(bench="P", config=c, metric="buffers", phase="before")
        b1 = res.one(bench="P", config=c, metric="buffers", phase="after")
        t0 = res.one(bench="P", config=c, metric="ms", phase="before")
        t1 = res.one(bench="P", config=c, metric="ms", phase="after")
        body.append([c, f"{b0:,}", f"{b1:,}", f"**{fmt_num(ratio(b1, b0))}x**",
                     fmt_num(t0), fmt_num(t1), f"{fmt_num(ratio(t1, t0))}x"])
    return "\n".join(["## P: a tiny update pushes rows into TOAST", "",
                      "`EXPLAIN (ANALYZE, BUFFERS) SELECT jb->'id'` before and after "
                      "`jb || '{\"bar\": \"baz\"}'` + `VACUUM FULL`.", "",
                      table(["config", "buffers before", "buffers after", "ratio",
                             "ms before", "ms after", "ratio"], body),
                      "", "![P](P.png)"])


def forms_of(res, bench, c):
    rows = res.select(bench=bench, config=c, case="table", metric="rows")
    return ", ".join(f"{r['value']} {r['form']}" for r in sorted(rows, key=lambda r: r["form"]))


def storage_table(res, bench, configs):
    """The table's pages and the storage forms of its documents, per
    configuration."""
    body = []
    for c in configs:
        heap = res.one(bench=bench, config=c, case="table", metric="heap_pages")
        toast = res.one(bench=bench, config=c, case="table", metric="toast_pages")
        body.append([c, f"{heap:,}", f"{toast:,}", forms_of(res, bench, c)])
    return table(["config", "heap pages", "TOAST pages", "documents"], body)


def r_section(res, configs):
    if not res.select(bench="R", metric="buffers"):
        return None
    configs = [c for c in configs if res.select(bench="R", config=c, metric="buffers")]
    nrows = res.select(bench="R", metric="buffers")[0]["rows"]
    lines = ["## R: read amplification on projections", "",
             f"{nrows:,} user documents with a 5,000-character bio; "
             "`EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SERIALIZE text)`, shared "
             "buffer accesses of execution and serialisation, median time.  The "
             "ratio divides the buffers of the query by the heap pages of the "
             "table: about 1 when the row alone is read.", ""]
    lines += [storage_table(res, "R", configs), ""]
    body = []
    for case, sql in bench_r.QUERIES:
        for c in configs:
            b = res.one(bench="R", config=c, case=case, metric="buffers")
            ms = res.one(bench="R", config=c, case=case, metric="ms")
            heap = res.one(bench="R", config=c, case="table", metric="heap_pages")
            ratio_txt = f"{fmt_num(ratio(b, heap))}x"
            if case == bench_r.HEADLINE:
                ratio_txt = f"**{ratio_txt}**"
            body.append([f"`{sql.format(t='users')}`" if c == configs[0] else "", c,
                         f"{b:,}", ratio_txt, fmt_num(ms)])
    lines += [table(["query", "config", "buffers", "buffers / heap pages", "ms"], body), ""]
    digests = {c: res.select(bench="R", config=c, case="answers", metric="digest")
               for c in configs}
    digests = {c: d[0]["value"] for c, d in digests.items() if d}
    if digests:
        same = len(set(digests.values())) == 1
        lines += ["Answers: " + ("the same in every configuration (digest of the "
                                 "projection and of the documents)." if same else
                                 "**DIFFER between configurations**: " +
                                 ", ".join(f"{c} `{d}`" for c, d in digests.items())), ""]
    lines.append("![R](R.png)")
    return "\n".join(lines)


def m_time_ratio(res, config, flt):
    """Time of filter flt against the floor in one configuration: the
    median of the ratios of the rounds (each round runs the filters one
    after the other), or, for results that kept no rounds, the ratio of the
    median times."""
    run = res.select(bench="M", config=config, case=flt, metric="ms")[0]
    floor = res.select(bench="M", config=config, case=bench_m.FLOOR, metric="ms")[0]
    rounds, floor_rounds = run.get("rounds"), floor.get("rounds")
    if rounds and floor_rounds and len(rounds) == len(floor_rounds):
        return statistics.median(r / f for r, f in zip(rounds, floor_rounds) if f > 0)
    return ratio(run["value"], floor["value"])


def m_section(res, configs):
    if not res.select(bench="M", metric="buffers"):
        return None
    configs = [c for c in configs if res.select(bench="M", config=c, metric="buffers")]
    nrows = res.select(bench="M", metric="buffers")[0]["rows"]
    lines = ["## M: filtering records on a short field", "",
             f"{nrows:,} MARC-like records, sequential scans (parallel query off), "
             "`EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SERIALIZE text)`; ratios "
             "against the `instance_id = $1` floor of the same configuration.  "
             "ms: the median over the rounds; time vs floor: the median of the "
             "rounds' ratios (in a round the filters run one after the other).", ""]
    lines += [storage_table(res, "M", configs), ""]
    body = []
    found = {}
    for flt in bench_m.FILTERS:
        for c in configs:
            b = res.one(bench="M", config=c, case=flt, metric="buffers")
            ms = res.one(bench="M", config=c, case=flt, metric="ms")
            fb = res.one(bench="M", config=c, case=bench_m.FLOOR, metric="buffers")
            fms = res.one(bench="M", config=c, case=bench_m.FLOOR, metric="ms")
            n = res.select(bench="M", config=c, case=flt, metric="buffers")[0]["found"]
            found.setdefault(flt, set()).add(n)
            tr = f"{fmt_num(m_time_ratio(res, c, flt))}x"
            if flt == bench_m.LEADER:
                tr = f"**{tr}**"
            body.append([f"`{flt}`" if c == configs[0] else "", c, n, fmt_num(ms), tr,
                         f"{b:,}", f"{fmt_num(ratio(b, fb))}x"])
    lines.append(table(["filter", "config", "rows found", "ms", "time vs floor",
                        "buffers", "buffers vs floor"], body))
    bad = [f for f, ns in found.items() if len(ns) > 1]
    lines += ["", "Rows found: " + ("the same in every configuration." if not bad else
                                    "**DIFFER between configurations** for " +
                                    ", ".join(f"`{f}`" for f in bad) + "."), ""]
    params = {flt: res.select(bench="M", case=flt, metric="buffers")[0].get("parameter")
              for flt in bench_m.FILTERS}
    lines += ["$1: " + "; ".join(f"`{f}`: `{v}`" for f, v in params.items()), ""]
    ref = {flt: res.select(bench="M", config="reference", case=flt, metric="ms")
           for flt in (bench_m.FLOOR, bench_m.LEADER)}
    if all(ref.values()):
        rf, rl = ref[bench_m.FLOOR][0]["value"], ref[bench_m.LEADER][0]["value"]
        lines += [f"Reference: the same rows with a document holding only the leader "
                  f"(a small jsonb stored in the row, no TOAST, the builtin `->>`): "
                  f"`{bench_m.LEADER}` {fmt_num(rl)} ms against the floor's "
                  f"{fmt_num(rf)} ms, **{fmt_num(ratio(rl, rf))}x**: the cost of a "
                  f"jsonb field at best.", ""]
    lines += ["![M](M.png)"]
    return "\n".join(lines)


def i_target(res, c, case):
    """The I target: the time of one access on TOASTed (skeleton) documents
    over the same on inline (plain) ones, from the repeated accesses (the
    access alone).  Returns (ratio, skeleton µs, plain µs; then the same
    with each storage form timed as a whole, visiting the rows included;
    their scan floors' µs; [(skeleton bucket, plain bucket, ratio) of the
    size decades that have both]), or None."""
    def by_form(case_, form):
        m = res.select(bench="I", config=c, case=case_, metric="us_per_access_by_form",
                       bucket=form)
        return m[0]["value"] if m else None

    def repeated(form):
        m = res.select(bench="I", config=c, case=case, metric="us_per_access_repeated",
                       bucket=form)
        return m[0]["value"] if m else None

    skel, plain = by_form(case, 4), by_form(case, 1)
    if skel is None or plain is None:
        return None
    fs, fp = by_form("scan floor", 4), by_form("scan floor", 1)
    rs, rp = repeated(4), repeated(1)

    def bucket(b):
        m = res.select(bench="I", config=c, case=case, metric="us_per_access", bucket=b)
        return m[0] if m else None
    same_size = []
    for decade in range(10):
        s_, p_ = bucket(40 + decade), bucket(10 + decade)
        if s_ and p_:
            same_size.append((s_["bucket_label"], p_["bucket_label"],
                              ratio(s_["value"], p_["value"])))
    return (ratio(rs, rp), rs, rp, ratio(skel, plain), skel, plain, fs, fp, same_size)


def verdict(value, limit):
    if value is None:
        return "-", "not measured"
    return f"{fmt_num(value)}x", ("**pass**" if value <= limit else "**FAIL**")


def targets_section(res, configs):
    toasters = [c for c in configs if CONFIGS[c].toaster]
    if not toasters:
        return None
    lines = ["## Issue #5 targets, as measured in this run", "",
             "Each target of issue #5 with this run's measurement for the toaster "
             "configurations (one run on this machine: timings move by 10-40% "
             "between runs, so a time ratio close to its limit can pass in one run "
             "and fail in the next; buffer counts are exact).", ""]
    body = []

    def s_ms(c, key, row):
        m = res.select(bench="S", config=c, case=key, metric="ms_per_call", row=row)
        return m[0]["value"] if m else None

    s_pts = res.select(bench="S", metric="ms_per_call")
    rows = sorted({p["row"] for p in s_pts})
    for c in toasters:
        base = CONFIGS[c].baseline
        if rows:
            first, last = rows[0], rows[-1]
            for key in ("key1", "key3"):
                sweep = ratio(s_ms(c, key, last), s_ms(c, key, first))
                paired = [res.select(bench="S", config=c, case=key,
                                     metric="paired_ms_per_call", row=r) for r in (first, last)]
                if all(paired):
                    # the two rows timed in the same seconds (since run t)
                    v, ok = verdict(ratio(paired[1][0]["value"], paired[0][0]["value"]), 1.5)
                    body.append([c, "S", f"`{key}` time per call, row {last} / row {first}, "
                                 f"the two timed in alternation (in the sweep over the rows: "
                                 f"{fmt_num(sweep)}x)", "≤ 1.5x", v, ok])
                    continue
                v, ok = verdict(sweep, 1.5)
                body.append([c, "S", f"`{key}` time per call, row {last} / row {first}",
                             "≤ 1.5x", v, ok])
            for key, limit, what in (("key4", 1.0, "no slower than stock"),
                                     ("key2", 1.1, "at most 10% slower than stock")):
                r_last = ratio(s_ms(c, key, last), s_ms(base, key, last))
                skel_rows = [p["row"] for p in res.select(bench="S", config=c, case=key,
                                                            metric="ms_per_call")
                             if p.get("form") == "skeleton"]
                rs = [ratio(s_ms(c, key, r), s_ms(base, key, r)) for r in skel_rows]
                rs = [x for x in rs if x is not None]
                med = statistics.median(rs) if rs else None
                v, ok = verdict(r_last, limit)
                vm, okm = verdict(med, limit)
                body.append([c, "S", f"`{key}` {what}: time / {base}, row {last} "
                             f"(median over the {len(rs)} skeleton rows: {vm}, {okm})",
                             f"≤ {limit}x", v, ok])
        if res.select(bench="P", config=c, metric="buffers"):
            b0 = res.one(bench="P", config=c, metric="buffers", phase="before")
            b1 = res.one(bench="P", config=c, metric="buffers", phase="after")
            v, ok = verdict(ratio(b1, b0), 1.1)
            body.append([c, "P", f"`jb->'id'` buffers after / before the small update "
                         f"({b1:,} / {b0:,})", "≤ 1.1x", v, ok])
        if res.select(bench="R", config=c, metric="buffers"):
            b = res.one(bench="R", config=c, case=bench_r.HEADLINE, metric="buffers")
            heap = res.one(bench="R", config=c, case="table", metric="heap_pages")
            v, ok = verdict(ratio(b, heap), 1.2)
            body.append([c, "R", f"three short fields: buffers / heap pages ({b:,} / {heap:,})",
                         "≤ 1.2x", v, ok])
        if res.select(bench="M", config=c, metric="ms"):
            ms = res.one(bench="M", config=c, case=bench_m.LEADER, metric="ms")
            fms = res.one(bench="M", config=c, case=bench_m.FLOOR, metric="ms")
            b = res.one(bench="M", config=c, case=bench_m.LEADER, metric="buffers")
            fb = res.one(bench="M", config=c, case=bench_m.FLOOR, metric="buffers")
            v, ok = verdict(m_time_ratio(res, c, bench_m.LEADER), 1.5)
            rl = res.select(bench="M", config="reference", case=bench_m.LEADER, metric="ms")
            rf = res.select(bench="M", config="reference", case=bench_m.FLOOR, metric="ms")
            ref = (f"; the reference, a leader-only jsonb in the row: "
                   f"{fmt_num(ratio(rl[0]['value'], rf[0]['value']))}x" if rl and rf else "")
            body.append([c, "M", f"`{bench_m.LEADER}` time / `{bench_m.FLOOR}`, the median "
                         f"of the rounds' ratios (median times {fmt_num(ms)} / {fmt_num(fms)} ms = "
                         f"{fmt_num(ratio(ms, fms))}x; buffers {b:,} / {fb:,} = "
                         f"{fmt_num(ratio(b, fb))}x{ref})", "≤ 1.5x", v, ok])
        for case in ("jb->'id'", "jb->'imdb_id'", "jb->'height'"):
            t = i_target(res, c, case)
            if t is None:
                continue
            r, rs, rp, whole, skel, plain, fs, fp, same_size = t
            v, ok = verdict(r, 2.0)
            extra = "; ".join(f"{s_label} / {p_label}: {verdict(x, 2.0)[0]}"
                              for s_label, p_label, x in same_size)
            body.append([c, "I", f"`{case}` on TOASTed (skeleton) documents / inline "
                         f"(plain) ones, the access alone: {fmt_num(rs)} / {fmt_num(rp)} "
                         f"µs (with the row's visit, each form as a whole: "
                         f"{fmt_num(skel)} / {fmt_num(plain)} µs = {verdict(whole, 2.0)[0]}; "
                         f"the visit alone, the scan floor: {fmt_num(fs)} / {fmt_num(fp)} "
                         f"µs; same-size buckets: {extra or '-'})",
                         "≤ 2x", v, ok])
    if not body:
        return None
    lines.append(table(["config", "bench", "measurement", "target", "measured", "result"],
                       body))
    reps = res.select(bench="I", metric="us_per_access_repeated")
    few, many = (reps[0]["reps_few"], reps[0]["reps_many"]) if reps else (1, 6)
    lines += ["", "S: key4 and key2 are compared with the stock configuration of the "
              "same compression on the largest row (in parentheses, the median of the "
              "ratio over the rows the toaster stored as skeletons).  I: the access "
              f"alone is the time of {many - few} more evaluations of the access per "
              f"document ({many} against {few}, `bench/I/repeated.sql`), per extra "
              "access, over all "
              "documents of the form; in parentheses, each storage form timed as a "
              "whole (all skeleton documents in one query, all plain ones in another: "
              "time per document, visiting the row included, less the query's fixed "
              "cost), the scan floors of the two (visiting the rows without reading "
              "the documents: a skeleton row is 1-2 kB, as wide as the largest plain "
              "documents, so fewer share a page), and the skeleton and plain buckets "
              "of the same size decade compared."]
    return "\n".join(lines)


def y_value(res, c, kind, workload, metric, clients):
    m = res.select(bench="Y", config=c, doc=kind, case=workload, metric=metric,
                   clients=clients)
    return m[0]["value"] if m else None


def y_clients(res):
    return sorted({p["clients"] for p in res.select(bench="Y", metric="tps")})


def y_reference_clients(clients):
    """The client count of the targets and of the summary columns: 4 when
    measured, else the largest."""
    return Y_TARGET_CLIENTS if Y_TARGET_CLIENTS in clients else max(clients)


Y_TARGET_CLIENTS = bench_y.TARGET_CLIENTS
Y_TARGET_KIND = bench_y.TARGET_KIND
Y_TARGET_RATIO = 3.0


def y_target_tps(res, c, workload):
    """TPS of configuration c at issue 6's target point: the median of its
    rounds (bench_y's --y-rounds), and the rounds' TPS by round number;
    the point alone for runs that did not repeat it."""
    rounds = {r["round"]: r["value"] for r in res.select(
        bench="Y", config=c, doc=Y_TARGET_KIND, case=workload, metric="round_tps",
        clients=Y_TARGET_CLIENTS)}
    if len(rounds) > 1:
        return statistics.median(rounds.values()), rounds
    return y_value(res, c, Y_TARGET_KIND, workload, "tps", Y_TARGET_CLIENTS), {}


def fmt_ms(x):
    return "-" if x is None else f"{x:.2f}"


def y_answers(res, configs, kind, metric, title, what):
    """The line saying whether every configuration read the same documents
    (digest metric), or nothing when they were not read."""
    digests = {c: res.select(bench="Y", config=c, doc=kind, case="answers",
                             metric=metric) for c in configs}
    digests = {c: d[0] for c, d in digests.items() if d}
    if not digests:
        return []
    rounds = next(iter(digests.values())).get("rounds")
    if rounds is not None:
        title += f" ({rounds} updates of every document)"
    same = len({d["value"] for d in digests.values()}) == 1
    return [f"{title}: " + (
        f"the same in every configuration{' ' + what if what else ''}." if same else
        "**DIFFER between configurations**: " +
        ", ".join(f"{c} `{d['value']}`" for c, d in digests.items())), ""]


def y_aging_text(res):
    aged = res.select(bench="Y", case="answers", metric="digest_aged")
    if not aged:
        return ("The updating workloads run on the documents as loaded (no aging).  ")
    return (f"Before the updating workloads, every document is updated "
            f"{aged[0]['rounds']} times (one field each time, the same in every "
            "configuration), so that they run on documents edited before, as in a "
            "table in service, not on documents as loaded; the read-only workloads "
            "run before that.  ")


def y_section(res, configs):
    if not res.select(bench="Y", metric="tps"):
        return None
    configs = [c for c in configs if res.select(bench="Y", config=c, metric="tps")]
    clients = y_clients(res)
    ref = y_reference_clients(clients)
    first = res.select(bench="Y", metric="tps")[0]
    compared = [c for c in configs if CONFIGS[c].baseline in configs]
    lines = ["## Y: YCSB-style mixed load (pgbench)", "",
             f"{first['rows']:,} documents of each kind, one table per storage "
             f"(`partial-X` runs on `stock-X`'s); pgbench custom scripts "
             f"(`bench/Y/`), {first['seconds']} s per point, "
             f"{', '.join(str(c) for c in clients)} clients (`-j`: one thread per "
             "client, at most one per core); rows, fields and paths drawn uniformly "
             "at random.  TPS is pgbench's (without the initial connection time); "
             "latencies (ms) are percentiles of pgbench's per-transaction log.  "
             "\"vs stock\" divides the TPS of the configuration by that of the "
             "stock configuration with the same compression at the same client "
             "count (above 1 is faster).  "
             f"{y_aging_text(res)}Workload A runs after a VACUUM and a "
             "CHECKPOINT; its WAL is per update (full-page images in parentheses).  "
             "Statements are sent with pgbench's default simple query protocol "
             "(parsed and planned on every execution), except in the workloads "
             "marked \"prepared\" (`-M prepared`, the scripts of `bench/Y/prepared/`: "
             "the same transactions, parsed and planned once per session, as most "
             "applications and YCSB's JDBC client run them).",
             ""]
    for kind in bench_y.KINDS:
        if not res.select(bench="Y", doc=kind, metric="tps"):
            continue
        lines += [f"### \"{kind}\" documents: {bench_y.KIND_TEXT[kind]}", ""]
        body = []
        for c in configs:
            rows = res.select(bench="Y", config=c, doc=kind, case="table", metric="rows")
            n = sum(r["value"] for r in rows)
            forms = ", ".join(f"{r['value']} {r['form']}" for r in sorted(rows, key=lambda r: r["form"]))
            stored = sum(r["value"] * r["mean_stored_size"] for r in rows) / n if n else None
            raw = sum(r["value"] * r["mean_raw_size"] for r in rows) / n if n else None
            heap = res.select(bench="Y", config=c, doc=kind, case="table", metric="heap_pages")
            toast = res.select(bench="Y", config=c, doc=kind, case="table", metric="toast_pages")
            body.append([c, forms, fmt_bytes(raw) if raw else "-",
                         fmt_bytes(stored) if stored else "-",
                         f"{heap[0]['value']:,}" if heap else "-",
                         f"{toast[0]['value']:,}" if toast else "-"])
        lines += [table(["config", "documents", "mean raw size", "mean stored size",
                         "heap pages", "TOAST pages"], body), ""]
        for workload, _ in bench_y.WORKLOADS:
            if not res.select(bench="Y", doc=kind, case=workload, metric="tps"):
                continue
            updates = workload in bench_y.UPDATING
            head = (["config"] + [f"TPS {n}" for n in clients] +
                    [f"vs stock, {', '.join(str(n) for n in clients)} clients",
                     f"p50 / p95 / p99 ms, {ref} clients"])
            if updates:
                head.append(f"WAL per update, {ref} clients")
            body = []
            for c in configs:
                tps = [y_value(res, c, kind, workload, "tps", n) for n in clients]
                base = CONFIGS[c].baseline
                if c in compared:
                    vs = ", ".join(
                        f"{fmt_num(ratio(t, y_value(res, base, kind, workload, 'tps', n)))}x"
                        for t, n in zip(tps, clients))
                    if (kind == Y_TARGET_KIND and workload in bench_y.FLOORS
                            and CONFIGS[c].toaster):
                        vs = f"**{vs}**"
                else:
                    vs = "-"
                lat = " / ".join(fmt_ms(y_value(res, c, kind, workload, f"latency_p{p}_ms", ref))
                                 for p in (50, 95, 99))
                row = [c] + [fmt_num(t) for t in tps] + [vs, lat]
                if updates:
                    row.append(y_wal_text(res, c, kind, ref, workload))
                body.append(row)
            lines += [f"**{workload}**: {bench_y.WORKLOAD_TEXT[workload]}", "",
                      table(head, body), ""]
        lines += [f"<details><summary>\"{kind}\": every point</summary>", ""]
        body = []
        for workload, _ in bench_y.WORKLOADS:
            updates = workload in bench_y.UPDATING
            for c in configs:
                for n in clients:
                    tps = y_value(res, c, kind, workload, "tps", n)
                    if tps is None:
                        continue
                    tx = res.select(bench="Y", config=c, doc=kind, case=workload,
                                    metric="transactions", clients=n)[0]
                    row = [workload, c, n, fmt_num(tps)]
                    row += [fmt_ms(y_value(res, c, kind, workload, m, n))
                            for m in ("latency_mean_ms", "latency_p50_ms",
                                      "latency_p95_ms", "latency_p99_ms")]
                    row.append(f"{tx['value']:,}" + (f" ({tx['failed']} failed)"
                                                       if tx.get("failed") else ""))
                    if updates:
                        row += [" / ".join(fmt_ms(y_value(res, c, kind, workload,
                                                          f"{s}_latency_p{p}_ms", n))
                                           for p in (50, 99))
                                for s in bench_y.A_SCRIPTS]
                        row.append(y_wal_text(res, c, kind, n, workload))
                    else:
                        row += ["", "", ""]
                    body.append(row)
        lines += [table(["workload", "config", "clients", "TPS", "mean ms", "p50 ms",
                         "p95 ms", "p99 ms", "transactions", "A: read p50 / p99 ms",
                         "A: update p50 / p99 ms", "A: WAL per update"], body),
                  "", "</details>", ""]
        lines += y_answers(res, configs, kind, "digest", "Answers after loading",
                           "(digest of three fields and of the whole documents)")
        lines += y_answers(res, configs, kind, "digest_aged", "Answers after aging",
                           "")
        zero = sum(p.get("zero_latency", 0) for p in
                   res.select(bench="Y", doc=kind, metric="transactions"))
        if zero:
            lines += [f"{zero} logged transactions have a latency of 0 (pgbench read "
                      "its result without waiting: their real time is not known); "
                      "they are in the percentiles.", ""]
    lines.append("![Y](Y.png)")
    return "\n".join(lines)


def y_wal_text(res, c, kind, clients, workload=bench_y.UPDATES):
    wal = y_value(res, c, kind, workload, "wal_bytes_per_update", clients)
    if wal is None:
        return "-"
    text = fmt_bytes(wal)
    total = y_value(res, c, kind, workload, "wal_bytes", clients)
    fpi = y_value(res, c, kind, workload, "fpi_bytes", clients)
    if fpi is not None and total:
        text += f" ({100.0 * fpi / total:.0f}% FPI)"
    return text


def verdict_at_least(value, limit):
    if value is None:
        return "-", "not measured"
    return f"{fmt_num(value)}x", ("**pass**" if value >= limit else "**FAIL**")


U_TARGET_CASES = ["js - '1'", "jsonb_set(js, '{500}', '0')", "client-sent document"]


def u_value(res, config, case, metric):
    """One of U's measurements, or None."""
    m = res.select(bench="U", config=config, case=case, metric=metric)
    return m[0]["value"] if m else None


def u_toast_growth_row(res, c, base, case):
    """The target row of U's TOAST relation after / before an update."""
    t0 = u_value(res, c, case, "toast_bytes_before")
    t1 = u_value(res, c, case, "toast_bytes_after")
    base_growth = ratio(u_value(res, base, case, "toast_bytes_after"),
                        u_value(res, base, case, "toast_bytes_before"))
    v, ok = verdict(ratio(t1, t0), 1.1)
    return [c, "U", f"`{case}`: TOAST relation after / before "
            f"({fmt_bytes(t1)} / {fmt_bytes(t0)}; {base}: {fmt_num(base_growth)}x)",
            "≤ 1.1x", v, ok]


def u_targets(res, c, base):
    """Issue 6's U and S-update rows for toaster configuration c."""
    body = []

    def g(config, case, metric):
        return u_value(res, config, case, metric)

    for case in U_TARGET_CASES:
        wal, bwal = g(c, case, "wal_bytes"), g(base, case, "wal_bytes")
        if wal is None or bwal is None:
            continue
        fpi, bfpi = g(c, case, "wal_fpi_bytes"), g(base, case, "wal_fpi_bytes")
        net = ""
        if fpi is not None and bfpi is not None:
            net = (f"; without full-page images {fmt_bytes(wal - fpi)} / "
                   f"{fmt_bytes(bwal - bfpi)} = {fmt_num(ratio(wal - fpi, bwal - bfpi))}x")
        v, ok = verdict(ratio(wal, bwal), 0.2)
        body.append([c, "U", f"`{case}`: WAL / {base}'s ({fmt_bytes(wal)} / "
                     f"{fmt_bytes(bwal)}{net})", "≤ 0.2x", v, ok])
        ms, bms = g(c, case, "ms"), g(base, case, "ms")
        v, ok = verdict_at_least(ratio(bms, ms), 10.0)
        which, spread = "", ""
        if g(c, case, "ms_min") is not None and g(base, case, "ms_min") is not None:
            which = ", median runs"
            spread = (f"; fastest runs {fmt_num(g(base, case, 'ms_min'))} / "
                      f"{fmt_num(g(c, case, 'ms_min'))} ms = "
                      f"{fmt_num(ratio(g(base, case, 'ms_min'), g(c, case, 'ms_min')))}x")
        body.append([c, "U", f"`{case}`: speed-up over {base}{which} "
                     f"({fmt_num(bms)} / {fmt_num(ms)} ms{spread})", "≥ 10x", v, ok])
        body.append(u_toast_growth_row(res, c, base, case))
        written = g(c, case, "toast_values_written")
        rows = res.select(bench="U", config=c, case=case, metric="ms")
        nrows = rows[0].get("rows") if rows else None
        if written is not None and nrows:
            v, ok = verdict(written / nrows, 1.0)
            body.append([c, "U", f"`{case}`: TOAST values written per row "
                         f"({written} for {nrows} rows; {base}: "
                         f"{g(base, case, 'toast_values_written')})", "≤ 1", v, ok])

    def per_row(case):
        return sorted(res.select(bench="U", config=c, case=case, metric="wal_bytes"),
                      key=lambda p: p["row"])
    pts = per_row("S: set key1")
    if pts:
        v, ok = verdict(ratio(pts[-1]["value"], pts[0]["value"]), 2.0)
        body.append([c, "U", f"S: set key1, WAL of row {pts[-1]['row']} / row "
                     f"{pts[0]['row']} ({fmt_bytes(pts[-1]['value'])} / "
                     f"{fmt_bytes(pts[0]['value'])})", "≤ 2x", v, ok])
    pts = per_row("S: append to key2")
    if pts:
        last = pts[-1]
        v, ok = verdict(ratio(last["value"], last["stored_size"]), 0.1)
        body.append([c, "U", f"S: append to key2, WAL of row {last['row']} / its "
                     f"stored size ({fmt_bytes(last['value'])} / "
                     f"{fmt_bytes(last['stored_size'])}: one range, not the array)",
                     "≤ 0.1x", v, ok])
    return body


U_LOGICAL_CASES = U_TARGET_CASES + ["js || '{\"bar\": \"baz\"}'"]
LOGICAL_SPEED_TARGET = 5.0


def logical_targets(res, configs):
    """The rows of the wal_level = logical targets, for each toaster
    configuration against its baseline."""
    body = []

    def u(config, case, metric):
        return u_value(res, config, case, metric)

    clients = y_clients(res)
    for c in configs:
        base = CONFIGS[c].baseline
        if not CONFIGS[c].toaster or base not in configs:
            continue
        for case in U_LOGICAL_CASES:
            wal, bwal = u(c, case, "wal_bytes"), u(base, case, "wal_bytes")
            if wal is None or bwal is None:
                continue
            v, ok = verdict(ratio(wal, bwal), 1.0)
            body.append([c, "U", f"`{case}`: WAL / {base}'s ({fmt_bytes(wal)} / "
                         f"{fmt_bytes(bwal)})", "≤ 1.0x", v, ok])
            body.append(u_toast_growth_row(res, c, base, case))
            ms, bms = u(c, case, "ms"), u(base, case, "ms")
            if CONFIGS[c].compression == "pglz":
                v, ok = verdict_at_least(ratio(bms, ms), LOGICAL_SPEED_TARGET)
                limit = f"≥ {LOGICAL_SPEED_TARGET:g}x"
            else:
                v, ok = f"{fmt_num(ratio(bms, ms))}x", "(no target)"
                limit = "-"
            body.append([c, "U", f"`{case}`: speed-up over {base}, median runs "
                         f"({fmt_num(bms)} / {fmt_num(ms)} ms)", limit, v, ok])
        if not clients:
            continue
        ref = y_reference_clients(clients)
        for kind in bench_y.KINDS:
            wal = y_value(res, c, kind, bench_y.UPDATES, "wal_bytes_per_update", ref)
            bwal = y_value(res, base, kind, bench_y.UPDATES, "wal_bytes_per_update", ref)
            if wal is not None and bwal is not None:
                v, ok = verdict(ratio(wal, bwal), 1.0)
                body.append([c, "Y", f"{kind}, {bench_y.UPDATES}, {ref} clients: WAL per "
                             f"update / {base}'s ({fmt_bytes(wal)} / {fmt_bytes(bwal)})",
                             "≤ 1.0x", v, ok])

            def pages(config, case):
                m = res.select(bench="Y", config=config, doc=kind, case=case,
                               metric="toast_pages")
                return m[0]["value"] if m else None
            p0, p1 = pages(c, "table"), pages(c, "table_end")
            if p0 and p1 is not None:
                b0, b1 = pages(base, "table"), pages(base, "table_end")
                v, ok = verdict(ratio(p1, p0), 1.1)
                body.append([c, "Y", f"{kind}: TOAST pages after every workload / after "
                             f"loading ({p1:,} / {p0:,}; {base}: "
                             f"{fmt_num(ratio(b1, b0)) if b0 and b1 is not None else '-'}x)",
                             "≤ 1.1x", v, ok])
    return body


def logical_section(res, configs):
    """U and Y measured again on an instance with wal_level = logical."""
    if not res.rows:
        return None
    configs = [c for c in configs if res.select(config=c)]
    benches = sorted({r["bench"] for r in res.rows})
    lines = ["## Under wal_level = logical", "",
             f"{', '.join(benches)} again, on the instance restarted with "
             "`wal_level = logical` (`tools/bench.sh --logical`): every permanent "
             "table is logically logged, and the toaster logs the parts a new "
             "version shares, for logical decoding (their stored chunks, or one "
             "stream of their raw contents compressed together).  Targets: WAL at "
             "most stock's with the same compression, TOAST growth at most 1.1x, U at "
             "least 5x stock's speed with pglz.", ""]
    lines.append(table(["config", "bench", "measure", "target", "value", "verdict"],
                       logical_targets(res, configs)))
    for f, title in ((u_section, "U"), (y_section, "Y")):
        s = f(res, configs)
        if not s:
            continue
        # the plots are the replica run's
        s = "\n".join(line for line in s.split("\n") if not line.startswith("!["))
        s = s.replace("\n## ", "\n### ").replace("## ", "### ", 1)
        lines += ["", s.replace(f"### {title}:", f"### {title} under wal_level = logical:", 1)]
    return "\n".join(lines)


def y_target(res, c, base, workload, floor_workload):
    """Issue 6's Y target for configuration c and one protocol's workload A."""
    t, t_rounds = y_target_tps(res, c, workload)
    b, b_rounds = y_target_tps(res, base, workload)
    if t is None and b is None:
        return None
    v, ok = verdict_at_least(ratio(t, b), Y_TARGET_RATIO)
    wal_c = y_value(res, c, Y_TARGET_KIND, workload, "wal_bytes_per_update",
                    Y_TARGET_CLIENTS)
    wal_b = y_value(res, base, Y_TARGET_KIND, workload, "wal_bytes_per_update",
                    Y_TARGET_CLIENTS)
    wal = (f"; WAL per update {y_wal_text(res, c, Y_TARGET_KIND, Y_TARGET_CLIENTS, workload)}"
           f" / {y_wal_text(res, base, Y_TARGET_KIND, Y_TARGET_CLIENTS, workload)} = "
           f"{fmt_num(ratio(wal_c, wal_b))}x" if wal_c and wal_b else "")
    floor_c, _ = y_target_tps(res, c, floor_workload)
    floor_b, _ = y_target_tps(res, base, floor_workload)
    floor = (f"; the floor, the same mix with an update that leaves the document "
             f"(`SET id = id`): {fmt_num(floor_c)} / {fmt_num(floor_b)} TPS, so at "
             f"most {fmt_num(ratio(floor_c, b))}x {base}'s workload A; {c} reaches "
             f"{fmt_num(ratio(t, floor_c))}x its floor" if floor_c and floor_b else "")
    protocol = ("prepared statements" if workload in bench_y.PREPARED
                else "simple query protocol")
    paired = sorted(set(t_rounds) & set(b_rounds))
    medians = (f"medians of {len(paired)} rounds, the configurations taking turns; "
               f"each round's ratio: "
               + ", ".join(f"{fmt_num(ratio(t_rounds[r], b_rounds[r]))}x" for r in paired)
               + "; " if len(paired) > 1 else "")
    return [c, "Y", f"workload A on \"{Y_TARGET_KIND}\" documents ({protocol}), "
            f"{Y_TARGET_CLIENTS} clients: TPS / {base}'s "
            f"({medians}{fmt_num(t)} / {fmt_num(b)}{wal}{floor})",
            f"≥ {fmt_num(Y_TARGET_RATIO)}x", v, ok]


def issue6_section(res, configs):
    toasters = [c for c in configs if CONFIGS[c].toaster]
    if not toasters:
        return None
    clients = y_clients(res) if res.select(bench="Y", metric="tps") else []
    body = []
    for c in toasters:
        base = CONFIGS[c].baseline
        body += u_targets(res, c, base)
        if Y_TARGET_CLIENTS not in clients:
            continue
        for workload, floor_workload in bench_y.FLOORS.items():
            row = y_target(res, c, base, workload, floor_workload)
            if row:
                body.append(row)
            m = res.select(bench="Y", config=c, doc=Y_TARGET_KIND, case=workload,
                           metric="toast_values_written", clients=Y_TARGET_CLIENTS)
            if m and m[0].get("updates"):
                v, ok = verdict(m[0]["value"] / m[0]["updates"], 1.0)
                body.append([c, "Y", f"workload A on \"{Y_TARGET_KIND}\" documents, "
                             f"{Y_TARGET_CLIENTS} clients ({workload}): TOAST values "
                             f"written per update ({m[0]['value']} for "
                             f"{m[0]['updates']} updates)", "≤ 1", v, ok])
    if not body:
        return None
    return "\n".join([
        "## Issue #6 targets, as measured in this run", "",
        "Each target of issue #6 with this run's measurement for the toaster "
        "configurations, against the stock configuration with the same compression "
        "(one run on this machine: times and throughput move by 10-40% between "
        "runs; WAL and sizes are exact).  U's WAL is measured after a CHECKPOINT, "
        "so it includes a full-page image of each page first changed; the WAL "
        "without them is shown too.  \"One range, not the array\": the WAL of "
        "appending one element to the largest document's key2, against the "
        "document's stored size (stock: about 1x).", "",
        table(["config", "bench", "measurement", "target", "measured", "result"], body)])


def b_configs(res, configs):
    """B's two configurations in this run: (stock, toaster), either None."""
    ran = [c for c in configs if res.select(bench="B", config=c) and c in CONFIGS]
    return (next((c for c in ran if not CONFIGS[c].toaster), None),
            next((c for c in ran if CONFIGS[c].toaster), None))


def b_value(res, config, case, metric, **params):
    m = res.select(bench="B", config=config, case=case, metric=metric, **params)
    return m[0]["value"] if m else None


def b_append_case(res):
    """B(a)'s case and the value's size, or (None, None)."""
    m = res.select(bench="B", metric="total_bytes_after")
    return (m[0]["case"], m[0]["size"]) if m else (None, None)


def b_stream_cases(res):
    """B(b)'s cases in order: [(target, size, case)]."""
    return sorted({(r["target"], r["size"], r["case"])
                   for r in res.select(bench="B", metric="wal_bytes_max")})


def b_targets_section(res, configs):
    """Benchmark B's targets for its toaster configuration, against its
    stock one: B(a)'s append and read, and each group of B(b)."""
    stock, toaster = b_configs(res, configs)
    if toaster is None:
        return None
    body = []
    case, size = b_append_case(res)

    def g(config, metric, case=case, **params):
        return None if config is None else b_value(res, config, case, metric, **params)

    if case:
        what = f"1-byte append to {bench_b.size_text(size)}"
        ms, bms = g(toaster, "ms"), g(stock, "ms")
        floor = g(toaster, "floor_ms")
        first_ms = g(toaster, "ms_after_checkpoint")
        first = (f"; the first append after a checkpoint: {fmt_num(g(stock, 'ms_after_checkpoint'))}"
                 f" / {fmt_num(first_ms)} ms" if first_ms is not None and stock else "")
        if stock:
            v, ok = verdict_at_least(ratio(bms, ms), 1000.0)
            body.append([toaster, "B", f"{what}: speed-up over {stock}, median runs "
                         f"({fmt_num(bms)} / {fmt_num(ms)} ms{first}; {toaster}'s floor, an "
                         f"update of the row that leaves `data` alone: {fmt_num(floor)} ms)",
                         "≥ 1,000x", v, ok])
        wal, fpi = g(toaster, "wal_bytes"), g(toaster, "wal_fpi_bytes")
        other = f"; {stock}: {fmt_bytes(g(stock, 'wal_bytes'))}" if stock else ""
        first_wal = g(toaster, "wal_bytes_after_checkpoint")
        first = (f"; the first append after a checkpoint: {fmt_bytes(first_wal)}, "
                 f"{fmt_bytes(g(toaster, 'wal_fpi_bytes_after_checkpoint'))} of them "
                 "page images" if first_wal is not None else "")
        body.append([toaster, "B", f"{what}: WAL ("
                     f"{'-' if fpi is None else fmt_bytes(fpi)} of full-page images{other}"
                     f"{first})",
                     "≤ 16 kB", fmt_bytes(wal),
                     "**pass**" if wal <= 16 << 10 else "**FAIL**"])
        t0, t1 = g(toaster, "total_bytes_before"), g(toaster, "total_bytes_after")
        other = (f"; {stock}: {fmt_num(ratio(g(stock, 'total_bytes_after'), g(stock, 'total_bytes_before')))}x"
                 if stock else "")
        growth = ratio(t1, t0)
        # four digits: the limit is 1% above 1
        body.append([toaster, "B", f"{what}: total size of the table after / before "
                     f"({t1:,} / {t0:,} bytes{other})", "≤ 1.01x",
                     f"{fmt_num(growth, 4)}x", verdict(growth, 1.01)[1]])
        read = bench_b.SUBSTRING_CASE
        ms, bms = g(toaster, "ms", read), g(stock, "ms", read)
        if stock and ms is not None:
            v, ok = verdict_at_least(ratio(bms, ms), 1.0)
            body.append([toaster, "B", f"{read} of {bench_b.size_text(size)}: speed against "
                         f"{stock}, medians ({fmt_num(bms)} / {fmt_num(ms)} ms)",
                         "≥ 1x", v, ok])
    for target, s, c in b_stream_cases(res):
        pts = res.select(bench="B", config=toaster, case=c, metric="wal_bytes_max")
        if not pts:
            continue
        worst = max(p["value"] for p in pts)
        appended = sum(p["appends"] for p in pts)
        # the free space map's page images after a checkpoint (data
        # checksums) are logged once per checkpoint and relation, as stock's
        # chunk inserts log them: shown, and left out of the verdict
        bare = res.select(bench="B", config=toaster, case=c,
                          metric="wal_bytes_max_without_hint_fpi")
        hints = sum(p["value"] for p in res.select(bench="B", config=toaster, case=c,
                                                   metric="wal_hint_fpi_bytes"))
        judged = max(p["value"] for p in bare) if bare else worst
        hint_text = (f"; the most with the free space map's page images after the "
                     f"checkpoint, {fmt_bytes(hints)} in all: {fmt_bytes(worst)}"
                     if bare and hints else "")
        body.append([toaster, "B", f"{c}: WAL of each append, the most of {appended} "
                     f"(median at the start / end: "
                     f"{fmt_bytes(g(toaster, 'wal_bytes', c, position='start'))} / "
                     f"{fmt_bytes(g(toaster, 'wal_bytes', c, position='end'))}{hint_text})",
                     f"≤ {bench_b.size_text(s)} + 8 kB", fmt_bytes(judged),
                     "**pass**" if judged <= s + (8 << 10) else "**FAIL**"])
    for target, s, c in b_stream_cases(res):
        ms0 = g(toaster, "ms", c, position="start")
        ms1 = g(toaster, "ms", c, position="end")
        if ms0 is None or ms1 is None:
            continue
        f0 = g(toaster, "floor_ms", c, position="start")
        f1 = g(toaster, "floor_ms", c, position="end")
        floors = (f"; floors {fmt_num(f0)} / {fmt_num(f1)} ms"
                  if f0 is not None and f1 is not None else "")
        v, ok = verdict(ratio(ms1, ms0), 2.0)
        body.append([toaster, "B", f"{c}: median time per append at the end / at the "
                     f"start ({fmt_num(ms1)} / {fmt_num(ms0)} ms{floors})", "≤ 2x", v, ok])
    if not body:
        return None
    lines = ["## Benchmark B targets, as measured in this run", "",
             f"Appending to a `bytea`: {toaster} (the column opted in to "
             f"`bytea_appendable`) against {stock or 'no stock configuration'}; see "
             "\"B: appending to a bytea\" below for how.  Times are one psql round "
             "trip per statement, each its own transaction: on a busy machine they "
             "move by a few ms from one append to the next (the floor, an update of "
             "the same row that leaves `data` alone, shows how much); WAL and sizes "
             "are exact."]
    if size and size != bench_b.LARGE:
        lines[-1] += (f"  The targets are set for a value of "
                      f"{bench_b.size_text(bench_b.LARGE)} (scale 1); this run's is "
                      f"{bench_b.size_text(size)}.")
    lines += ["", table(["config", "bench", "measurement", "target", "measured", "result"],
                        body)]
    return "\n".join(lines)


def b_section(res, configs):
    """B's measurements: B(a)'s append and reads, B(b)'s groups by target."""
    stock, toaster = b_configs(res, configs)
    used = [c for c in (stock, toaster) if c]
    if not used:
        return None
    case, size = b_append_case(res)
    lines = ["## B: appending to a bytea", "",
             "One row `(id int PRIMARY KEY, data bytea)`, the column `STORAGE EXTERNAL` "
             "(uncompressed), in " + " and ".join(
                 f"{c} ({'opted in to `bytea_appendable`, override on' if CONFIGS[c].toaster else 'standard TOAST, override off'})"
                 for c in used) + ".  Every statement is its own transaction; its time "
             "is psql's round trip (`\\timing`) in a session that has already read "
             "the row; its WAL the difference of `pg_current_wal_insert_lsn()`.  The "
             "floor: an update of the same row that leaves `data` alone "
             "(`SET id = id`), timed in the same session after the appends: the "
             "least any append can take.", ""]
    if case:
        runs = res.select(bench="B", case=case, metric="ms")[0].get("runs", 1)
        lines += [f"**B(a), the talk's example**: `UPDATE t SET data = data || "
                  f"'\\x78'::bytea` twice on a row holding {bench_b.size_text(size)}, after "
                  f"a VACUUM and a CHECKPOINT, no VACUUM between the sizes before and after "
                  f"(`pg_total_relation_size`).  The second append is measured (what an "
                  f"append costs between checkpoints); the first, which logs an image of "
                  f"each page it is the first to change after the checkpoint, is shown in "
                  f"the last columns.  {runs} runs per configuration, the "
                  "configurations taking turns: the run of median time, the fastest and "
                  "slowest in parentheses.", ""]
        body = []
        for c in used:
            def g(metric):
                return b_value(res, c, case, metric)
            body.append([c, f"{fmt_num(g('ms'))} ({fmt_num(g('ms_min'))}-{fmt_num(g('ms_max'))})",
                         fmt_num(g("floor_ms")), fmt_bytes(g("wal_bytes")),
                         "-" if g("wal_fpi_bytes") is None else fmt_bytes(g("wal_fpi_bytes")),
                         f"{fmt_bytes(g('total_bytes_before'))} → "
                         f"{fmt_bytes(g('total_bytes_after'))}",
                         f"{fmt_num(ratio(g('total_bytes_after'), g('total_bytes_before')))}x",
                         fmt_num(g("ms_after_checkpoint")),
                         *("-" if g(m) is None else fmt_bytes(g(m))
                           for m in ("wal_bytes_after_checkpoint",
                                     "wal_fpi_bytes_after_checkpoint"))])
        if stock and toaster:
            def r(metric):
                return ratio(b_value(res, stock, case, metric),
                             b_value(res, toaster, case, metric))
            body.append([f"{stock} / {toaster}", f"**{fmt_num(r('ms'))}x**", "",
                         f"**{fmt_num(r('wal_bytes'))}x**", "", "", "",
                         f"{fmt_num(r('ms_after_checkpoint'))}x",
                         f"{fmt_num(r('wal_bytes_after_checkpoint'))}x", ""])
        lines += [table(["config", "ms", "floor ms", "WAL", "of which FPI",
                         "total size", "growth", "first: ms", "first: WAL",
                         "first: FPI"], body), ""]
        head = ["read of the value after the append"] + [f"{c} ms" for c in used]
        if stock and toaster:
            head.append(f"{stock} / {toaster}")
        body = []
        for read in (bench_b.SUBSTRING_CASE, bench_b.LENGTH_CASE):
            ms = [b_value(res, c, read, "ms") for c in used]
            if all(x is None for x in ms):
                continue
            m = res.select(bench="B", case=read, metric="ms")[0]
            label = (f"`substring(data FROM {m['offset']} FOR 1000)`" if "offset" in m
                     else f"`{read}`")
            row = [label] + [fmt_num(x) for x in ms]
            if stock and toaster:
                row.append(f"{fmt_num(ratio(ms[0], ms[1]))}x")
            body.append(row)
        if body:
            runs = res.select(bench="B", case=bench_b.SUBSTRING_CASE, metric="ms")
            n = runs[0].get("runs") if runs else "-"
            calls = runs[0].get("calls") if runs else None
            per = (f"the time of one read, from a statement making {calls} of them "
                   "(1 kB apart), " if calls else "")
            lines += [f"Reads, {per}the median of {n} sessions (each runs the query once "
                      "before timing it):", "", table(head, body), ""]
        digests = {c: b_value(res, c, "answers", "digest") for c in used}
        digests = {c: d for c, d in digests.items() if d}
        if digests:
            same = len(set(digests.values())) == 1
            lines += ["Answers: " + ("the same value in every configuration (`md5` and "
                                     "length after the append)." if same else
                                     "**DIFFER between configurations**: " +
                                     ", ".join(f"{c} `{d}`" for c, d in digests.items())),
                      ""]
    cases = b_stream_cases(res)
    if cases:
        lines += ["**B(b), the stream**: for each append size and target size, a fresh "
                  "row holding an empty `bytea` gets a group of appends (the start), "
                  "is grown in one unmeasured append so that the next group ends at the "
                  "target (never shrunk: a start group that passed the target is followed "
                  "directly), and gets a second group (the end).  Per group: the median "
                  "time per append (fastest-slowest), the floor's median, the WAL per "
                  "append (median / most) and the shared buffers of the first and last "
                  "append (`EXPLAIN (ANALYZE, BUFFERS)` of the same `UPDATE`).", ""]
        for target in sorted({t for t, _, _ in cases}):
            body = []
            for _, s, c in [x for x in cases if x[0] == target]:
                for position in ("start", "end"):
                    for c_ in used:
                        def g(metric):
                            return b_value(res, c_, c, metric, position=position)
                        m = res.select(bench="B", config=c_, case=c, metric="ms",
                                       position=position)
                        if not m:
                            continue
                        m = m[0]
                        body.append([bench_b.size_text(s) if position == "start" and c_ == used[0]
                                     else "", position if c_ == used[0] else "", c_,
                                     f"{fmt_bytes(m['row_from'])} → {fmt_bytes(m['row_to'])}",
                                     m["appends"],
                                     f"{fmt_num(g('ms'))} ({fmt_num(g('ms_min'))}-"
                                     f"{fmt_num(g('ms_max'))})",
                                     fmt_num(g("floor_ms")),
                                     f"{fmt_bytes(g('wal_bytes'))} / "
                                     f"{fmt_bytes(g('wal_bytes_max'))}",
                                     f"{fmt_num(g('buffers_first'))} / "
                                     f"{fmt_num(g('buffers_last'))}"])
            lines += [f"*Appends up to {bench_b.size_text(target)}*", "",
                      table(["append", "at", "config", "row", "appends", "ms per append",
                             "floor ms", "WAL median / most", "buffers first / last"], body),
                      ""]
    return "\n".join(lines).rstrip("\n")


def render(res, configs, header):
    sections = [header]
    replica = res.at_wal_level("replica")
    for f in (targets_section, issue6_section, b_targets_section, s_section, i_section,
              u_section, p_section, r_section, m_section, y_section, q_section, c_section,
              b_section):
        s = f(replica, configs)
        if s:
            sections.append(s)
    s = logical_section(res.at_wal_level("logical"), configs)
    if s:
        sections.append(s)
    return "\n\n".join(sections) + "\n"
