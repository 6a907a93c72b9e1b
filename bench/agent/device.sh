#!/usr/bin/env bash
# bench/agent/device.sh BIN - the print and ring output paths on a CUDA machine
# (#4, #8), in one run: the host part of the print path (bench_agent_print),
# the controller's ring record output (bench_agent_ring), GPU -> user printk
# latency with and without busy-polling (bench/cuda/run.sh's printk row),
# kernelretsnoop 2^20 threads x 5 launches with a 1 GiB device ring (its row:
# every record delivered?), and printk %s from the GPU vs the interpreter.
# BIN: tests/device/pack.sh's folder plus bench_agent_print, bench_agent_ring,
# launch_app, libgbpf-testlaunch.so, libgbpf-hosttest.so, count.bpf.o,
# printk_str.bpf.o and libgbpf-cpu.so (the interpreter's side of the %s
# comparison: pack.sh packs only the cuda plugin).
# Large outputs stay in /tmp; a summary goes to stdout ("output|" lines).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "$1" && pwd)
A=/tmp/gbpf-output-apps
T=/tmp/gbpf-output-out
mkdir -p "$A" "$T"
export PATH=$PATH:/usr/local/cuda/bin
export LD_LIBRARY_PATH=$BIN:$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GBPF_AGENT_LIB=$BIN/libgbpf-agent.so
export CUDA_CACHE_PATH=$A/jitcache GBPF_CUDA_ENGINE=ptx
ARCH=${GBPF_BENCH_ARCH:-sm_90}
echo "output|host: $(nproc) cpus, $(nvidia-smi -L 2>/dev/null | head -1)"
(cd "$ROOT/bench/cuda/apps" && nvcc -O3 -arch=$ARCH -o "$A/vecadd" vecadd_bench.cu &&
	nvcc -O3 -arch=$ARCH -o "$A/printk" printk_bench.cu) || { echo "output|nvcc failed"; exit 1; }

# 1. host part of the print path (test backend, no GPU): receipt and reader latency
echo "output|== bench_agent_print 2000 lines, one every 500 us"
"$BIN/bench_agent_print" "$BIN/gbpf" "$BIN/launch_app" "$BIN/libgbpf-hosttest.so" "$BIN/count.bpf.o" 2000 500 2>/dev/null |
	sed 's/^/output|/'
# 2. ring records -> -j lines: per-line (before) vs block (now), into a file in /tmp
echo "output|== bench_agent_ring"
"$BIN/bench_agent_ring" 5242880 1048576 | sed 's/^/output|/'
"$BIN/bench_agent_ring" 5242880 0 /dev/null | grep '^block' | sed 's/^/output|to \/dev\/null: /'

# 3. printk latency: GPU globaltimer at the print vs the controller's receipt
lat() {
	# shellcheck disable=SC2046 # the six fields of printk_latency.py
	set -- $(python3 "$ROOT/bench/cuda/printk_latency.py" "$1")
	if [ "$5" = 0 ]; then echo "n/a"; else
		echo "median $1 us, p90 $2, p99 $3, max $4 ($5 lines, clock +-$6 us)"; fi
}
for mode in spin nospin ctlspin; do
	case $mode in
	spin) env=() ;;
	nospin) env=(GBPF_RUN_SPIN_US=0 GBPF_PRINTQ_SPIN_US=0) ;;
	ctlspin) env=(GBPF_PRINTQ_SPIN_US=0) ;;
	esac
	env "${env[@]}" GBPF_RUN_SPIN_STATS=1 GBPF_PLUGIN_PATH=$BIN/libgbpf-cuda.so timeout 60 \
		"$BIN/gbpf" -j run "$BIN/printk_lat.bpf.o" -- "$A/printk" 300 > "$T/printk.$mode" 2> "$T/printk.$mode.err"
	echo "output|printk latency [$mode: ${env[*]:-defaults}] rc=$?: $(lat "$T/printk.$mode") $(grep -o 'print lines.*' "$T/printk.$mode.err")"
done

# 4. kernelretsnoop, 2^20 threads, 2 warm-up + 2 timed launches + init: 5 x 2^20 records, 1 GiB device ring
export GBPF_PLUGIN_PATH=$BIN/libgbpf-cuda.so
"$A/vecadd" 20 2 > "$T/vecadd20.plain" 2>&1
s=$(date +%s.%N)
GBPF_CUDA_RING_MB=1024 timeout 120 "$BIN/gbpf" -j run "$BIN/kernelretsnoop.bpf.o" -- "$A/vecadd" 20 2 \
	> "$T/krs.json" 2> "$T/krs.err"
