"""Comparison tables and the markdown report, computed from the results.

Nothing here is typed in by hand: every figure is read back from the
measurements of the run (results.jsonl).
"""

import statistics

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


def i_section(res, configs):
    pts = res.select(bench="I", metric="us_per_access")
    if not pts:
        return None
    lines = ["## I: IMDB-like documents", "",
             "Mean time per access (µs) by storage form and stored-size bucket; "
             "documents per bucket in parentheses (first configuration).  The scan "
             "floor visits the same documents without reading them; the net "
             "speedup compares times after taking each configuration's floor "
             "away.  Buckets of fewer than 5 documents are not timed.", ""]
    buckets = sorted({p["bucket"] for p in pts})
    compared = [c for c in configs if CONFIGS[c].baseline in configs]

    def value(c, case, b):
        m = res.select(bench="I", config=c, case=case, metric="us_per_access", bucket=b)
        return m[0] if m else None

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
                m, base = value(c, case, b), value(CONFIGS[c].baseline, case, b)
                row.append(f"{fmt_num(ratio(base['value'], m['value']))}x" if m and base else "-")
            if case != "scan floor":
                # the same, after taking away each configuration's scan floor
                for c in compared:
                    b_cfg = CONFIGS[c].baseline
                    m, base = value(c, case, b), value(b_cfg, case, b)
                    fm, fb = value(c, "scan floor", b), value(b_cfg, "scan floor", b)
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
    lines.append("![I](I.png)")
    return "\n".join(lines)


def u_section(res, configs):
    if not res.select(bench="U"):
        return None
    lines = ["## U: partial update", "",
             "UPDATE of every row of the 1000-key table; ratios against the "
             "`id = id + 1` floor of the same configuration.", ""]
    body = []
    for case, _ in CASES:
        for c in configs:
            def g(metric):
                m = res.select(bench="U", config=c, case=case, metric=metric)
                return m[0]["value"] if m else None
            ms, wal = g("ms"), g("wal_bytes")
            fl_ms = res.one(bench="U", config=c, case="id = id + 1", metric="ms")
            fl_wal = res.one(bench="U", config=c, case="id = id + 1", metric="wal_bytes")
            body.append([f"`{case}`", c, fmt_num(ms), f"{fmt_num(ratio(ms, fl_ms))}x",
                         fmt_bytes(wal), f"{fmt_num(ratio(wal, fl_wal))}x",
                         f"{fmt_bytes(g('toast_bytes_before'))} → {fmt_bytes(g('toast_bytes_after'))}",
                         f"{fmt_num(ratio(g('toast_bytes_after'), g('toast_bytes_before')))}x",
                         f"{fmt_bytes(g('heap_bytes_before'))} → {fmt_bytes(g('heap_bytes_after'))}"])
    lines.append(table(["update", "config", "ms", "vs floor", "WAL", "vs floor",
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


def render(res, configs, header):
    sections = [header]
    for f in (s_section, i_section, u_section, p_section):
        s = f(res, configs)
        if s:
            sections.append(s)
    return "\n\n".join(sections) + "\n"
