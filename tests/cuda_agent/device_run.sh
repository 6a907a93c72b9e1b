#!/usr/bin/env bash
# tests/cuda_agent/device_run.sh - `gbpf run` on real CUDA apps (H200).
# Usage: device_run.sh BIN [SECTION]   where BIN holds gbpf, libgbpf.so.0,
# libgbpf-agent.so, libgbpf-cuda.so, the probe objects (*.bpf.o) and, in
# BIN/lib, shared libraries the build machine had and this one may lack.
# Builds examples/apps/*.cu with nvcc in the forms tests/inject uses,
# measures host-memory atomics, then runs each probe on each app and
# CHECKS: app output identical with and without gbpf, exact counts.
# SECTION: all (default), apps (only tests/cuda_agent/apps/apps.sh: NVRTC,
# graphs, cudaLaunchKernelEx, contexts, big shared memory, device globals,
# trace_printk, PyTorch; then the tools matrix), or matrix (only
# tests/cuda_agent/apps/tools_matrix.sh: every example tool on every build
# and launch path, exact counts), or memcheck (compute-sanitizer memcheck on
# vecadd instrumented by four example tools; also part of all).
set -u
SECTION=${2:-all}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "$1" && pwd)
O=${OUT:-/tmp/gbpf-cuda-agent}
A=/tmp/gbpf-cuda-agent-apps
mkdir -p "$O" "$A"
export PATH=$PATH:/usr/local/cuda/bin
export LD_LIBRARY_PATH=$BIN:$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GBPF_AGENT_LIB=$BIN/libgbpf-agent.so GBPF_PLUGIN_PATH=$BIN/libgbpf-cuda.so
export CUDA_CACHE_PATH=$A/jitcache
PASS=0 FAIL=0
check() { if eval "$2"; then PASS=$((PASS + 1)); echo "ok - $1"; else FAIL=$((FAIL + 1)); echo "not ok - $1"; fi; }

if [ "$SECTION" = all ]; then
echo "== build apps"
cd "$ROOT" || exit 1
nvcc -o "$A/hostatomic" tests/cuda_agent/hostatomic.cu -lcuda 2>&1 | tail -3
for app in vecadd branches reduce templated coop; do
	nvcc -o "$A/$app" "examples/apps/$app.cu" 2>&1 | tail -2
done
nvcc -cudart=shared -o "$A/vecadd_shared" examples/apps/vecadd.cu
nvcc -arch=sm_90 -o "$A/vecadd_sm90" examples/apps/vecadd.cu
nvcc --no-compress -o "$A/vecadd_nocompress" examples/apps/vecadd.cu
nvcc -gencode arch=compute_90,code=sm_90 -o "$A/vecadd_sassonly" examples/apps/vecadd.cu

echo "== host-memory atomics under GPU contention"
"$A/hostatomic" 65536 | tee "$O/hostatomic.txt"
check "GPU atomics on cuMemHostRegister'ed memfd memory exact (16.7M threads, 3 reps)" \
	"[ \$(grep -c ' exact$' $O/hostatomic.txt) = 3 ]"

echo "== gbpf run"
for app in vecadd vecadd_shared vecadd_sm90 vecadd_nocompress branches reduce templated coop; do
	"$A/$app" > "$O/$app.plain" 2>&1
	timeout 120 "$BIN/gbpf" -j run "$BIN/exitcount.bpf.o" -- "$A/$app" > "$O/$app.out" 2> "$O/$app.err"
	rc=$?
	grep -v '^{' "$O/$app.out" > "$O/$app.appout"
	check "$app: exits 0 under gbpf run and prints what it prints alone" \
		"[ $rc = 0 ] && cmp -s $O/$app.plain $O/$app.appout"
	echo "# $(grep -h 'gbpf run' "$O/$app.err" | head -5 | tr '\n' ' ')"
	echo "# maps: $(grep '"exitcount"' "$O/$app.out" | tail -1 | cut -c1-300)"
done
# vecadd: 256 blocks of 256 threads, one launch.
check "vecadd: exit count == 65536 threads launched, 1 host launch" \
	"grep -q '{\"key\":0,\"value\":65536}' $O/vecadd.out && grep -q '{\"key\":1,\"value\":1}' $O/vecadd.out"
for v in vecadd_shared vecadd_sm90 vecadd_nocompress; do
	check "$v: exit count == 65536" "grep -q '{\"key\":0,\"value\":65536}' $O/$v.out"
done
GBPF_CUDA_ENGINE=ptx timeout 120 "$BIN/gbpf" -j run "$BIN/exitcount.bpf.o" -- "$A/vecadd_sassonly" > "$O/sass.out" 2> "$O/sass.err"
check "engine ptx: SASS-only kernel reported not instrumented, app still runs" \
	"grep -q 'not instrumented' $O/sass.err && grep -q 'elements ok' $O/sass.out"
# The default engine (auto) patches kernels without PTX with the Compute Sanitizer engine.
timeout 120 "$BIN/gbpf" -j run "$BIN/exitcount.bpf.o" -- "$A/vecadd_sassonly" > "$O/sassauto.out" 2> "$O/sassauto.err"
check "engine auto: SASS-only kernel patched, exit count == 65536, app ok" \
	"grep -q '{\"key\":0,\"value\":65536}' $O/sassauto.out && grep -q 'elements ok' $O/sassauto.out"
for probe in threadhist kernelretsnoop kernelretsnoop_reserve launchlate cuda_counter mem_trace; do
	start=$(date +%s%N)
	timeout 120 "$BIN/gbpf" -j run "$BIN/$probe.bpf.o" -- "$A/vecadd" > "$O/ex-$probe.out" 2> "$O/ex-$probe.err"
	rc=$?
	secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	check "example $probe on vecadd: app ok (rc $rc, $secs s)" "grep -q 'elements ok' $O/ex-$probe.out"
	echo "# stderr: $(head -c 400 "$O/ex-$probe.err" | tr '\n' ' ')"
	echo "# stdout: $(grep -v elements "$O/ex-$probe.out" | head -c 600 | tr '\n' ' ')"
