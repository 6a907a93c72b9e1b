#!/usr/bin/env bash
# bench/cuda/profile.sh BIN [PROBE [HAND]] - Nsight Compute of one steady-state
# vec_add launch (2^24 elements, or 2^GBPF_PROFILE_LOG2N) instrumented with PROBE (a probe object in
# BIN, default mem_count), next to the same probe written by hand in CUDA
# (vecadd_bench.cu built with -D HAND, default HAND_MEMTRACE=5: mem_count's
# counters with the warp instructions gbpf's inlined lookup runs; several
# definitions separated by spaces: "HAND_HASH=1 HAND_HASH_LAYOUT=4").
# A probe that writes a ring needs room for 5 launches' records: e.g.
# GBPF_PROFILE_LOG2N=20 GBPF_CUDA_RING_MB=1024 profile.sh BIN kernelretsnoop HAND_RECORDS.
# BIN: what tests/device/pack.sh packs. Writes under $OUT (default
# /tmp/gbpf-profile): for each of probe and hand, the report (.ncu-rep), its
# details page and its SASS with per-instruction counts (.sass.csv), and
# prints the lines that say where the time goes.
# Why: the bench rows say how much slower an instrumented kernel is, this
# says whether it is bound by issue, latency, L1 or L2 (session 10: mem_count
# was at 90% of L2 throughput with DRAM at 15%, and executed 4.2x the
# hand-written kernel's instructions).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "$1" && pwd)
PROBE=${2:-mem_count}
HAND=${3:-HAND_MEMTRACE=5}
HAND_DEFS=()
for def in $HAND; do HAND_DEFS+=("-D$def"); done
A=${GBPF_BENCH_APPS:-/tmp/gbpf-bench-apps}
O=${OUT:-/tmp/gbpf-profile}
ARCH=${GBPF_BENCH_ARCH:-sm_90}
N=${GBPF_PROFILE_LOG2N:-24}
mkdir -p "$A" "$O"
export PATH=$PATH:/usr/local/cuda/bin
export LD_LIBRARY_PATH=$BIN:$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GBPF_AGENT_LIB=$BIN/libgbpf-agent.so GBPF_PLUGIN_PATH=$BIN/libgbpf-cuda.so GBPF_CUDA_ENGINE=ptx
command -v ncu >/dev/null || { echo "profile: ncu not found"; exit 1; }
[ -f "$BIN/$PROBE.bpf.o" ] || { echo "profile: no $BIN/$PROBE.bpf.o"; exit 1; }
nvcc -O3 -arch="$ARCH" -o "$A/vecadd" "$ROOT/bench/cuda/apps/vecadd_bench.cu" &
nvcc -O3 -arch="$ARCH" "${HAND_DEFS[@]}" -o "$A/vecadd_hand" "$ROOT/bench/cuda/apps/vecadd_bench.cu" &
wait
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SourceCounters
   --section MemoryWorkloadAnalysis_Tables --section SchedulerStats --section InstructionStats"
# -s 4: the fifth vec_add launch of the process, after the maps are filled (the first launch
# inserts every key); ncu follows the app that `gbpf run` starts (--target-processes all).
# shellcheck disable=SC2086 # S is a list of options
timeout 300 ncu --target-processes all -k regex:vec_add -s 4 -c 1 $S -o "$O/probe" -f \
	"$BIN/gbpf" run "$BIN/$PROBE.bpf.o" -- "$A/vecadd" "$N" 8 2>&1 | tail -c 65536 > "$O/probe.run.txt" # a ring's events: the last ones
# shellcheck disable=SC2086
timeout 120 ncu -k regex:vec_add -s 4 -c 1 $S -o "$O/hand" -f "$A/vecadd_hand" "$N" 8 > "$O/hand.run.txt" 2>&1
for f in probe hand; do
	[ -f "$O/$f.ncu-rep" ] || { echo "== $f: no report (see $O/$f.run.txt)"; continue; }
	ncu -i "$O/$f.ncu-rep" --page details > "$O/$f.details.txt" 2>&1
	ncu -i "$O/$f.ncu-rep" --page source --csv --print-source sass > "$O/$f.sass.csv" 2>&1
	echo "== $f"
	grep -E 'Duration|Memory Throughput|DRAM Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Achieved Occupancy|Warp Cycles Per Issued|Executed Instructions  |One or More Eligible' \
		"$O/$f.details.txt"
	grep -A3 'Est. Speedup' "$O/$f.details.txt" | grep -E 'local|global|L2|stall' | head -6
done
