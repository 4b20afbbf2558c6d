"""Talking to the benchmark instance through psql and pgbench.

Only command-line clients are used (no driver to install), so every step
can be replayed by hand with the same tools.
"""

import glob
import json
import math
import os
import re
import statistics
import subprocess
import sys

PSQL = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1"]


class DBError(RuntimeError):
    pass


def _env(options):
    env = dict(os.environ)
    if options:
        env["PGOPTIONS"] = (env.get("PGOPTIONS", "") + " " + options).strip()
    return env


def _run(cmd, input_text=None, options=None):
    p = subprocess.run(cmd, input=input_text, capture_output=True, text=True,
                       env=_env(options))
    if p.returncode != 0:
        raise DBError(f"{' '.join(cmd[:3])}... failed:\n{p.stderr.strip()}")
    return p.stdout


def execute(sql, options=None):
    """Run one or more statements; return nothing.

    options: a PGOPTIONS string (session settings of a configuration)."""
    _run(PSQL, input_text=sql, options=options)


def query(sql, options=None):
    """Run a query; return its rows as lists of strings.

    options: a PGOPTIONS string (session settings of a configuration)."""
    out = _run(PSQL + ["-A", "-t", "-F", "\t"], input_text=sql, options=options)
    return [line.split("\t") for line in out.splitlines() if line != ""]


def output(sql, options=None):
    """Run a query; return its unaligned output as one string (for
    multi-line values such as EXPLAIN (FORMAT JSON))."""
    return _run(PSQL + ["-A", "-t"], input_text=sql, options=options)


def value(sql, options=None):
    rows = query(sql, options)
    if len(rows) != 1 or len(rows[0]) != 1:
        raise DBError(f"expected one value from: {sql}")
    return rows[0][0]


def timed(sql, setup="", options=None):
    """Run setup, then sql with \\timing; return the server round trip of
    the last statement of sql in milliseconds."""
    out = _run(PSQL, input_text=f"{setup}\n\\timing on\n{sql}\n", options=options)
    times = re.findall(r"^Time: ([0-9.]+) ms", out, re.M)
    if not times:
        raise DBError(f"no timing in psql output for: {sql}")
    return float(times[-1])


def explain(sql, options=None, serialize=True):
    """Run EXPLAIN (ANALYZE, BUFFERS, TIMING OFF[, SERIALIZE text]) of a
    query; return (buffers, execution ms).

    buffers counts shared buffer accesses (hits and reads) of the plan and,
    with serialize, of turning the result into text as it would be sent
    (which is where a returned TOASTed value is fetched); planning's own
    accesses are left out.  TIMING OFF: per-node clocks are not needed, and
    the execution time is then less inflated by them."""
    opts = "ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON" + (", SERIALIZE text" if serialize else "")
    plan = json.loads(output(f"EXPLAIN ({opts}) {sql}", options))[0]
    buffers = 0
    for part in (plan["Plan"], plan.get("Serialization", {})):
        buffers += part.get("Shared Hit Blocks", 0) + part.get("Shared Read Blocks", 0)
    return buffers, plan["Execution Time"]


def copy_in(table, path, options=None):
    execute(f"\\copy {table} FROM '{path}'", options)


def pgbench(script, variables, runs, options=None, transactions=1):
    """Run a pgbench custom script `runs` times, one transaction each;
    return the latency of each run in ms.

    The figure is pgbench's "latency average", which without -l, -P or -R is
    the elapsed time of the run after connecting.  (pgbench's per-transaction
    log is not used: for transactions that complete without the client
    waiting, it can record a latency of 0.)

    options: a PGOPTIONS string (session settings of the configuration);
    transactions: per run (pgbench -t), the latency being their average."""
    cmd = ["pgbench", "-n", "-t", str(transactions), "-f", script]
    for k, v in variables.items():
        cmd += ["-D", f"{k}={v}"]
    lat = []
    for _ in range(runs):
        out = _run(cmd, options=options)
        m = re.search(r"^latency average = ([0-9.]+) ms", out, re.M)
        if not m:
            raise DBError(f"no latency in pgbench output for {script} {variables}:\n{out}")
        lat.append(float(m.group(1)))
    return lat


