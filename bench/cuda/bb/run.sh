#!/usr/bin/env bash
# bench/cuda/bb/run.sh BIN - basic-block execution counts (examples/bbcount,
# gpu/block sites) against the uninstrumented app, on a CUDA machine.
# BIN: what tests/device/pack.sh packs (gbpf, agent, cuda plugin, probes;
# bbcount.bpf.o comes from examples/). Builds the vecadd and SGEMM apps of
# bench/cuda/apps with nvcc (or reuses them from GBPF_BENCH_APPS), runs each
# plain and under `gbpf -j run bbcount.bpf.o` (CUDA events, warm-up, median
# of the app's timed launches: 100 for vecadd 2^26, 20 for SGEMM 4096), and
# prints, for bench/cuda/run.sh:
#   bb_count <app> <ratio>          instrumented / plain median
#   bench|<row>|...                 the table row, as run.sh prints them
#   # bbcount <app>: ...            the counts per kernel, for checking
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BIN=$(cd "$1" && pwd)
A=${GBPF_BENCH_APPS:-/tmp/gbpf-bench-apps}
O=${OUT:-/tmp/gbpf-bench-out}/bb
mkdir -p "$A" "$O"
export PATH=$PATH:/usr/local/cuda/bin
export LD_LIBRARY_PATH=$BIN:$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GBPF_AGENT_LIB=$BIN/libgbpf-agent.so GBPF_PLUGIN_PATH=$BIN/libgbpf-cuda.so
export CUDA_CACHE_PATH=$A/jitcache
export GBPF_CUDA_ENGINE=${GBPF_CUDA_ENGINE:-ptx}
ARCH=${GBPF_BENCH_ARCH:-sm_90}
PROBE=${GBPF_BB_PROBE:-$BIN/bbcount.bpf.o}
[ -f "$PROBE" ] || { echo "# bbcount: $PROBE missing (examples/bbcount/bbcount.bpf.o of the build)"; exit 1; }

cd "$ROOT/bench/cuda/apps" || exit 1
[ -x "$A/vecadd" ] || nvcc -O3 -arch=$ARCH -o "$A/vecadd" vecadd_bench.cu || exit 1
[ -x "$A/gemm" ] || nvcc -O3 -arch=$ARCH -o "$A/gemm" gemm_bench.cu || exit 1

value() { sed -n "s/^gbpf-bench $1 .*$3=\([0-9.]*\).*/\1/p" "$2" | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b; else print "n/a" }'; }
verdict() { awk -v r="$1" -v t="$2" 'BEGIN { if (r == "n/a") print "n/a"; else if (r + 0 <= t + 0) print "met"; else print "MISSED" }'; }
row() { printf 'bench|%-44s|%-22s|%-8s|%-8s|%s\n' "$1" "$2" "$3" "$4" "$5"; }
run() {
	local name=$1 out=$2; shift 2
	timeout 300 "$@" > "$out" 2> "$out.err"
	local rc=$?
	[ $rc = 0 ] || echo "# $name: exit $rc: $(tail -c 300 "$out.err" | tr '\n' ' ')"
	return $rc
}
# counts FILE: per kernel slot, the blocks that ran and how often (from the -j maps line)
counts() {
	python3 - "$1" <<'PY'
import json, sys
maps = {}
for line in open(sys.argv[1]):
    if line.startswith('{"type":"maps"'):
        maps.update({m["name"]: m for m in json.loads(line)["maps"]})
owners = {d["key"]: d["value"] for d in maps.get("kernel_slots", {}).get("data", [])}
slots = {}
for d in maps.get("bb_counts", {}).get("data", []):
    # per-CPU (per-SM) maps print one entry per slot: a block's count is their sum
    blocks = slots.setdefault(d["key"] // 1024, {})
    blocks[d["key"] % 1024] = blocks.get(d["key"] % 1024, 0) + d["value"]
if not slots:
    print("no counts")
for s, blocks in sorted(slots.items()):
    kid = owners.get(s)
    desc = ", ".join(f"b{b}={n}" for b, n in sorted(blocks.items())[:12])
    more = " ..." if len(blocks) > 12 else ""
    print(f"slot {s} kernel {hex(kid) if kid is not None else '?'}: {len(blocks)} blocks ran: {desc}{more}")
PY
}

for app in "vecadd 26 100" "gemm 4096 20"; do
	set -- $app
	name=$1; shift
	run "$name-plain" "$O/$name.plain" "$A/$name" "$@"
	run "$name-bb" "$O/$name.bb" "$BIN/gbpf" -j run "$PROBE" -- "$A/$name" "$@"
	p=$(value "$name" "$O/$name.plain" median_us); t=$(value "$name" "$O/$name.bb" median_us)
	r=$(ratio "$t" "$p")
	echo "bb_count $name $r"
	label=$([ "$name" = vecadd ] && echo "vecadd 2^26" || echo "SGEMM 4096")
	row "basic-block counts (bbcount), $label" "$t vs $p us" "$r" "3.0" "$(verdict "$r" 3.0)"
	counts "$O/$name.bb" | sed "s/^/# bbcount $name: /"
	grep -h "instrumented\|not instrumented\|error" "$O/$name.bb.err" | head -4 | sed "s/^/# bbcount $name: /"
done
