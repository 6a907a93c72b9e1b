#!/usr/bin/env bash
# tests/device/run.sh - on a CUDA machine: build the cuda backend, run every
# GPU test, compute-sanitizer memcheck on a GPU test and every cuda
# benchmark, then print a short table.
#
# The cuda part is built with plain gcc commands so that the script works
# where the rest of the project's dependencies (libbpf, libelf) are missing.
# Conformance data: ../shared/conformance beside the repository, or the file
# named by GBPF_CONFORMANCE_TSV.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${GBPF_DEVICE_BUILD:-/tmp/gbpf-device-build}
CC=${CC:-gcc}
LOG=${OUT:-$B}/device-log.txt
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$B" "${OUT:-$B}"
: > "$LOG"
cd "$ROOT" || exit 1

CF="-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Iinclude -I. -Iplugins/cuda"
CODEGEN="$(ls plugins/cuda/ptx_*.c | tr '\n' ' ') plugins/cuda/cuda_printq_ptx.c"
MAPS=$(ls maps/*.c 2>/dev/null | tr '\n' ' ')
PTXAS=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
PLUGIN=$B/libgbpf-cuda.so

declare -a ROWS
row() { ROWS+=("$(printf '%-34s %s' "$1" "$2")"); }
step() { echo "== $*" | tee -a "$LOG"; }
tapsum() { # name, file
	local ok nok skip
	ok=$(grep -c '^ok ' "$2"); nok=$(grep -c '^not ok' "$2"); skip=$(grep -c '# SKIP' "$2")
	row "$1" "ok $ok, not ok $nok, skip $skip"
}

step "build ($CC)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$LOG"
# The plugin also links the parts cuda_plugin.c registers (injector, agent, interception);
# only the entry symbol is exported, so a dlopen'ed plugin interposes nothing.
PLUGIN_EXTRA=$(ls plugins/cuda/cuda_inject_op.c plugins/cuda/cuda_ctx_fields.c plugins/cuda/cuda_globals.c plugins/cuda/cuda_agent*.c plugins/cuda/cuda_primary.c plugins/cuda/cuda_devmaps.c plugins/cuda/cuda_timeline.c \
	plugins/cuda/map_mirror.c plugins/cuda/ptx/*.c plugins/cuda/fatbin/*.c plugins/cuda/intercept/*.c plugins/cuda/sanitizer/*.c \
	$MAPS 2>/dev/null | tr '\n' ' ')
ZSTD=-lzstd
for f in /usr/lib/x86_64-linux-gnu/libzstd.so /usr/lib/x86_64-linux-gnu/libzstd.so.1 /usr/lib64/libzstd.so.1; do
	if [ -e "$f" ]; then ZSTD=$f; break; fi
done
$CC $CF -fPIC -shared -fvisibility=hidden -Wl,--version-script=plugins/plugin.map -Wl,--no-undefined -o "$PLUGIN" \
	$CODEGEN plugins/cuda/cuda_printq.c core/helpers/*.c plugins/cuda/cuda_plugin.c plugins/cuda/cuda_driver.c $PLUGIN_EXTRA $ZSTD -ldl -lpthread 2>&1 | tee -a "$LOG"
T=("-DGBPF_PTXAS=\"$PTXAS\"" "-DGBPF_CUDA_PLUGIN_PATH=\"$PLUGIN\"")
$CC $CF "${T[@]}" -o "$B/test_ptx_codegen" tests/cuda/test_ptx_codegen.c tests/cuda/cuda_test_util.c $CODEGEN 2>&1 | tee -a "$LOG"
$CC $CF "${T[@]}" -o "$B/test_ptx_conformance" tests/cuda/test_ptx_conformance.c tests/cuda/cuda_test_util.c $CODEGEN 2>&1 | tee -a "$LOG"
$CC $CF "${T[@]}" -o "$B/test_cuda_run" tests/cuda/test_cuda_run.c tests/cuda/cuda_test_util.c $MAPS -ldl -lpthread 2>&1 | tee -a "$LOG"
$CC $CF "${T[@]}" -o "$B/test_ptx_maps" tests/cuda/test_ptx_maps.c tests/cuda/map_progs.c tests/cuda/cuda_test_util.c $CODEGEN $MAPS 2>&1 | tee -a "$LOG"
$CC $CF "${T[@]}" -o "$B/test_cuda_maps" tests/cuda/test_cuda_maps.c tests/cuda/map_progs.c $MAPS -ldl -lpthread 2>&1 | tee -a "$LOG"
$CC $CF "${T[@]}" -Itests -Itests/reliability -o "$B/test_inline_run" tests/cuda/test_inline_run.c tests/cuda/cuda_test_util.c tests/reliability/difftest_gen.c tests/reliability/dt_inline.c \
	plugins/cuda/cuda_driver.c $CODEGEN plugins/cuda/cuda_printq.c plugins/cuda/ptx/*.c plugins/cuda/fatbin/*.c core/interp/*.c \
	core/isa/*.c core/helpers/*.c $MAPS $ZSTD -ldl -lpthread 2>&1 | tee -a "$LOG"
$CC $CF "${T[@]}" -o "$B/bench_ptx_codegen" bench/cuda/bench_ptx_codegen.c $CODEGEN 2>&1 | tee -a "$LOG"
$CC $CF "${T[@]}" -o "$B/bench_cuda_vecadd" bench/cuda/bench_cuda_vecadd.c plugins/cuda/cuda_driver.c -ldl 2>&1 | tee -a "$LOG"
for x in libgbpf-cuda.so test_ptx_codegen test_ptx_conformance test_cuda_run test_ptx_maps test_cuda_maps test_inline_run bench_ptx_codegen bench_cuda_vecadd; do
	[ -e "$B/$x" ] || row "build $x" "FAILED"
done

# GBPF_DEVICE_TESTS: a subset of the tests (space separated); GBPF_DEVICE_QUICK=1: no memcheck of
# test_cuda_run and no benchmarks (for a short device session).
TESTS=${GBPF_DEVICE_TESTS:-"test_ptx_codegen test_ptx_conformance test_cuda_run test_ptx_maps test_cuda_maps test_inline_run"}
[ "$TESTS" = none ] && TESTS=""
for t in $TESTS; do
	step "$t"
	start=$SECONDS
	timeout 300 "$B/$t" > "$B/$t.tap" 2>&1
	rc=$?
	cat "$B/$t.tap" >> "$LOG"
	grep -E '^not ok|^# ' "$B/$t.tap" | head -20
	tapsum "$t (rc $rc, $((SECONDS - start)) s)" "$B/$t.tap"
done
grep -E 'conformance, ' "$B/test_cuda_run.tap" | sed 's/^/  /'
grep -E 'threads atomically' "$B/test_cuda_run.tap" | sed 's/^/  /'
grep -E 'ratio|exactly|records \+' "$B/test_cuda_maps.tap" 2>/dev/null | sed 's/^/  /'

step "compute-sanitizer memcheck on test_cuda_maps (2000 threads)"
if command -v compute-sanitizer >/dev/null; then
	GBPF_CUDA_THREADS=2000 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 \
		"$B/test_cuda_maps" > "$B/memcheck_maps.txt" 2>&1
	rc=$?
	tail -3 "$B/memcheck_maps.txt" | tee -a "$LOG"
	row "memcheck test_cuda_maps" "rc $rc, $(grep -m1 -o 'ERROR SUMMARY: [0-9]* error[s]*' "$B/memcheck_maps.txt" || echo 'no summary')"
fi
# `gbpf run` on real CUDA apps: needs the binaries tests/device/pack.sh packs.
if [ -n "${GBPF_DEVICE_BIN:-}" ] && [ -x "$GBPF_DEVICE_BIN/gbpf" ]; then
	step "gbpf run on CUDA apps (tests/cuda_agent/device_run.sh)"
	start=$SECONDS
	OUT=$B/cuda_agent timeout 400 bash tests/cuda_agent/device_run.sh "$GBPF_DEVICE_BIN" > "$B/cuda_agent.tap" 2>&1
	rc=$?
	cat "$B/cuda_agent.tap" >> "$LOG"
	grep -E '^not ok|^# ' "$B/cuda_agent.tap" | head -40
	# the tools matrix's failures and its many-memory-site app (past the first 40 lines)
	grep -E '^# (not ok - |ok - [a-z_]+ x manysites)' "$B/cuda_agent.tap" | head -12
	tapsum "gbpf run cuda apps (rc $rc, $((SECONDS - start)) s)" "$B/cuda_agent.tap"
	grep -E '^# (bench|ratio)' "$B/cuda_agent.tap" | sed 's/^# /  /'
else
	row "gbpf run cuda apps" "skipped: GBPF_DEVICE_BIN (tests/device/pack.sh) not given"
fi

# Several GPUs / contexts in one process and a two-process job (all visible GPUs).
if [ -n "${GBPF_DEVICE_BIN:-}" ] && [ -x "$GBPF_DEVICE_BIN/gbpf" ]; then
	step "several GPUs and processes (tests/cuda_agent/multigpu_device.sh)"
	OUT=$B/multigpu timeout 300 bash tests/cuda_agent/multigpu_device.sh "$GBPF_DEVICE_BIN" > "$B/multigpu.tap" 2>&1
	cat "$B/multigpu.tap" >> "$LOG"
	grep -E '^not ok|^# ' "$B/multigpu.tap" | head -20
	tapsum "multi-GPU / multi-process" "$B/multigpu.tap"
	# Kernels without PTX: the Compute Sanitizer engine (SASS-only app, cuBLAS, PyTorch).
	step "Compute Sanitizer engine (tests/cuda_sanitizer/device.sh)"
	SAN_SECTIONS=${SAN_SECTIONS:-apps cublas torch bench} OUT=$B/sanitizer timeout 400 \
		bash tests/cuda_sanitizer/device.sh "$GBPF_DEVICE_BIN" > "$B/sanitizer.txt" 2>&1
	cat "$B/sanitizer.txt" >> "$LOG"
	grep -E '^not ok' "$B/sanitizer.txt" | head -10
	tapsum "sanitizer engine" "$B/sanitizer.txt"
	SAN_TABLE=$(grep -E '^(san\|NOT|bench\|)' "$B/sanitizer.txt")
fi

if [ -n "${GBPF_DEVICE_QUICK:-}" ]; then
	echo; echo "================ gbpf cuda device summary (quick) ================"
	for r in "${ROWS[@]}"; do echo "$r"; done | tee -a "$LOG"
	exit 0
fi

step "compute-sanitizer memcheck on test_cuda_run (10^3 threads)"
if command -v compute-sanitizer >/dev/null; then
	GBPF_CUDA_THREADS=1000 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 \
		"$B/test_cuda_run" > "$B/memcheck.txt" 2>&1
	rc=$?
	tail -5 "$B/memcheck.txt" | tee -a "$LOG"
	row "memcheck test_cuda_run" "rc $rc, $(grep -m1 -o 'ERROR SUMMARY: [0-9]* error[s]*' "$B/memcheck.txt" || echo 'no summary')"
else
	row "memcheck" "compute-sanitizer not found"
fi

step "benchmarks"
"$B/bench_ptx_codegen" 2>&1 | tee -a "$LOG" | tee "$B/bench1.txt"
row "bench ptx_codegen" "$(sed -n 's/.* in \([0-9.]* ms\).*ratio \([0-9.]*\).*/\1 (ratio \2)/p' "$B/bench1.txt")"
timeout 200 "$B/bench_cuda_vecadd" 2>&1 | tee -a "$LOG" | tee "$B/bench2.txt"
row "bench vecadd ebpf/cuda" "$(sed -n 's/.*ebpf \([0-9.]* us\).*cuda \([0-9.]* us\).*ratio \([0-9.]*\).*/\1 vs \2, ratio \3/p' "$B/bench2.txt")"

if [ -n "${GBPF_DEVICE_BIN:-}" ] && [ -x "$GBPF_DEVICE_BIN/gbpf" ]; then
	step "gbpf run benchmarks (bench/cuda/run.sh)"
	OUT=$B/bench timeout 500 bash bench/cuda/run.sh "$GBPF_DEVICE_BIN" > "$B/bench_run.txt" 2>&1
	cat "$B/bench_run.txt" >> "$LOG"
	grep -v '^bench|' "$B/bench_run.txt" | tail -20
	BENCH_TABLE=$(grep '^bench|' "$B/bench_run.txt" | sed 's/^bench|//')
	if [ -x "$GBPF_DEVICE_BIN/bench_agent_ring" ]; then
		step "print and ring output paths (bench/agent/device.sh)"
		OUT=$B/output timeout 200 bash bench/agent/device.sh "$GBPF_DEVICE_BIN" > "$B/output.txt" 2>&1
		cat "$B/output.txt" >> "$LOG"
		OUTPUT_TABLE=$(grep '^output|' "$B/output.txt" | sed 's/^output|//' | grep -v '^  \|^==' | cut -c1-200)
	fi
fi

echo
echo "================ gbpf cuda device summary ================"
for r in "${ROWS[@]}"; do echo "$r"; done | tee -a "$LOG"
if [ -n "${SAN_TABLE:-}" ]; then
	echo
	echo "---------------- Compute Sanitizer engine ----------------"
	echo "$SAN_TABLE" | tee -a "$LOG"
fi
if [ -n "${BENCH_TABLE:-}" ]; then
	echo
	echo "---------------- gbpf run benchmarks (ratios measured in this run) ----------------"
	echo "$BENCH_TABLE" | tee -a "$LOG"
fi
if [ -n "${OUTPUT_TABLE:-}" ]; then
	echo
	echo "---------------- print latency and ring output (bench/agent/device.sh) ----------------"
	echo "$OUTPUT_TABLE" | tee -a "$LOG"
fi