def pgbench_load(scripts, variables, clients, seconds, options=None, log_prefix=None,
                 seed=None, threads=None, protocol="simple"):
    """Run pgbench custom scripts with `clients` concurrent clients for
    `seconds` seconds (-T); return a dict:

      tps           pgbench's "tps" (without initial connection time)
      transactions  transactions processed
      failed        failed transactions
      latencies     {script number: [latency of each transaction in µs]},
                    from pgbench's per-transaction log (-l), when
                    log_prefix is given (the log files are removed after)
      failed_in_log transactions the log marks as failed

    scripts: [(path, weight)], numbered from 0 in that order (pgbench's
    script_no); threads: pgbench -j, default min(clients, cores);
    protocol: pgbench -M (simple, extended or prepared).

    The per-transaction log records the time from the start of a
    transaction to the moment pgbench reads its result.  pgbench reads the
    clock lazily: a transaction whose result is already there when pgbench
    first looks (it was descheduled between sending and looking) is logged
    with a latency of 0, its real time lost.  The caller can count them.

    options: a PGOPTIONS string (session settings of the configuration)."""
    threads = threads or max(1, min(clients, os.cpu_count() or 1))
    cmd = ["pgbench", "-n", "-M", protocol, "-c", str(clients), "-j", str(threads),
           "-T", str(seconds)]
    for path, weight in scripts:
        cmd += ["-f", f"{path}@{weight}"]
    if seed is not None:
        cmd += ["--random-seed", str(seed)]
    for k, v in variables.items():
        cmd += ["-D", f"{k}={v}"]
    if log_prefix:
        cmd += ["-l", "--log-prefix", log_prefix]
    try:
        out = _run(cmd, options=options)
        result = {}
        for key, pattern in (("tps", r"^tps = ([0-9.]+) \(without initial connection time\)"),
                             ("transactions", r"^number of transactions actually processed: (\d+)"),
                             ("failed", r"^number of failed transactions: (\d+)")):
            m = re.search(pattern, out, re.M)
            if not m and key != "failed":
                raise DBError(f"no {key} in pgbench output for {scripts} {variables}:\n{out}")
            result[key] = (float if key == "tps" else int)(m.group(1)) if m else 0
        if log_prefix:
            latencies, failed = {}, 0
            for path in sorted(glob.glob(glob.escape(log_prefix) + ".*")):
                with open(path) as f:
                    for line in f:
                        # client_id transaction_no time script_no time_epoch time_us
                        fields = line.split()
                        if len(fields) < 4:
                            continue
                        if not fields[2].isdigit():  # "failed", "serialization", ...
                            failed += 1
                            continue
                        latencies.setdefault(int(fields[3]), []).append(int(fields[2]))
            result["latencies"] = latencies
            result["failed_in_log"] = failed
        return result
    finally:
        if log_prefix:
            for path in glob.glob(glob.escape(log_prefix) + ".*"):
                os.remove(path)


def percentile(sorted_xs, p):
    """The p-th percentile (0-100) of a sorted list, nearest rank."""
    if not sorted_xs:
        return None
    k = max(0, min(len(sorted_xs) - 1, math.ceil(p / 100 * len(sorted_xs)) - 1))
    return sorted_xs[k]


def median(xs):
    return statistics.median(xs)


def relation_sizes(table, pages=False):
    """(heap, TOAST) sizes of a table, in bytes or in pages."""
    unit = " / current_setting('block_size')::int" if pages else ""
    heap, toast = query(
        f"SELECT pg_relation_size('{table}'){unit}, "
        f"coalesce(pg_relation_size(reltoastrelid), 0){unit} "
        f"FROM pg_class WHERE oid = '{table}'::regclass")[0]
    return int(heap), int(toast)


def fpi_bytes(lsn0, lsn1):
    """Bytes of full-page images in the WAL between two LSNs (pg_walinspect),
    or None if it cannot be read."""
    try:
        # a transaction's commit flushes the WAL up to lsn1, which
        # pg_get_wal_stats needs: hint-bit images may not be flushed yet
        value("SELECT txid_current()")
        return int(value(f"SELECT coalesce(sum(fpi_size), 0) "
                         f"FROM pg_get_wal_stats('{lsn0}', '{lsn1}')"))
    except DBError:
        return None


def generated_data(args, log, bench, what, script, count):
    """The COPY file a generator script (bench/<script>) writes for count
    rows and args.seed, made once per work directory."""
    stem = os.path.splitext(os.path.basename(script))[0]
    data = os.path.join(args.work, f"{stem}-{count}-{args.seed}.copy")
    if not os.path.exists(data):
        log(f"{bench}: generating {count} {what} (seed {args.seed})")
        with open(data + ".tmp", "w") as out:
            subprocess.run([sys.executable,
                            os.path.join(os.path.dirname(__file__), "..", script),
                            "--count", str(count), "--seed", str(args.seed)],
                           stdout=out, check=True)
        os.rename(data + ".tmp", data)
    return data
