"""PNG plots of a run, drawn from the results (matplotlib, Agg backend)."""

import os
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

from . import bench_m, bench_r, bench_y  # noqa: E402
from .bench_i import QUERIES  # noqa: E402
from .bench_s import KEYS  # noqa: E402
from .bench_u import CASES  # noqa: E402

MARKERS = "os^vD<>"
# plain numbers on log axes (1,000 rather than 10^3)
THOUSANDS = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}")


def plot_s(res, configs, out):
    pts = res.select(bench="S", metric="ms_per_call")
    if not pts:
        return
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharex=True)
    for ax, key in zip(axes.flat, KEYS):
        for i, c in enumerate(configs):
            p = sorted(res.select(bench="S", config=c, case=key, metric="ms_per_call"),
                       key=lambda r: r["stored_size"])
            # Points, not a line: stored size is not monotonic in the row
            # (compression starts above 2 kB raw), so a line would zigzag.
            ax.plot([r["stored_size"] for r in p], [r["value"] * 1000 for r in p],
                    marker=MARKERS[i % len(MARKERS)], markersize=3, linestyle="none",
                    label=c)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"jb -> '{key}'")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_ylabel("µs per call")
    for ax in axes[1]:
        ax.set_xlabel("stored document size (bytes)")
    axes[0][0].legend()
    finish(fig, "S: time per access against stored size", out, "S")


def plot_i(res, configs, out):
    pts = res.select(bench="I", metric="us_per_access")
    if not pts:
        return
    nrows = (len(QUERIES) + 2) // 3
    fig, axes = plt.subplots(nrows, 3, figsize=(14, 4 * nrows))
    for ax in list(axes.flat)[len(QUERIES):]:
        ax.set_visible(False)
    for ax, case in zip(axes.flat, QUERIES):
        for i, c in enumerate(configs):
            p = sorted(res.select(bench="I", config=c, case=case, metric="us_per_access"),
                       key=lambda r: r["mean_stored_size"])
            line, = ax.plot([r["mean_stored_size"] for r in p], [r["value"] for r in p],
                            marker=MARKERS[i % len(MARKERS)], markersize=4, label=c)
            floor = sorted(res.select(bench="I", config=c, case="scan floor",
                                      metric="us_per_access"),
                           key=lambda r: r["mean_stored_size"])
            ax.plot([r["mean_stored_size"] for r in floor], [r["value"] for r in floor],
                    linestyle=":", color=line.get_color(), linewidth=1,
                    label=f"{c} scan floor")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(case)
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xlabel("mean stored size of the bucket (bytes)")
        ax.set_ylabel("µs per access")
    axes[0][0].legend(fontsize=7)
    finish(fig, "I: IMDB-like documents, time per access by size bucket", out, "I")


def plot_u(res, configs, out):
    if not res.select(bench="U", metric="wal_bytes"):
        return
    # the cases this run measured (earlier runs lack the newer ones)
    cases = [c for c, _ in CASES if res.select(bench="U", case=c, metric="wal_bytes")]
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(16, 5))
    width = 0.8 / max(1, len(configs))
    for i, c in enumerate(configs):
        xs = [j + i * width for j in range(len(cases))]
        wal = [res.one(bench="U", config=c, case=k, metric="wal_bytes") / 2**20 for k in cases]
        ms = [res.one(bench="U", config=c, case=k, metric="ms") for k in cases]
        toast = [res.one(bench="U", config=c, case=k, metric="toast_bytes_after") / 2**20
                 for k in cases]
        ax1.bar(xs, wal, width, label=c)
        ax2.bar(xs, ms, width, label=c)
        ax3.bar(xs, toast, width, label=c)
    for ax, title, scale in [(ax1, "WAL (MB, log scale)", "log"),
                             (ax2, "duration (ms, log scale)", "log"),
                             (ax3, "TOAST relation after the update (MB)", "linear")]:
        ax.set_xticks([j + width * (len(configs) - 1) / 2 for j in range(len(cases))])
        ax.set_xticklabels(cases, rotation=30, ha="right", fontsize=8)
        ax.set_title(title)
        ax.set_yscale(scale)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    ax1.legend()
    finish(fig, "U: updating every row of the 1000-key table", out, "U")


