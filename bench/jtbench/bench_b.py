"""Benchmark B: appending to a large bytea.

Two configurations only, since compression plays no part in a STORAGE
EXTERNAL bytea column: the first stock-* configuration of --configs
(standard TOAST, builtin byteacat) and the first toaster-* one (the column
opted in to the appendable bytea toaster, byteacat served by the extension
through the override).  Each runs with its own session options, and its
lines carry its name.  Every table is (id int PRIMARY KEY, data bytea),
the column STORAGE EXTERNAL (stored uncompressed).

B(a), the talk's example: one row holding 100 MB x --scale of bytes that
do not repeat (made on the server from SHA-256 digests, once, in b_src),
copied into a fresh table, VACUUMed, then a CHECKPOINT, then twice
UPDATE t SET data = data || '\\x78'::bytea, the first recorded as the
append after a checkpoint (which logs an image of every page it is the
first to change), the second as what an append costs between
checkpoints, the one the targets judge: its round trip (psql \\timing,
in a session that has already read the row, so that opening the relations
is not part of it), WAL (insert LSN difference), the full-page images in it
(pg_walinspect) and pg_total_relation_size before and after (no VACUUM in
between).  --b-runs runs per configuration, the configurations taking
turns; the run of median time is kept, with the fastest and slowest.
After the append, the same session times FLOOR_RUNS updates of the row
that leave data alone (SET id = id): the floor, what any one-row
transaction costs there (its commit, mostly), the least an append can
take; on a busy machine it shows how much of a time is waiting.  On
the last run's tables: 1 kB read from the middle of the value with
substring() and length(data), READ_CALLS reads in one statement (1 kB
apart, each reading the value on its own) so that a read's time is not
lost in the statement's, the time of one read the median of READ_RUNS
sessions (one warm-up query, then the timed one), the configurations
taking turns; and a digest of the value, which must be the same in both
configurations.

B(b), the stream: for each append size (10 B to 100 kB) and each target
size (1 MB, and B(a)'s size), a fresh row holding an empty bytea gets
--b-appends appends of that size (the start), is grown in one unmeasured
append so that the same number of appends brings it to the target (never
shrunk: appends that already passed the target are followed directly),
then gets those appends (the end).  Each append is its own statement in
autocommit, all of a group in one psql session: its round trip (\\timing)
and WAL (pg_current_wal_insert_lsn() read between the appends, untimed);
the first and the last append of a group run as EXPLAIN (ANALYZE,
BUFFERS, TIMING OFF) of the same UPDATE, for the shared buffers they
touch (they are timed too, EXPLAIN's cost in their time); then the
group's floor, as many updates that leave data alone.  Per group: the
median, fastest and slowest time, the floor's median, the median and the
most WAL per append, and the two appends' buffers.  Stock rewrites the
whole value at each append, so its end group on the large target has at
most STOCK_LARGE_APPENDS appends.  A CHECKPOINT before each group's table
is made keeps full-page images out of the stream's WAL: every page the
group touches is created after it.
"""

import hashlib
import json
import re

from . import db
from .configs import OVERRIDES_OFF

MB = 1 << 20
# B(a)'s value and the stream's large target, at scale 1
LARGE = 100 * MB
SMALL_TARGET = MB
APPEND_SIZES = [10, 100, 1 << 10, 10 << 10, 100 << 10]
READ_RUNS = 9
# reads per timed statement
READ_CALLS = 200
FLOOR_RUNS = 5
STOCK_LARGE_APPENDS = 5

SUBSTRING_CASE = "substring 1 kB from the middle"
LENGTH_CASE = "length(data)"

TIME = re.compile(r"^Time: ([0-9.]+) ms")


def size_text(n):
    for div, unit in ((1 << 30, "GB"), (MB, "MB"), (1 << 10, "kB")):
        if n >= div:
            return f"{n / div:.3g} {unit}"
    return f"{n} B"


def append_case(size):
    """B(a)'s case name for a value of size bytes."""
    return f"append 1 byte to {size_text(size)}"


def stream_case(size, target):
    return f"append {size_text(size)} to {size_text(target)}"


def large_size(scale):
    return max(MB, int(LARGE * scale))


