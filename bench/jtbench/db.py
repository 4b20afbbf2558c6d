"""Talking to the benchmark instance through psql and pgbench.

Only command-line clients are used (no driver to install), so every step
can be replayed by hand with the same tools.
"""

import os
import re
import statistics
import subprocess
import tempfile

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


def execute(sql):
    """Run one or more statements; return nothing."""
    _run(PSQL, input_text=sql)


def query(sql, options=None):
    """Run a query; return its rows as lists of strings.

    options: a PGOPTIONS string (session settings of a configuration)."""
    out = _run(PSQL + ["-A", "-t", "-F", "\t"], input_text=sql, options=options)
    return [line.split("\t") for line in out.splitlines() if line != ""]


def value(sql, options=None):
    rows = query(sql, options)
    if len(rows) != 1 or len(rows[0]) != 1:
        raise DBError(f"expected one value from: {sql}")
    return rows[0][0]


def timed(sql, setup=""):
    """Run setup, then sql with \\timing; return the server round trip of
    the last statement of sql in milliseconds."""
    out = _run(PSQL, input_text=f"{setup}\n\\timing on\n{sql}\n")
    times = re.findall(r"^Time: ([0-9.]+) ms", out, re.M)
    if not times:
        raise DBError(f"no timing in psql output for: {sql}")
    return float(times[-1])


def copy_in(table, path):
    execute(f"\\copy {table} FROM '{path}'")


def pgbench(script, variables, transactions, options=None):
    """Run a pgbench custom script; return per-transaction latencies in ms.

    options: a PGOPTIONS string (session settings of the configuration)."""
    env = _env(options)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["pgbench", "-n", "-t", str(transactions), "-f", script,
               "-l", "--log-prefix", os.path.join(tmp, "tx")]
        for k, v in variables.items():
            cmd += ["-D", f"{k}={v}"]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp)
        if p.returncode != 0:
            raise DBError(f"pgbench {script} {variables} failed:\n{p.stderr.strip()}")
        lat = []
        for name in os.listdir(tmp):
            with open(os.path.join(tmp, name)) as f:
                for line in f:
                    # client_id transaction_no time_us script_no epoch epoch_us
                    lat.append(int(line.split()[2]) / 1000.0)
        if len(lat) != transactions:
            raise DBError(f"pgbench logged {len(lat)} of {transactions} transactions")
        return lat


def median(xs):
    return statistics.median(xs)