done
# vecadd launches 256 x 256 threads once: one slot per thread, each exited once.
check "threadhist: 65536 per-thread slots, each thread counted once" \
	"grep -q '\"name\":\"thread_exits\"[^]]*\"entries\":65536' $O/ex-threadhist.out && ! grep -o '\"value\":[0-9]*' $O/ex-threadhist.out | grep -qv '\"value\":1$'"
# One 48-byte event a thread (ids and time, then block and thread coordinates: hex from 48 on),
# written by bpf_ringbuf_output and by reserve + submit: none lost uncounted, none twice.
for probe in kernelretsnoop kernelretsnoop_reserve; do
	ev=$(grep -c '"type":"event"' "$O/ex-$probe.out")
	lost=$(grep -o '"type":"lost_events"[^}]*"count":[0-9]*' "$O/ex-$probe.out" | grep -o '[0-9]*$' | awk '{ s += $1 } END { print s + 0 }')
	uniq=$(grep -o '"type":"event","map":"events","size":48,"data":"[0-9a-f]*"' "$O/ex-$probe.out" | sed -E 's/.*"data":"[0-9a-f]{48}([0-9a-f]{48})"/\1/' | sort -u | wc -l)
	check "$probe: events ($ev) + lost (${lost:-0}) == 65536 threads, each thread's coordinates once ($uniq)" \
		"[ \$(( ev + ${lost:-0} )) = 65536 ] && [ $uniq = $ev ]"
done
# Timeline: async work on two streams, the app's own CUDA-event timings vs gbpf's trace.
nvcc -o "$A/async2" tests/cuda_agent/apps/async2.cu 2>&1 | tail -2
timeout 120 "$BIN/gbpf" run --trace "$O/async2.trace.json" "$BIN/noprobe.bpf.o" -- "$A/async2" > "$O/async2.out" 2> "$O/async2.err"
python3 tests/cuda_agent/check_timeline.py "$O/async2.out" "$O/async2.trace.json" > "$O/timeline.tap" 2>&1
grep -v '^1\.\.' "$O/timeline.tap" | sed 's/^ok /# timeline ok /; s/^not ok /# timeline NOT ok /'
check "timeline of 2 async streams matches the app's CUDA events within 5%" "grep -q '^1\.\.' $O/timeline.tap && ! grep -q '^not ok' $O/timeline.tap"
echo "# summary: $(grep -A12 -i 'stream' "$O/async2.err" | head -14 | tr '\n' ' ' | cut -c1-700)"
fi
# compute-sanitizer memcheck on the instrumented kernels: the agent (preloaded by
# gbpf run, engine ptx: the Compute Sanitizer tool holds the process's one
# subscription) instruments vecadd inside memcheck's process. (Until 8be60d9 the
# target died before its first API call: gbpf's dlsym resolved RTLD_NEXT for
# memcheck's interceptor by walking link maps, which crashed ld.so.)
if { [ "$SECTION" = all ] || [ "$SECTION" = memcheck ]; } && command -v compute-sanitizer > /dev/null; then
	[ -x "$A/vecadd" ] || nvcc -o "$A/vecadd" examples/apps/vecadd.cu 2>&1 | tail -2
	for probe in threadhist kernelretsnoop mem_trace bbcount; do
		timeout 180 "$BIN/gbpf" -j run --engine ptx "$BIN/$probe.bpf.o" -- compute-sanitizer --tool memcheck \
			--error-exitcode 3 "$A/vecadd" > "$O/mc-$probe.out" 2> "$O/mc-$probe.err"
		rc=$?
		echo "# memcheck $probe: rc $rc, $(grep -m1 -o 'ERROR SUMMARY: [0-9]* error[s]*' "$O/mc-$probe.out" "$O/mc-$probe.err" | head -1)"
		check "memcheck on vecadd instrumented by $probe: 0 errors, app ok, kernel instrumented" \
			"[ $rc = 0 ] && grep -q 'ERROR SUMMARY: 0 errors' $O/mc-$probe.out $O/mc-$probe.err && grep -q 'elements ok' $O/mc-$probe.out && grep -q 'vec_add.*instrumented' $O/mc-$probe.err"
	done
	# The default engine (auto) under memcheck: the plugin leaves the Sanitizer subscription to the tool.
	timeout 180 "$BIN/gbpf" -j run "$BIN/threadhist.bpf.o" -- compute-sanitizer --tool memcheck \
		--error-exitcode 3 "$A/vecadd" > "$O/mc-auto.out" 2> "$O/mc-auto.err"
	rc=$?
	check "memcheck, engine auto: 0 errors, app ok, vecadd instrumented with PTX" \
		"[ $rc = 0 ] && grep -q 'ERROR SUMMARY: 0 errors' $O/mc-auto.out $O/mc-auto.err && grep -q 'elements ok' $O/mc-auto.out && grep -q 'vec_add.*instrumented' $O/mc-auto.err"

fi
if [ "$SECTION" = all ] || [ "$SECTION" = apps ]; then
	# shellcheck source=tests/cuda_agent/apps/apps.sh
	. "$ROOT/tests/cuda_agent/apps/apps.sh"
fi
# shellcheck source=tests/cuda_agent/apps/tools_matrix.sh
[ "$SECTION" = memcheck ] || . "$ROOT/tests/cuda_agent/apps/tools_matrix.sh"
echo "cuda_agent device: ok $PASS, not ok $FAIL"