def piece(size):
    """size bytes that do not compress, the same in every run."""
    out = b"".join(hashlib.sha256(f"{size}/{i}".encode()).digest()
                   for i in range((size + 31) // 32))
    return out[:size]


def literal(data):
    return "'\\x" + data.hex() + "'::bytea"


def lsn_bytes(lsn):
    hi, lo = lsn.split("/")
    return (int(hi, 16) << 32) + int(lo, 16)


def pair(configs):
    """The configurations B runs: the first stock-* and the first
    toaster-* of the list (either may be missing)."""
    stock = next((c for c in configs if c.name.startswith("stock-")), None)
    toaster = next((c for c in configs if c.toaster), None)
    return [c for c in (stock, toaster) if c]


def create(t, toaster):
    """SQL that (re)creates table t, its column opted in to the toaster
    when toaster is true."""
    sql = (f"DROP TABLE IF EXISTS {t}; CREATE TABLE {t} (id int PRIMARY KEY, data bytea);"
           f"ALTER TABLE {t} ALTER COLUMN data SET STORAGE EXTERNAL;")
    if toaster:
        sql += f"ALTER TABLE {t} ALTER COLUMN data SET (toaster = 'bytea_appendable');"
    return sql


def form_sql():
    """How a bytea value is stored, as SQL on column data: the extension's
    description when it has one; else from pg_column_size(), which for a
    value of the toaster counts its pointer too (standard TOAST stores an
    uncompressed value at its length)."""
    if db.value("SELECT to_regprocedure('bytea_appendable_storage(bytea)') IS NOT NULL") == "t":
        return "(bytea_appendable_storage(data)).form"
    return ("CASE WHEN pg_column_size(data) = length(data) THEN 'external' "
            "WHEN pg_column_size(data) > length(data) + 4 THEN 'appendable' "
            "ELSE 'inline' END")


def check_storage(cfg, t, form, logical):
    """The row's value must be stored by the toaster in a toaster table,
    in standard TOAST otherwise; under wal_level = logical the toaster
    leaves values to standard TOAST."""
    expected = "appendable" if cfg.toaster and not logical else "external"
    found = db.value(f"SELECT {form} FROM {t}", cfg.session_options)
    if found != expected:
        raise SystemExit(f"configuration {cfg.name}: {t}.data is stored as {found}, "
                         f"expected {expected}")


def appends(cfg, t, data, count, explain=True, floors=None):
    """count appends of data to t's row, each its own transaction, in one
    session, then floors (default count) updates of the row that leave
    data alone.  Returns a dict: ms and wal (bytes), one per append; lsns,
    the insert LSN before the first and after each; buffers of the first
    and the last append (run as EXPLAIN ANALYZE), or None without explain;
    row_from and row_to, the value's length before and after;
    total_bytes, the table's total size after the appends; floor_ms, the
    round trip of each floor update."""
    floors = count if floors is None else floors
    stmt = f"UPDATE {t} SET data = data || {literal(data)} WHERE id = 1"
    # opening the relations and planning are a new session's costs, not
    # the append's
    lines = ["\\o /dev/null", f"SELECT length(substring(data FROM 1 FOR 1)) FROM {t};",
             f"EXPLAIN {stmt};", "\\o",
             f"SELECT 'len', length(data) FROM {t};",
             "SELECT 'lsn', pg_current_wal_insert_lsn();"]
    for i in range(count):
        lines.append("\\timing on")
        if explain and i in (0, count - 1):
            lines += ["\\echo @explain",
                      f"EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) {stmt};",
                      "\\echo @end"]
        else:
            lines.append(f"{stmt};")
        lines += ["\\timing off", "SELECT 'lsn', pg_current_wal_insert_lsn();"]
    lines += [f"SELECT 'len', length(data) FROM {t};",
              f"SELECT 'size', pg_total_relation_size('{t}');"]
    # what any one-row update costs in this session (its commit, above
    # all): the least an append can take
    lines += ["\\timing on"] + [f"UPDATE {t} SET id = id WHERE id = 1;"] * floors
    out = db.output("\n".join(lines) + "\n", cfg.session_options)
    ms, lsns, lens, plans, plan, total = [], [], [], [], None, None
    for line in out.splitlines():
        m = TIME.match(line)
        if m:
            ms.append(float(m.group(1)))
        elif line == "@explain":
            plan = []
        elif line == "@end":
            plans.append(json.loads("\n".join(plan))[0]["Plan"])
            plan = None
        elif plan is not None:
            plan.append(line)
        elif line.startswith("lsn|"):
            lsns.append(line[4:])
        elif line.startswith("len|"):
            lens.append(int(line[4:]))
        elif line.startswith("size|"):
            total = int(line[5:])
    if len(ms) != count + floors or len(lsns) != count + 1 or len(lens) != 2:
        raise db.DBError(f"B: unexpected output of {count} appends to {t}:\n{out[:2000]}")
    pos = [lsn_bytes(x) for x in lsns]
    buffers = [p["Shared Hit Blocks"] + p["Shared Read Blocks"] for p in plans]
    return {"ms": ms[:count], "floor_ms": ms[count:], "lsns": lsns,
            "wal": [b - a for a, b in zip(pos, pos[1:])],
            "hint_fpi": hint_fpi_bytes(lsns),
            "buffers": (buffers * 2)[:2] if len(buffers) == 1 else (buffers or None),
            "row_from": lens[0], "row_to": lens[1], "total_bytes": total}


def hint_fpi_bytes(lsns):
    """For each append between consecutive LSNs of lsns, the bytes of page
    images logged because a page's hint bits changed (XLOG_FPI_FOR_HINT):
    with data checksums, the first time after a checkpoint that an append
    records free space in a page of the TOAST relation's free space map
    (three pages of it once the relation has more than four), whatever
    stores the chunks."""
    pairs = ", ".join(f"({i}, '{a}'::pg_lsn, '{b}'::pg_lsn)"
                      for i, (a, b) in enumerate(zip(lsns, lsns[1:])))
    rows = db.query(
        "SELECT i, coalesce((SELECT sum(fpi_size) FROM pg_get_wal_stats(a, b, true) "
        "WHERE \"resource_manager/record_type\" = 'XLOG/FPI_FOR_HINT'), 0) "
        f"FROM (VALUES {pairs}) v (i, a, b) ORDER BY i")
    return [int(v) for _, v in rows]


def check_appended(cfg, t, data, count):
    """The last count x len(data) bytes of the value must be the appended
    ones."""
    n = count * len(data)
    got = db.value(f"SELECT md5(substring(data FROM length(data) - {n} + 1)) FROM {t}",
                   cfg.session_options)
    if got != hashlib.md5(data * count).hexdigest():
        raise SystemExit(f"configuration {cfg.name}: {t}: the appended bytes read back "
                         f"differ")


def run(configs, results, args, log):
    used = pair(configs)
    if not used:
        log("B: no stock-* or toaster-* configuration in --configs; skipped")
        return
    size = large_size(args.scale)
    logical = db.value("SHOW wal_level") == "logical"
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect;")
    log(f"B: generating a value of {size_text(size)} (b_src)")
    db.execute(create("b_src", False) +
               f"INSERT INTO b_src SELECT 1, substring(string_agg(sha256(int4send(i)), ''::bytea) "
               f"FROM 1 FOR {size}) FROM generate_series(0, {(size - 1) // 32}) i;"
               "VACUUM ANALYZE b_src;", OVERRIDES_OFF)
    form = form_sql()
    talks_example(used, results, args, log, size, form, logical)
    stream(used, results, args, log, size, form, logical)
    db.execute("DROP TABLE b_src;")


def talks_example(used, results, args, log, size, form, logical):
    runs = max(1, args.b_runs)
    case = append_case(size)
    measured = {cfg.name: [] for cfg in used}
    for r in range(runs):
        for cfg in used:
            t = cfg.table("b")
            cfg.execute(create(t, cfg.toaster) + f"INSERT INTO {t} SELECT * FROM b_src;"
                        f"VACUUM ANALYZE {t}; CHECKPOINT;")
            check_storage(cfg, t, form, logical)
            before = int(db.value(f"SELECT pg_total_relation_size('{t}')"))
            # the first append after the checkpoint logs an image of each page
            # it is the first to change; the second, of the same row, what an
            # append costs between checkpoints
            a = appends(cfg, t, b"\x78", 2, explain=False, floors=FLOOR_RUNS)
            length = a["row_to"]
            fpis = [db.fpi_bytes(x, y) for x, y in zip(a["lsns"], a["lsns"][1:])]
            after = a["total_bytes"]
            check_storage(cfg, t, form, logical)
            check_appended(cfg, t, b"\x78", 2)
            if length != size + 2:
                raise SystemExit(f"configuration {cfg.name}: {t}: length {length} after "
                                 f"the appends, expected {size + 2}")
            floor = db.median(a["floor_ms"])
            ms, wal = a["ms"][1], a["wal"][1]
            measured[cfg.name].append({"ms": ms, "wal_bytes": wal, "wal_fpi_bytes": fpis[1],
                                       "ms_after_checkpoint": a["ms"][0],
                                       "wal_bytes_after_checkpoint": a["wal"][0],
                                       "wal_fpi_bytes_after_checkpoint": fpis[0],
                                       "total_bytes_before": before,
                                       "total_bytes_after": after, "floor_ms": floor})
            log(f"B: {case} on {cfg.name}, run {r + 1}: {ms:.1f} ms (first after the "
                f"checkpoint {a['ms'][0]:.1f} ms; floor {floor:.2f} ms), {wal} WAL bytes "
                f"({a['wal'][0]} first), {before} -> {after} bytes")
    for cfg in used:
        by_ms = sorted(measured[cfg.name], key=lambda m: m["ms"])
        for metric, v in by_ms[(len(by_ms) - 1) // 2].items():
            results.add("B", cfg.name, case, metric, v, size=size, runs=runs)
        results.add("B", cfg.name, case, "ms_min", by_ms[0]["ms"], size=size, runs=runs)
        results.add("B", cfg.name, case, "ms_max", by_ms[-1]["ms"], size=size, runs=runs)
    # reads of the value as the last run left it (size + 1 bytes)
    middle = (size + 1) // 2
    # READ_CALLS reads in one statement, 1 kB apart from the middle on, each
    # read of the value on its own: the time of one read, without the
    # statement's own cost drowning it
    for read, expr in ((SUBSTRING_CASE,
                        f"length(substring(t.data FROM {middle} + 1000 * g FOR 1000))"),
                       (LENGTH_CASE, "length(t.data)")):
        times = {cfg.name: [] for cfg in used}
        for _ in range(READ_RUNS):
            for cfg in used:
                q = (f"SELECT sum({expr}) FROM {cfg.table('b')} t, "
                     f"generate_series(0, {READ_CALLS - 1}) g;")
                ms = db.timed(q, setup=q, options=cfg.session_options)
                times[cfg.name].append(ms / READ_CALLS)
        for cfg in used:
            xs = sorted(times[cfg.name])
            params = {"offset": middle} if read == SUBSTRING_CASE else {}
            results.add("B", cfg.name, read, "ms", db.median(xs), size=size, runs=READ_RUNS,
                        calls=READ_CALLS, **params)
            results.add("B", cfg.name, read, "ms_min", xs[0], size=size, runs=READ_RUNS)
            results.add("B", cfg.name, read, "ms_max", xs[-1], size=size, runs=READ_RUNS)
            log(f"B: {read} on {cfg.name}: {db.median(xs):.3f} ms")
    for cfg in used:
        t = cfg.table("b")
        digest = db.value(f"SELECT md5(data) || '/' || length(data) FROM {t}",
                          cfg.session_options)
        results.add("B", cfg.name, "answers", "digest", digest, size=size)
        db.execute(f"DROP TABLE {t};")


def stream(used, results, args, log, size, form, logical):
    count = max(1, args.b_appends)
    for target in sorted({SMALL_TARGET, size}):
        for s in APPEND_SIZES:
            data = piece(s)
            case = stream_case(s, target)
            for cfg in used:
                t = cfg.table("b")
                # fewer appends where each rewrites the large value
                n_end = (count if cfg.toaster or target < size
                         else min(count, STOCK_LARGE_APPENDS))
                cfg.execute("CHECKPOINT;" + create(t, cfg.toaster) +
                            f"INSERT INTO {t} VALUES (1, ''::bytea); VACUUM ANALYZE {t};")
                start = appends(cfg, t, data, count)
                check_appended(cfg, t, data, count)
                grow = target - n_end * s - start["row_to"]
                if grow > 0:
                    cfg.execute(f"UPDATE {t} SET data = data || "
                                f"(SELECT substring(data FROM 1 FOR {grow}) FROM b_src) "
                                f"WHERE id = 1;")
                end = appends(cfg, t, data, n_end)
                check_appended(cfg, t, data, n_end)
                check_storage(cfg, t, form, logical)
                db.execute(f"DROP TABLE {t};")
                for position, a in (("start", start), ("end", end)):
                    params = {"position": position, "size": s, "target": target,
                              "appends": len(a["ms"]), "row_from": a["row_from"],
                              "row_to": a["row_to"]}
                    results.add("B", cfg.name, case, "ms", db.median(a["ms"]), each=a["ms"],
                                **params)
                    results.add("B", cfg.name, case, "ms_min", min(a["ms"]), **params)
                    results.add("B", cfg.name, case, "ms_max", max(a["ms"]), **params)
                    results.add("B", cfg.name, case, "floor_ms", db.median(a["floor_ms"]),
                                **params)
                    results.add("B", cfg.name, case, "wal_bytes", db.median(a["wal"]),
                                each=a["wal"], **params)
                    results.add("B", cfg.name, case, "wal_bytes_max", max(a["wal"]), **params)
                    results.add("B", cfg.name, case, "wal_hint_fpi_bytes", sum(a["hint_fpi"]),
                                each=a["hint_fpi"], **params)
                    results.add("B", cfg.name, case, "wal_bytes_max_without_hint_fpi",
                                max(w - h for w, h in zip(a["wal"], a["hint_fpi"])),
                                **params)
                    results.add("B", cfg.name, case, "buffers_first", a["buffers"][0], **params)
                    results.add("B", cfg.name, case, "buffers_last", a["buffers"][1], **params)
                log(f"B: {case} on {cfg.name}: {db.median(start['ms']):.2f} ms at the start, "
                    f"{db.median(end['ms']):.2f} ms at the end ({len(end['ms'])} appends), "
                    f"WAL at most {max(start['wal'] + end['wal'])} bytes")
