#!/usr/bin/env bash
# bench/cuda/sanitizer/run.sh BIN - overhead of the Compute Sanitizer engine
# against PTX injection on the same kernel and against uninstrumented runs
# (bench/cuda/apps/vecadd_bench.cu: CUDA events, warm-up, median of many
# launches). Lines starting "bench|" are the table.
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BIN=$(cd "$1" && pwd)
A=${GBPF_BENCH_APPS:-/tmp/gbpf-san-bench}
O=/tmp/gbpf-san-bench-out
mkdir -p "$A" "$O"
export PATH=$PATH:/usr/local/cuda/bin
export LD_LIBRARY_PATH=$BIN:$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GBPF_AGENT_LIB=$BIN/libgbpf-agent.so GBPF_PLUGIN_PATH=$BIN/libgbpf-cuda.so
export CUDA_CACHE_PATH=$A/jitcache GBPF_CACHE_DIR=$A/cache
LOG2N=${GBPF_SAN_BENCH_LOG2N:-24}
ITERS=${GBPF_SAN_BENCH_ITERS:-50}

cd "$ROOT/bench/cuda/apps" || exit 1
nvcc -O3 -arch=sm_90 -o "$A/vecadd" vecadd_bench.cu || exit 1
nvcc -O3 -gencode arch=compute_90,code=sm_90 -o "$A/vecadd_sass" vecadd_bench.cu || exit 1

value() { sed -n "s/^gbpf-bench $1 .*$3=\([0-9.]*\).*/\1/p" "$2" | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "n/a" }'; }
row() { printf 'bench|%-48s|%-12s|%-8s\n' "$1" "$2" "$3"; }
# run NAME ENGINE [gbpf args --] APP ARGS
run() {
	local name=$1 engine=$2; shift 2
	GBPF_CUDA_ENGINE=$engine timeout 60 "$@" > "$O/$name" 2> "$O/$name.err"
	local rc=$?
	[ $rc = 0 ] || echo "# $name: exit $rc: $(tail -c 300 "$O/$name.err" | tr '\n' ' ')"
}
run plain auto "$A/vecadd" $LOG2N $ITERS
run plain_sass auto "$A/vecadd_sass" $LOG2N $ITERS
# The load-time subscription (san_process.h) on launches no probe targets, in the order A B B A.
run noprobe-load auto "$BIN/gbpf" run "$BIN/noprobe.bpf.o" -- "$A/vecadd" $LOG2N $ITERS
GBPF_SAN_SUBSCRIBE=off run noprobe-off auto "$BIN/gbpf" run "$BIN/noprobe.bpf.o" -- "$A/vecadd" $LOG2N $ITERS
GBPF_SAN_SUBSCRIBE=off run noprobe-off2 auto "$BIN/gbpf" run "$BIN/noprobe.bpf.o" -- "$A/vecadd" $LOG2N $ITERS
run noprobe-load2 auto "$BIN/gbpf" run "$BIN/noprobe.bpf.o" -- "$A/vecadd" $LOG2N $ITERS
run plain2 auto "$A/vecadd" $LOG2N $ITERS
PROBES=${GBPF_SAN_BENCH_PROBES:-empty exitcount threadhist}
for probe in $PROBES; do
	run ptx-$probe ptx "$BIN/gbpf" run --thread-slots $((1 << LOG2N)) "$BIN/$probe.bpf.o" -- "$A/vecadd" $LOG2N $ITERS
	run san-$probe sanitizer "$BIN/gbpf" run --thread-slots $((1 << LOG2N)) "$BIN/$probe.bpf.o" -- "$A/vecadd" $LOG2N $ITERS
	run sass-$probe auto "$BIN/gbpf" run --thread-slots $((1 << LOG2N)) "$BIN/$probe.bpf.o" -- "$A/vecadd_sass" $LOG2N $ITERS
done
p=$(value vecadd "$O/plain" median_us); ps=$(value vecadd "$O/plain_sass" median_us)
row "vecadd 2^$LOG2N uninstrumented (PTX app / SASS-only app)" "$p / $ps us" "1.00"
p2=$(value vecadd "$O/plain2" median_us)
row "vecadd uninstrumented, second run" "$p2 us" "$(ratio "$p2" "$p")"
for v in load load2 off off2; do
	n=$(value vecadd "$O/noprobe-$v" median_us)
	row "agent, no device probe, subscription: $v" "$n us" "$(ratio "$n" "$p")"
done
for probe in $PROBES; do
	t=$(value vecadd "$O/ptx-$probe" median_us); s=$(value vecadd "$O/san-$probe" median_us)
	ss=$(value vecadd "$O/sass-$probe" median_us)
	row "$probe: PTX injection" "$t us" "$(ratio "$t" "$p")"
	row "$probe: Sanitizer engine, same kernel" "$s us" "$(ratio "$s" "$p")"
	row "$probe: Sanitizer vs PTX injection" "" "$(ratio "$s" "$t")"
	row "$probe: Sanitizer engine, SASS-only app" "$ss us" "$(ratio "$ss" "$ps")"
done