rc=$?
e=$(date +%s.%N)
ev=$(grep -c '"type":"event"' "$T/krs.json")
lost=$(grep -o '"type":"lost_events"[^}]*"count":[0-9]*' "$T/krs.json" | sed 's/.*"count"://' | awk '{ s += $1 } END { print s + 0 }')
p=$(sed -n 's/^gbpf-bench vecadd .*median_us=\([0-9.]*\).*/\1/p' "$T/vecadd20.plain" | tail -1)
t=$(sed -n 's/^gbpf-bench vecadd .*median_us=\([0-9.]*\).*/\1/p' "$T/krs.json" | tail -1)
echo "output|kernelretsnoop rc=$rc: events $ev + lost $lost = $((ev + lost)) of $(( (1 << 20) * 5 )); gbpf run wall $(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", b - a }') s; json $(du -m "$T/krs.json" | cut -f1) MB; kernel $t vs $p us"
grep -v '^{' "$T/krs.json" | head -3 | sed 's/^/output|  krs stdout: /'
grep -i "lost\|error\|records" "$T/krs.err" | head -3 | sed 's/^/output|  krs stderr: /'
python3 - "$T/krs.json" <<'PY' | sed 's/^/output|  /'
import sys, collections
# every thread of every launch exactly once: (launch_id, block.x, thread.x) from the hex record
seen = collections.Counter()
n = 0
for line in open(sys.argv[1]):
    if '"type":"event"' not in line:
        continue
    d = line.split('"data":"')[1][:96]
    b = bytes.fromhex(d)
    launch = int.from_bytes(b[8:16], "little")
    bx = int.from_bytes(b[24:28], "little")
    tx = int.from_bytes(b[36:40], "little")
    seen[(launch, bx, tx)] += 1
    n += 1
dups = sum(1 for v in seen.values() if v > 1)
print("records parsed %d, distinct (launch, block, thread) %d, duplicates %d" % (n, len(seen), dups))
PY
rm -f "$T/krs.json"

# 5. printk %s from the GPU vs the interpreter (prog run), and injected into a kernel (gbpf run)
G=$BIN/gbpf
GBPF_PLUGIN_PATH=$BIN/libgbpf-cpu.so "$G" prog run --backend cpu "$BIN/printk_str.bpf.o" 2> "$T/str.cpu" > /dev/null
[ -s "$T/str.cpu" ] || echo "output|  cpu backend printed nothing (is libgbpf-cpu.so in BIN?)"
"$G" prog run --backend cuda --threads 4 "$BIN/printk_str.bpf.o" > "$T/str.cuda" 2> "$T/str.cuda.err"
cpu=$(grep -E '^(rodata|map)=' "$T/str.cpu" | sort -u)
cuda=$(grep -E '^(rodata|map)=' "$T/str.cuda" | sort -u)
echo "output|printk %s prog run: cpu [$(echo "$cpu" | tr '\n' '|')] cuda x4 [$(echo "$cuda" | tr '\n' '|')] lines $(grep -cE '^(rodata|map)=' "$T/str.cuda") $([ "$cpu" = "$cuda" ] && echo SAME || echo DIFFERENT)"
timeout 60 "$G" run "$BIN/printk_str.bpf.o" -- "$A/printk" 3 > "$T/str.run" 2> "$T/str.run.err"
echo "output|printk %s gbpf run (tick x3) rc=$?: [$(grep -E '^(rodata|map)=' "$T/str.run" | sort | uniq -c | tr -s ' ' | tr '\n' '|')] $([ "$(grep -E '^(rodata|map)=' "$T/str.run" | sort -u)" = "$cpu" ] && echo SAME || echo DIFFERENT)"
grep -i "error\|not instrumented" "$T/str.run.err" "$T/str.cuda.err" | head -3 | sed 's/^/output|  /'
if command -v compute-sanitizer > /dev/null; then
	timeout 90 compute-sanitizer --tool memcheck "$G" prog run --backend cuda --threads 64 "$BIN/printk_str.bpf.o" \
		> "$T/str.memcheck" 2>&1
	echo "output|memcheck printk %s x64 rc=$?: $(grep -E 'ERROR SUMMARY' "$T/str.memcheck" | head -1)"
fi
cp "$T"/printk.spin "$T"/krs.err "$T"/str.run.err "${OUT:-/tmp}/" 2>/dev/null
echo "output|done"
