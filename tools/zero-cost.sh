#!/usr/bin/env bash
# tools/zero-cost.sh [--rounds N] [--seconds S] [--scale K] [--statements M]
#                    [--out DIR]
#
# What the core series costs a server that loads no toaster: the patched
# release build (tools/build-server.sh release) against the unpatched one
# built from the same source with the same options (tools/build-server.sh
# stock), with no shared_preload_libraries, in two ways:
#
#  - instructions: the same M statements (default 20,000) of each of
#    pgbench's two workloads (select-only, and TPC-B-like's five
#    statements), and M / 10 of a third, "toast" (reads and updates of one
#    key of 200 TOASTed jsonb documents of 1,000 keys, which detoast,
#    compress and store whole documents), from a fixed seed, run by a
#    single-user backend on a pgbench database of scale 1 under valgrind's
#    cachegrind, which counts the instructions executed: exact, and blind
#    to the machine's noise;
#  - throughput: pgbench's built-in workloads (select-only and TPC-B-like)
#    on instances of the same settings, pgbench scale K, in N rounds
#    (default 7; 0 skips them), the two builds taking turns (the order
#    alternating from round to round).
#
# The instruction counts always use a scale-1 database; the unpatched
# build runs select-only twice, to show how far two runs of one build are
# apart.
#
# Writes results.jsonl (bench "Z", config "patched" or "stock", case the
# workload, metric "instructions" or "tps") and report.md (totals and
# medians, ratios patched / stock, and the functions whose instruction
# counts differ) into DIR (default: a new directory under /var/tmp), and
# prints the report.

. "$(dirname "$0")/lib.sh"

ensure_packages $JT_RUNTIME_DEPS valgrind
drop_root "$0" "$@"

rounds=7 seconds=30 scale=20 statements=20000 out=
while [ $# -gt 0 ]; do
	case $1 in
		--rounds) rounds=$2; shift 2 ;;
		--statements) statements=$2; shift 2 ;;
		--seconds) seconds=$2; shift 2 ;;
		--scale) scale=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		*) die "unknown argument: $1" ;;
	esac
done
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/var/tmp}/jsonb_toaster_zero_cost.XXXXXX")
mkdir -p "$out"
out=$(cd "$out" && pwd)

declare -A prefix=(
	[patched]=$("$JT_TOP/tools/build-server.sh" release)
	[stock]=$("$JT_TOP/tools/build-server.sh" stock)
)
work=$(mktemp -d "${TMPDIR:-/tmp}/jsonb_toaster_zc.XXXXXX")
declare -A port
cleanup()
{
	local b
	for b in patched stock; do
		PATH="${prefix[$b]}/bin:$PATH" stop_instance "$work/$b" fast
	done
	rm -rf "$work"
}
trap cleanup EXIT

for b in patched stock; do
	port[$b]=$(free_port)
	"${prefix[$b]}/bin/initdb" -D "$work/$b" -A trust --no-sync -U postgres >"$work/$b.initdb.log" 2>&1 ||
		die "initdb failed ($b)"
	cat >>"$work/$b/postgresql.conf" <<CONF
port = ${port[$b]}
listen_addresses = ''
unix_socket_directories = '$work'
shared_buffers = 512MB
max_wal_size = 4GB
synchronous_commit = off
autovacuum = off
CONF
	"${prefix[$b]}/bin/pg_ctl" -D "$work/$b" -l "$work/$b.log" -w start >/dev/null ||
		{ cat "$work/$b.log" >&2; die "cannot start the $b instance"; }
	if [ "$rounds" -gt 0 ]; then
		"${prefix[$b]}/bin/pgbench" -h "$work" -p "${port[$b]}" -U postgres -i -q \
			-s "$scale" postgres >"$work/$b.init.log" 2>&1 ||
			{ cat "$work/$b.init.log" >&2; die "pgbench -i failed ($b)"; }
	fi
done

started=$(date -u '+%Y-%m-%d %H:%M UTC')
: >"$out/results.jsonl"

# Instructions: the statements of each workload, the same for both builds
# (their random keys drawn from a fixed seed), run one per line by a
# single-user backend on a copy of a scale-1 pgbench database.
python3 - "$statements" "$work" <<'PY'
import random, sys
n, work = int(sys.argv[1]), sys.argv[2]
rng = random.Random(42)
with open(f"{work}/select-only.sql", "w") as f:
    for _ in range(n):
        f.write(f"SELECT abalance FROM pgbench_accounts WHERE aid = {rng.randint(1, 100000)};\n")