def plot_p(res, configs, out):
    if not res.select(bench="P"):
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    width = 0.35
    for j, phase in enumerate(["before", "after"]):
        xs = [i + j * width for i in range(len(configs))]
        ax1.bar(xs, [res.one(bench="P", config=c, metric="buffers", phase=phase) for c in configs],
                width, label=phase)
        ax2.bar(xs, [res.one(bench="P", config=c, metric="ms", phase=phase) for c in configs],
                width, label=phase)
    for ax, title in [(ax1, "shared buffer accesses"), (ax2, "execution time (ms)")]:
        ax.set_xticks([i + width / 2 for i in range(len(configs))])
        ax.set_xticklabels(configs)
        ax.set_title(title)
        ax.grid(True, axis="y", alpha=0.3)
    ax1.legend()
    finish(fig, "P: SELECT jb->'id' before and after a tiny update", out, "P")


def finish(fig, title, out, name):
    """Title the figure, save it as <name>.png in out and free it."""
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(os.path.join(out, f"{name}.png"), dpi=90)
    plt.close(fig)


def log_bar_axes(axes_titles, labels, rotation):
    """Label the groups of grouped bars, on log scales with a grid."""
    for ax, title in axes_titles:
        ax.set_xticklabels(labels, rotation=rotation, ha="right", fontsize=8)
        ax.set_yscale("log")
        ax.set_title(title)
        ax.grid(True, axis="y", which="both", alpha=0.3)


def grouped_bars(ax, groups, configs, value, width):
    """One group of bars per entry of groups, one bar per configuration."""
    for i, c in enumerate(configs):
        xs = [j + i * width for j in range(len(groups))]
        ax.bar(xs, [value(c, g) for g in groups], width, label=c)
    ax.set_xticks([j + width * (len(configs) - 1) / 2 for j in range(len(groups))])


def plot_r(res, configs, out):
    configs = [c for c in configs if res.select(bench="R", config=c, metric="buffers")]
    if not configs:
        return
    cases = [c for c, _ in bench_r.QUERIES]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5))
    width = 0.8 / len(configs)
    grouped_bars(ax1, cases, configs,
                 lambda c, k: res.one(bench="R", config=c, case=k, metric="buffers"), width)
    grouped_bars(ax2, cases, configs,
                 lambda c, k: res.one(bench="R", config=c, case=k, metric="ms"), width)
    heap = [res.one(bench="R", config=c, case="table", metric="heap_pages") for c in configs]
    log_bar_axes([(ax1, "shared buffer accesses (log scale; dotted: heap pages)"),
                  (ax2, "execution time incl. serialisation (ms, log scale)")], cases, 15)
    for h in sorted(set(heap)):
        ax1.axhline(h, linestyle=":", color="grey", linewidth=1)
    ax1.legend(fontsize=8)
    finish(fig, "R: projections of user documents", out, "R")


def plot_m(res, configs, out):
    configs = [c for c in configs if res.select(bench="M", config=c, metric="buffers")]
    if not configs:
        return
    filters = bench_m.FILTERS
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5))
    width = 0.8 / len(configs)
    grouped_bars(ax1, filters, configs,
                 lambda c, f: res.one(bench="M", config=c, case=f, metric="ms"), width)
    grouped_bars(ax2, filters, configs,
                 lambda c, f: res.one(bench="M", config=c, case=f, metric="buffers"), width)
    log_bar_axes([(ax1, "execution time (ms, log scale)"),
                  (ax2, "shared buffer accesses (log scale)")], filters, 10)
    ax1.legend(fontsize=8)
    finish(fig, "M: sequential-scan filters on MARC-like records", out, "M")


