#!/usr/bin/env python3
"""Run the jsonb_toaster benchmarks against a running server.

Usually started by tools/bench.sh, which builds the benchmark server,
starts a temporary instance and sets PGHOST/PGPORT.  Run by hand against
any server that has the extension installed:

  PGHOST=... PGPORT=... bench/run.py --bench S,P --out /tmp/bench

Writes to --out: results.jsonl (one JSON object per measurement),
report.md (tables and headline ratios), and PNG plots; prints the report.
"""

import argparse
import datetime
import os
import shlex
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from jtbench import bench_b, bench_c, bench_i, bench_m, bench_p, bench_q, bench_r, bench_s, bench_u, bench_y  # noqa: E402
from jtbench import configs, db, plots, report  # noqa: E402
from jtbench.results import Results  # noqa: E402

BENCHES = {"S": bench_s, "I": bench_i, "U": bench_u, "P": bench_p, "R": bench_r, "M": bench_m,
           "Y": bench_y, "Q": bench_q, "C": bench_c, "B": bench_b}


def machine_description():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{platform.machine()}, {cpu}, {os.cpu_count()} cores, {mem:.0f} GB RAM"


def header(args, configs_used, started, elapsed):
    version = db.value("SELECT version()")
    settings = db.query(
        "SELECT name, setting, unit FROM pg_settings WHERE name IN "
        "('shared_buffers', 'work_mem', 'max_wal_size', 'wal_level', 'jit', "
        "'debug_assertions', 'fsync', 'synchronous_commit', 'full_page_writes', "
        "'autovacuum', 'data_checksums', 'jsonb_toaster.inline_budget', "
        "'jsonb_toaster.range_size', 'jsonb_toaster.override_builtins') ORDER BY name")
    configure = subprocess.run(["pg_config", "--configure"], capture_output=True,
                               text=True).stdout.strip()
    lines = [
        "# jsonb_toaster benchmark report",
        "",
        f"- started: {started:%Y-%m-%d %H:%M} UTC, took {elapsed / 60:.1f} min",
        f"- command: `{' '.join(args.command)}`",
        f"- code: {args.revision or 'not recorded'}",
        f"- machine: {machine_description()}",
        f"- server: {version}",
        f"- configure: `{configure}`",
        "- settings: " + ", ".join(f"{n}={s}{u or ''}" for n, s, u in settings),
        f"- configurations: {', '.join(c.name for c in configs_used)}; "
        f"benchmarks: {', '.join(args.bench)}; scale {args.scale}",
        "- sessions: " + "; ".join(
            f"{c.name}: `{c.session_options}`"
            + (", column opted in to the toaster" if c.toaster else "")
            for c in configs_used),
        "",
        "Every figure below is read from `results.jsonl` of this run.",
    ]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--bench", default=",".join(BENCHES),
                    help=f"benchmarks to run, comma-separated (default: {','.join(BENCHES)})")
    ap.add_argument("--configs", default=",".join(configs.DEFAULT),
                    help=f"configurations (default: {','.join(configs.DEFAULT)})")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="data size factor for I, U, P, R, M, Y and B (1.0 = the sizes of "
                         "docs/benchmarks.md; Y: also the duration of each pgbench run; "
                         "B: the large value, 100 MB at 1.0, at least 1 MB)")
    ap.add_argument("--s-step", type=int, default=1,
                    help="S: measure every Nth row (plus the first and last); 1 = all 100")
    ap.add_argument("--s-target-ms", type=float, default=200.0,
                    help="S: aim for this much time per measured query")
    ap.add_argument("--q-step", type=int, default=11,
                    help="Q: measure every q-step-th row of S's table (and the last)")
    ap.add_argument("--q-target-ms", type=float, default=50.0,
                    help="Q: size the repetitions so that one query takes about this")
    ap.add_argument("--q-runs", type=int, default=3,
                    help="Q: runs per point, the fastest counting")
    ap.add_argument("--q-assignments", type=int, default=20,
                    help="Q: subscript assignments per row and configuration")
    ap.add_argument("--q-whole-runs", type=int, default=7,
                    help="Q: rounds of the whole-document consumers, the two "
                         "configurations of a pair taking turns")
    ap.add_argument("--q-whole-transactions", type=int, default=2,
                    help="Q: transactions per round of a whole-document consumer")
    ap.add_argument("--c-budgets", default="0,100,200,400,800,1200,2000",
                    help="C: inline budgets of the trade between short-field reads and "
                         "row size, comma-separated (empty: none)")
    ap.add_argument("--i-transactions", type=int, default=7,
                    help="I: timed runs per bucket and query (median kept)")
    ap.add_argument("--u-runs", type=int, default=3,
                    help="U: timed runs of each update per configuration, the "
                         "configurations taking turns (median kept)")
    ap.add_argument("--b-runs", type=int, default=3,
                    help="B: timed runs of the 1-byte append to the large value per "
                         "configuration, the configurations taking turns (median kept)")
    ap.add_argument("--b-appends", type=int, default=20,
                    help="B: timed appends of each size at the start and at the end of "
                         "each target size (stock: at most 5 at the end of the large one)")
    ap.add_argument("--rm-runs", type=int, default=9,
                    help="R, M: timed runs per query and configuration (median kept)")
    ap.add_argument("--y-seconds", type=int, default=None,
                    help="Y: duration of each pgbench run in seconds "
                         "(default: 2 x scale, at least 1)")
    ap.add_argument("--y-clients", default="1,2,4,8",
                    help="Y: client counts, comma-separated (default: 1,2,4,8)")
    ap.add_argument("--y-age", type=int, default=None,
                    help="Y: updates of every document before the updating "
                         "workloads (default: 10; 0: none)")
    ap.add_argument("--y-rounds", type=int, default=None,
                    help="Y: runs of issue 6's target point (workload A and its "
                         "floor, large documents, 4 clients), the configurations "
                         "taking turns, the median kept (default: 3)")
    ap.add_argument("--logical", default="U,Y",
                    help="benchmarks tools/bench.sh runs again on its instance restarted "
                         "with wal_level = logical, comma-separated, among those of "
                         "--bench (empty: none); bench/run.py itself measures at the "
                         "server's wal_level")
    ap.add_argument("--wal-level", choices=["replica", "logical"], default=None,
                    help="the wal_level the server must have (its lines then carry "
                         "\"wal_level\" when it is logical)")
    ap.add_argument("--append", action="store_true",
                    help="add to the results.jsonl and report of --out rather than "
                         "start them anew (tools/bench.sh's wal_level = logical pass)")
    ap.add_argument("--seed", type=int, default=42,
                    help="I, R, M: generator seed; Y: pgbench's random seed")
    ap.add_argument("--out", default="bench/out", help="output directory")
    ap.add_argument("--revision", default=None,
                    help="the code measured, for the report (tools/bench.sh passes "
                         "the commit and whether the build's sources differ from it)")
    ap.add_argument("--work", default=None,
                    help="scratch directory for generated data (default: OUT/work)")
    ap.add_argument("--render", metavar="DIR", default=None,
                    help="only redraw report.md and the plots of an earlier run in DIR")
    args = ap.parse_args()
    if args.render:
        render_only(args.render)
        return
    args.bench = [b.strip().upper() for b in args.bench.split(",") if b.strip()]
    unknown = [b for b in args.bench if b not in BENCHES]
    if unknown:
        ap.error(f"unknown benchmark(s) {unknown}; choose among {list(BENCHES)}")
    # tools/bench.sh passes its own command line (argparse would take the
    # options of a command given as arguments for its own)
    command = os.environ.get("JT_BENCH_COMMAND")
    command = shlex.split(command) if command else [sys.argv[0]] + sys.argv[1:]
    # the output and scratch directories are chosen by the driver, not part
    # of what makes a run reproducible (and the revision is shown apart)
    cmd, skip = [], False
    for a in command:
        if skip:
            skip = False
        elif a in ("--out", "--work", "--revision"):
            skip = True
        elif not a.startswith(("--out=", "--work=", "--revision=")):
            cmd.append(a)
    args.command = cmd
    configs_used = configs.select([c.strip() for c in args.configs.split(",") if c.strip()])
    os.makedirs(args.out, exist_ok=True)
    args.work = args.work or os.path.join(args.out, "work")
    os.makedirs(args.work, exist_ok=True)

    def log(m):
        print(f"[bench {time.strftime('%H:%M:%S')}] {m}", file=sys.stderr, flush=True)

    db.execute("CREATE EXTENSION IF NOT EXISTS jsonb_toaster")
    for cfg in configs_used:
        cfg.check()
    level = db.value("SHOW wal_level")
    if args.wal_level and args.wal_level != level:
        raise SystemExit(f"the server runs with wal_level = {level}, not {args.wal_level}")
    # lines measured under logical say so; replica's stay as they always were
    defaults = {"wal_level": level} if level == "logical" else {}
    path = os.path.join(args.out, "results.jsonl")
    if args.append and os.path.exists(path):
        results = Results.load(path, defaults)
    else:
        results = Results(path, defaults=defaults)
    started = datetime.datetime.now(datetime.timezone.utc)
    t0 = time.time()
    for b in args.bench:
        bt = time.time()
        BENCHES[b].run(configs_used, results, args, log)
        log(f"{b} finished in {time.time() - bt:.0f} s")
    head = header(args, configs_used, started, time.time() - t0)
    head_path = os.path.join(args.out, "header.md")
    if args.append and os.path.exists(head_path):
        with open(head_path) as f:
            head = (f.read().rstrip("\n") + "\n\n"
                    f"Then on the instance restarted with wal_level = {level}: "
                    f"{', '.join(args.bench)}, started {started:%Y-%m-%d %H:%M} UTC, took "
                    f"{(time.time() - t0) / 60:.1f} min (section \"Under wal_level = "
                    f"{level}\").")
    with open(head_path, "w") as f:
        f.write(head)
    render(results, [c.name for c in configs_used], args.out, head)
    log(f"report, plots and results.jsonl written to {args.out}")


def render(results, names, out, head):
    plots.draw_all(results.at_wal_level("replica"), names, out)
    text = report.render(results, names, head)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(text)
    print(text)


def render_only(out):
    """Redraw the report and plots of an earlier run from its files."""
    results = Results.load(os.path.join(out, "results.jsonl"))
    with open(os.path.join(out, "header.md")) as f:
        head = f.read()
    # configurations only: M's "reference" rows are a point of comparison
    names = [n for n in dict.fromkeys(r["config"] for r in results.rows)
             if n in configs.ALL]
    render(results, names, out, head)


if __name__ == "__main__":
    main()