with open(f"{work}/tpcb-like.sql", "w") as f:
    for _ in range(n // 5):
        a, t, d = rng.randint(1, 100000), rng.randint(1, 10), rng.randint(-5000, 5000)
        f.write(f"UPDATE pgbench_accounts SET abalance = abalance + {d} WHERE aid = {a};\n"
                f"SELECT abalance FROM pgbench_accounts WHERE aid = {a};\n"
                f"UPDATE pgbench_tellers SET tbalance = tbalance + {d} WHERE tid = {t};\n"
                f"UPDATE pgbench_branches SET bbalance = bbalance + {d} WHERE bid = 1;\n"
                "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) "
                f"VALUES ({t}, 1, {a}, {d}, CURRENT_TIMESTAMP);\n")
# jsonb documents TOASTed (as S and U store them): reads of one key and
# updates of one key, which detoast, compress and store whole documents
with open(f"{work}/toast.sql", "w") as f:
    for _ in range(n // 20):
        i, k = rng.randint(1, 200), rng.randint(0, 999)
        f.write(f"SELECT jb->'k{k}' FROM docs WHERE id = {i};\n"
                f"UPDATE docs SET jb = jsonb_set(jb, '{{k{k}}}', '{rng.randint(0, 9)}') WHERE id = {i};\n")
PY
msg "zero cost: instructions of $statements statements per workload, single-user backend under cachegrind"
for b in patched stock; do
	db=$work/$b-scale1
	"${prefix[$b]}/bin/createdb" -h "$work" -p "${port[$b]}" -U postgres scale1
	"${prefix[$b]}/bin/pgbench" -h "$work" -p "${port[$b]}" -U postgres -i -q \
		-s 1 scale1 >>"$work/$b.init.log" 2>&1 ||
		{ cat "$work/$b.init.log" >&2; die "pgbench -i failed ($b, scale 1)"; }
	"${prefix[$b]}/bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$work" -p "${port[$b]}" \
		-U postgres \
		-c "CREATE TABLE docs (id int PRIMARY KEY, jb jsonb)" \
		-c "INSERT INTO docs SELECT i, jsonb_object_agg('k' || k, md5((i * k)::text))
			FROM generate_series(1, 200) i, generate_series(0, 999) k GROUP BY i" \
		-c "VACUUM ANALYZE" -c "CHECKPOINT" scale1 ||
		die "cannot set up the documents of the toast workload ($b)"
	"${prefix[$b]}/bin/pg_ctl" -D "$work/$b" -w stop >/dev/null
	# the unpatched build runs select-only twice: how far two runs of the
	# same build are apart
	runs="select-only tpcb-like toast"
	[ "$b" = stock ] && runs="$runs select-only:again"
	for run in $runs; do
		workload=${run%%:*}
		config=$b
		[ "$run" = "$workload" ] || config=$b-again
		rm -rf "$db"
		cp -a "$work/$b" "$db"
		# single-user mode reports errors on stderr; valgrind logs apart
		valgrind --tool=cachegrind --cache-sim=no \
			--log-file="$work/$config.$workload.valgrind" \
			--cachegrind-out-file="$out/cachegrind.$config.$workload" \
			"${prefix[$b]}/bin/postgres" --single -D "$db" -c autovacuum=off scale1 \
			<"$work/$workload.sql" >"$work/$config.$workload.out" \
			2>"$work/$config.$workload.err" ||
			{ tail "$work/$config.$workload.err" >&2; die "single-user run failed ($config, $workload)"; }
		! grep -qE "(ERROR|FATAL|PANIC):" "$work/$config.$workload.err" ||
			{ grep -m 3 -E "(ERROR|FATAL|PANIC):" "$work/$config.$workload.err" >&2
			  die "a statement failed in the single-user run ($config, $workload)"; }
		ir=$(sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' "$work/$config.$workload.valgrind" | tr -d ,)
		[ -n "$ir" ] || die "no instruction count from cachegrind ($config, $workload)"
		n=$(wc -l <"$work/$workload.sql")
		printf '{"bench": "Z", "config": "%s", "case": "%s", "metric": "instructions", "value": %s, "statements": %d}\n' \
			"$config" "$workload" "$ir" "$n" >>"$out/results.jsonl"
		msg "$workload, $config: $ir instructions"
	done
	rm -rf "$db"
	"${prefix[$b]}/bin/pg_ctl" -D "$work/$b" -l "$work/$b.log" -w start >/dev/null ||
		die "cannot restart the $b instance"
done
for workload in select-only tpcb-like toast; do
	# the functions whose counts differ; the builds' install paths and gcc's
	# clone suffixes are left out of the names, which would differ otherwise
	cg_diff --mod-filename='s/.*\/install\/[^\/]*//' \
		--mod-funcname='s/\.(isra|part|constprop|cold)\.[0-9]+//g' \
		"$out/cachegrind.stock.$workload" "$out/cachegrind.patched.$workload" \
		>"$out/cachegrind.diff.$workload" 2>/dev/null
	cg_annotate --auto=no --threshold=0.5 "$out/cachegrind.diff.$workload" 2>/dev/null |
		sed -n 's/^ *\(-\{0,1\}[0-9][0-9,]*\) ([ 0-9.%-]*) *\([^ ].*:.*\)$/\1\t\2/p' |
		grep -v "PROGRAM TOTALS" >"$out/differing.$workload.tsv" || true
done

msg "zero cost: $rounds rounds of ${seconds} s per workload and build, scale $scale"
for ((r = 1; r <= rounds; r++)); do
	if ((r % 2)); then order="patched stock"; else order="stock patched"; fi
	for workload in select-only tpcb-like; do
		for b in $order; do
			flags=
			[ "$workload" = select-only ] && flags=-S
			tps=$("${prefix[$b]}/bin/pgbench" -h "$work" -p "${port[$b]}" -U postgres \
				-n $flags -c 2 -j 2 -T "$seconds" postgres 2>/dev/null |
				sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
			[ -n "$tps" ] || die "pgbench failed ($b, $workload)"
			printf '{"bench": "Z", "config": "%s", "case": "%s", "metric": "tps", "value": %s, "round": %d, "seconds": %d, "scale": %d}\n' \
				"$b" "$workload" "$tps" "$r" "$seconds" "$scale" >>"$out/results.jsonl"
			msg "round $r, $workload, $b: $tps tps"
		done
	done
done

python3 - "$out" "$started" "$rounds" "$seconds" "$scale" "$statements" <<'EOF' | tee "$out/report.md"
import json, statistics, sys, subprocess
out, started, rounds, seconds, scale, statements = sys.argv[1:]
rows = [json.loads(l) for l in open(f"{out}/results.jsonl")]
print("# The core series when no toaster is loaded: patched against unpatched\n")
print(f"- started: {started}; instructions of {statements} statements per workload; "
      + (f"{rounds} rounds of {seconds} s per workload and build, "
         f"pgbench scale {scale}, 2 clients, the builds taking turns" if int(rounds)
         else "no throughput rounds"))
print("- command: `tools/zero-cost.sh"
      f" --rounds {rounds} --seconds {seconds} --scale {scale} --statements {statements}`\n")
print("Instructions executed by a single-user backend running the same statements "
      "(cachegrind), and the functions whose counts differ (those with at least "
      "0.5% of the difference):\n")
print("| workload | patched | stock | patched / stock | where they differ |")
print("|---|---|---|---|---|")
for case in ("select-only", "tpcb-like", "toast"):
    ir = {r["config"]: r["value"] for r in rows
          if r["case"] == case and r["metric"] == "instructions"}
    n = next(r["statements"] for r in rows
             if r["case"] == case and r["metric"] == "instructions")
    where = []
    for line in open(f"{out}/differing.{case}.tsv"):
        count, name = line.rstrip("\n").split("\t")
        where.append(f"`{name.split(':')[-1]}` {count}")
    print(f"| {case}, {n:,} statements | {ir['patched']:,} | {ir['stock']:,} | "
          f"{ir['patched'] / ir['stock']:.5f}, "
          f"{(ir['patched'] - ir['stock']) / n:.1f} a statement | "
          f"{', '.join(where[:6]) or 'none'} |")
    if "stock-again" in ir:
        print(f"| {case}, unpatched run twice | {ir['stock-again']:,} | {ir['stock']:,} | "
              f"{ir['stock-again'] / ir['stock']:.5f} | |")
if int(rounds) == 0:
    sys.exit(0)
print("\nThroughput:\n")
print("| workload | patched tps (median) | stock tps (median) | patched / stock | spread of the ratio by round |")
print("|---|---|---|---|---|")
rows = [r for r in rows if r["metric"] == "tps"]
for case in ("select-only", "tpcb-like"):
    p = [r["value"] for r in rows if r["case"] == case and r["config"] == "patched"]
    s = [r["value"] for r in rows if r["case"] == case and r["config"] == "stock"]
    byround = {}
    for r in rows:
        if r["case"] == case:
            byround.setdefault(r["round"], {})[r["config"]] = r["value"]
    ratios = sorted(v["patched"] / v["stock"] for v in byround.values()
                    if "patched" in v and "stock" in v)
    pm, sm = statistics.median(p), statistics.median(s)
    print(f"| {case} | {pm:,.0f} | {sm:,.0f} | {pm / sm:.3f} | "
          f"{ratios[0]:.3f} to {ratios[-1]:.3f} |")
EOF
msg "results in $out"