def plot_y(res, configs, out):
    configs = [c for c in configs if res.select(bench="Y", config=c, metric="tps")]
    kinds = [k for k in bench_y.KINDS if res.select(bench="Y", doc=k, metric="tps")]
    if not configs or not kinds:
        return
    workloads = [w for w, _ in bench_y.WORKLOADS
                 if res.select(bench="Y", case=w, metric="tps")]
    clients = sorted({p["clients"] for p in res.select(bench="Y", metric="tps")})
    fig, axes = plt.subplots(len(kinds), len(workloads),
                             figsize=(4.5 * len(workloads), 4.5 * len(kinds)),
                             squeeze=False)
    for row, kind in zip(axes, kinds):
        for ax, workload in zip(row, workloads):
            for i, c in enumerate(configs):
                p = sorted(res.select(bench="Y", config=c, doc=kind, case=workload,
                                      metric="tps"), key=lambda r: r["clients"])
                # stock dashed, partial dotted, toaster solid: the storage
                # families stay apart whatever the colours
                style = ":" if c.startswith("partial") else "--" if c.startswith("stock") else "-"
                ax.plot([r["clients"] for r in p], [r["value"] for r in p],
                        marker=MARKERS[i % len(MARKERS)], markersize=5, linestyle=style,
                        label=c)
            ax.set_xscale("log", base=2)
            ax.set_xticks(clients)
            ax.set_xticklabels([str(n) for n in clients])
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(THOUSANDS)
            ax.yaxis.set_minor_formatter(THOUSANDS)
            ax.tick_params(axis="y", which="minor", labelsize=7)
            ax.set_title(textwrap.fill(f"{kind}: {workload} ({bench_y.WORKLOAD_TEXT[workload]})",
                                       50), fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            ax.set_xlabel("clients")
            ax.set_ylabel("transactions per second (log scale)")
    axes[0][0].legend(fontsize=8)
    finish(fig, "Y: YCSB-style load, throughput against clients", out, "Y")


def plot_c(res, configs, out):
    """The inline budget's trade: WAL of other-column updates against the
    cost of a short-field read, both relative to stock, one curve per
    dataset and configuration, each point a budget."""
    from .bench_c import BUDGET_FIELDS
    from .configs import ALL as CONFIGS
    if not res.select(bench="C", metric="short_field_us"):
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5))
    drawn = False
    for c in configs:
        base = CONFIGS[c].baseline if c in CONFIGS else None
        for i, case in enumerate(BUDGET_FIELDS):
            name = f"{case} budget"
            pts = sorted(res.select(bench="C", config=c, case=name, metric="total_bytes"),
                         key=lambda r: r["budget"])
            stock = {m: res.select(bench="C", config=base, case=name, metric=m)
                     for m in ("other_column_update", "short_field_us")}
            if not pts or not all(stock.values()):
                continue
            budgets = [p["budget"] for p in pts]

            def rel(metric):
                return [res.select(bench="C", config=c, case=name, metric=metric,
                                   budget=b)[0]["value"] / stock[metric][0]["value"]
                        for b in budgets]
            label = f"{case}, {c}"
            ax1.plot(budgets, rel("other_column_update"), marker=MARKERS[i % len(MARKERS)],
                     label=label)
            ax2.plot(budgets, rel("short_field_us"), marker=MARKERS[i % len(MARKERS)],
                     label=label)
            drawn = True
    if not drawn:
        plt.close(fig)
        return
    for ax, title in ((ax1, "WAL per row of UPDATE .. SET id = id + 1, / stock"),
                      (ax2, "reading one short field, time per row / stock (log scale)")):
        ax.set_xlabel("inline_budget (bytes)")
        ax.set_title(title, fontsize=10)
        ax.axhline(1, color="grey", linewidth=1)
        ax.grid(True, which="both", alpha=0.3)
    ax2.set_yscale("log")
    ax1.legend(fontsize=8)
    finish(fig, "C: what a column's inline budget buys", out, "C")


def draw_all(res, configs, out):
    for f in (plot_s, plot_i, plot_u, plot_p, plot_r, plot_m, plot_y, plot_c):
        f(res, configs, out)
