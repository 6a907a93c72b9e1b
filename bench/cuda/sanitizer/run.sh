#!/usr/bin/env bash
# bench/cuda/sanitizer/run.sh BIN - overhead of the Compute Sanitizer engine
# against PTX injection on the same kernel and against uninstrumented runs,
# and what the process's Sanitizer subscription costs kernels no probe
# instruments (bench/cuda/apps/vecadd_bench.cu: CUDA events around each
# launch, warm-up, median of ITERS launches). BIN as for
# tests/cuda_sanitizer/device.sh; prebuilt apps in BIN/apps
# (tests/cuda_sanitizer/build_apps.sh), else compiled here. Lines starting
# "bench|" are the table; A and B variants alternate (A B B A) against drift.
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
ITERS=${GBPF_SAN_BENCH_ITERS:-200}

cd "$ROOT/bench/cuda/apps" || exit 1
for v in vecadd_bench vecadd_bench_sass; do
	if [ -x "$BIN/apps/$v" ]; then
		cp "$BIN/apps/$v" "$A/$v"
	elif [ $v = vecadd_bench ]; then
		nvcc -O3 -arch=sm_90 -o "$A/$v" vecadd_bench.cu || exit 1
	else
		nvcc -O3 -gencode arch=compute_90,code=sm_90 -o "$A/$v" vecadd_bench.cu || exit 1
	fi
done
V=$A/vecadd_bench VS=$A/vecadd_bench_sass

value() { sed -n "s/^gbpf-bench $1 .*$3=\([0-9.]*\).*/\1/p" "$2" | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b; else print "n/a" }'; }
row() { printf 'bench|%-62s|%-14s|%-8s\n' "$1" "$2" "$3"; }
# run NAME ENGINE CMD...: GBPF_CUDA_ENGINE=ENGINE (the application's environment, as gbpf run --engine exports it)
run() {
	local name=$1 engine=$2; shift 2
	GBPF_CUDA_ENGINE=$engine timeout 60 "$@" > "$O/$name" 2> "$O/$name.err"
	local rc=$?
	[ $rc = 0 ] || echo "# $name: exit $rc: $(tail -c 300 "$O/$name.err" | tr '\n' ' ')"
}
med() { value vecadd "$O/$1" median_us; }
G=$BIN/gbpf
run plain auto "$V" $LOG2N $ITERS
run plain_sass auto "$VS" $LOG2N $ITERS
# The load-time subscription on launches no probe targets (an object without device programs).
run noprobe-load auto "$G" run "$BIN/noprobe.bpf.o" -- "$V" $LOG2N $ITERS
GBPF_SAN_SUBSCRIBE=off run noprobe-off auto "$G" run "$BIN/noprobe.bpf.o" -- "$V" $LOG2N $ITERS
GBPF_SAN_SUBSCRIBE=off run noprobe-off2 auto "$G" run "$BIN/noprobe.bpf.o" -- "$V" $LOG2N $ITERS
run noprobe-load2 auto "$G" run "$BIN/noprobe.bpf.o" -- "$V" $LOG2N $ITERS
# The idle agent (gbpf run --idle: waits for gbpf attach; subscribed at load unless told).
run idle-load auto "$G" run --idle -- "$V" $LOG2N $ITERS
GBPF_SAN_SUBSCRIBE=off run idle-off auto "$G" run --idle -- "$V" $LOG2N $ITERS
GBPF_SAN_SUBSCRIBE=off run idle-off2 auto "$G" run --idle -- "$V" $LOG2N $ITERS
run idle-load2 auto "$G" run --idle -- "$V" $LOG2N $ITERS
run plain2 auto "$V" $LOG2N $ITERS
# Empty entry+exit probes through PTX injection as the user gets it (engine auto: subscribed at load).
E="$G run --thread-slots $((1 << LOG2N)) $BIN/empty.bpf.o -- $V $LOG2N $ITERS"
run auto-empty auto $E
run auto-empty2 auto $E
PROBES=${GBPF_SAN_BENCH_PROBES:-empty threadhist}
for probe in $PROBES; do
	run ptx-$probe ptx "$G" run --thread-slots $((1 << LOG2N)) "$BIN/$probe.bpf.o" -- "$V" $LOG2N $ITERS
	run san-$probe sanitizer "$G" run --thread-slots $((1 << LOG2N)) "$BIN/$probe.bpf.o" -- "$V" $LOG2N $ITERS
	run sass-$probe auto "$G" run --thread-slots $((1 << LOG2N)) "$BIN/$probe.bpf.o" -- "$VS" $LOG2N $ITERS
done
p=$(med plain); ps=$(med plain_sass); p2=$(med plain2)
row "vecadd 2^$LOG2N uninstrumented (PTX app / SASS-only app)" "$p / $ps us" "1.00"
row "vecadd uninstrumented, second run" "$p2 us" "$(ratio "$p2" "$p")"
for v in load load2 off off2; do
	row "agent, no device program, subscription: $v" "$(med noprobe-$v) us" "$(ratio "$(med noprobe-$v)" "$p")"
done
for v in load load2 off off2; do
	row "idle agent (gbpf run --idle), subscription: $v" "$(med idle-$v) us" "$(ratio "$(med idle-$v)" "$p")"
done
for v in auto-empty auto-empty2; do
	row "empty probes, engine auto (PTX injection; subscribed at load)" "$(med $v) us" "$(ratio "$(med $v)" "$p")"
done
for probe in $PROBES; do
	t=$(med ptx-$probe); s=$(med san-$probe); ss=$(med sass-$probe)
	row "$probe: PTX injection (engine ptx)" "$t us" "$(ratio "$t" "$p")"
	row "$probe: Sanitizer engine, same kernel" "$s us" "$(ratio "$s" "$p")"
	row "$probe: Sanitizer vs PTX injection" "" "$(ratio "$s" "$t")"
	row "$probe: Sanitizer engine (auto), SASS-only app" "$ss us" "$(ratio "$ss" "$ps")"
done
