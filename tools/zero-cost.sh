#!/usr/bin/env bash
# tools/zero-cost.sh [--rounds N] [--seconds S] [--scale K] [--out DIR]
#
# What the core series costs a server that loads no toaster: the patched
# release build (tools/build-server.sh release) against the unpatched one
# built from the same source with the same options (tools/build-server.sh
# stock), each with an instance of the same settings and no
# shared_preload_libraries, running pgbench's built-in workloads
# (select-only and TPC-B-like) in rounds, the two builds taking turns (the
# order alternating from round to round).  Writes results.jsonl (bench
# "Z", config "patched" or "stock", case the workload, metric "tps", one
# line per run) and report.md (medians, ratio patched / stock) into DIR
# (default: a new directory under /var/tmp), and prints the report.

. "$(dirname "$0")/lib.sh"

drop_root "$0" "$@"
ensure_packages $JT_RUNTIME_DEPS

rounds=7 seconds=30 scale=20 out=
while [ $# -gt 0 ]; do
	case $1 in
		--rounds) rounds=$2; shift 2 ;;
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
	"${prefix[$b]}/bin/pgbench" -h "$work" -p "${port[$b]}" -U postgres -i -q \
		-s "$scale" postgres >"$work/$b.init.log" 2>&1 ||
		{ cat "$work/$b.init.log" >&2; die "pgbench -i failed ($b)"; }
done

started=$(date -u '+%Y-%m-%d %H:%M UTC')
msg "zero cost: $rounds rounds of ${seconds} s per workload and build, scale $scale"
: >"$out/results.jsonl"
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

python3 - "$out" "$started" "$rounds" "$seconds" "$scale" <<'EOF' | tee "$out/report.md"
import json, statistics, sys, subprocess
out, started, rounds, seconds, scale = sys.argv[1:]
rows = [json.loads(l) for l in open(f"{out}/results.jsonl")]
print("# The core series when no toaster is loaded: patched against unpatched\n")
print(f"- started: {started}; {rounds} rounds of {seconds} s per workload and build, "
      f"pgbench scale {scale}, 2 clients, the builds taking turns")
print("- command: `tools/zero-cost.sh"
      f" --rounds {rounds} --seconds {seconds} --scale {scale}`\n")
print("| workload | patched tps (median) | stock tps (median) | patched / stock | spread of the ratio by round |")
print("|---|---|---|---|---|")
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
