#!/usr/bin/env bash
# tests/cuda_sanitizer/device.sh BIN - the Compute Sanitizer engine on a CUDA
# machine (H200). BIN: what tests/device/pack.sh packs. Builds
# examples/apps/vecadd.cu SASS-only (-gencode arch=compute_90,code=sm_90:
# no PTX, so PTX injection cannot reach it) and with PTX, runs threadhist,
# kernelretsnoop, mem_trace and exitcount under `gbpf run` and CHECKS the
# results; then bench/cuda/sanitizer/run.sh. Prints "ok -" / "not ok -"
# lines and a summary; logs under $OUT.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "$1" && pwd)
O=/tmp/gbpf-san-out
A=/tmp/gbpf-san-apps
mkdir -p "$O" "$A"
export PATH=$PATH:/usr/local/cuda/bin
export LD_LIBRARY_PATH=$BIN:$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GBPF_AGENT_LIB=$BIN/libgbpf-agent.so GBPF_PLUGIN_PATH=$BIN/libgbpf-cuda.so
export GBPF_CACHE_DIR=$A/cache
PASS=0 FAIL=0
check() { if eval "$2"; then PASS=$((PASS + 1)); echo "ok - $1"; else FAIL=$((FAIL + 1)); echo "not ok - $1"; fi; }
# gbpfrun NAME ENGINE PROBE APP...: json stdout in $O/NAME.out, stderr in $O/NAME.err
gbpfrun() {
	local name=$1 engine=$2 probe=$3; shift 3
	local t0=$(date +%s%N)
	GBPF_CUDA_ENGINE=$engine timeout 120 "$BIN/gbpf" -j run "$BIN/$probe.bpf.o" -- "$@" > "$O/$name.out" 2> "$O/$name.err"
	local rc=$?
	echo "# $name: rc $rc, $(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f s", (b - a) / 1e9 }'); stderr: $(grep -v '^$' "$O/$name.err" | head -4 | cut -c1-300 | tr '\n' '|')"
	return $rc
}

echo "== setup"
ls /usr/local/cuda/compute-sanitizer/libsanitizer-public.so 2>&1 | sed 's/^/# /'
echo "# CUDA_HOME=${CUDA_HOME:-} ptxas=$(command -v ptxas) LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
cd "$ROOT"
nvcc -gencode arch=compute_90,code=sm_90 -o "$A/vecadd_sass" examples/apps/vecadd.cu 2>&1 | tail -2
nvcc -arch=sm_90 -o "$A/vecadd_ptx" examples/apps/vecadd.cu 2>&1 | tail -2
cuobjdump -lptx "$A/vecadd_sass" 2>&1 | head -2 | sed 's/^/# ptx in sass-only app: /'

echo "== SASS-only vecadd (256 blocks x 256 threads), engine auto"
gbpfrun sass-exitcount auto exitcount "$A/vecadd_sass"
check "exitcount: app ok under gbpf run" "grep -q 'elements ok' $O/sass-exitcount.out"
check "exitcount: 65536 exits counted by the Sanitizer engine" "grep -q '{\"key\":0,\"value\":65536}' $O/sass-exitcount.out"
check "Sanitizer engine reported the kernel instrumented" "grep -qi 'compute sanitizer engine' $O/sass-exitcount.err"
gbpfrun sass-threadhist auto threadhist "$A/vecadd_sass"
check "threadhist: 65536 per-thread slots, each exactly 1" \
	"grep -q '\"name\":\"thread_exits\"[^]]*\"entries\":65536' $O/sass-threadhist.out && ! grep -o '\"value\":[0-9]*' $O/sass-threadhist.out | grep -qv '\"value\":1$'"
gbpfrun sass-krs auto kernelretsnoop "$A/vecadd_sass"
ev=$(grep -c '"type":"event"' "$O/sass-krs.out")
lost=$(grep -o '"type":"lost_events"[^}]*"count":[0-9]*' "$O/sass-krs.out" | grep -o '[0-9]*$' | awk '{ s += $1 } END { print s + 0 }')
check "kernelretsnoop: events ($ev) + lost ($lost) == 65536 threads" "[ \$(( ev + lost )) = 65536 ]"
kid=$(grep -o '"kernel_id":[0-9]*' "$O/sass-krs.out" | sort -u | head -3 | tr '\n' ' ')
echo "# kernel ids seen: $kid"
check "kernelretsnoop: one kernel id, block and thread ids in range" \
	"[ \$(grep -o '\"kernel_id\":[0-9]*' $O/sass-krs.out | sort -u | wc -l) = 1 ] && ! grep -o '\"block\":\[[0-9]*' $O/sass-krs.out | grep -q '\[2[6-9][0-9]\|\[[3-9][0-9][0-9]'"
grep '"type":"event"' "$O/sass-krs.out" | head -2 | cut -c1-300 | sed 's/^/# /'
gbpfrun sass-mem auto mem_trace "$A/vecadd_sass"
grep -v '"type":"event"' "$O/sass-mem.out" | grep accesses | head -3 | cut -c1-700 | sed 's/^/# /'
# vec_add: two 4-byte global loads and one 4-byte global store per thread (65536 threads).
check "mem_trace: 131072 global loads and 65536 global stores counted" "grep accesses $O/sass-mem.out | tail -1 | grep -q '131072' && grep accesses $O/sass-mem.out | tail -1 | grep -q '65536'"

echo "== vecadd with PTX: engine ptx vs sanitizer on the same kernel"
gbpfrun ptx-exitcount ptx exitcount "$A/vecadd_ptx"
gbpfrun san-exitcount sanitizer exitcount "$A/vecadd_ptx"
check "engine ptx: 65536 exits" "grep -q '{\"key\":0,\"value\":65536}' $O/ptx-exitcount.out"
check "engine sanitizer forced on a PTX kernel: 65536 exits" "grep -q '{\"key\":0,\"value\":65536}' $O/san-exitcount.out"
gbpfrun ptx-sass ptx exitcount "$A/vecadd_sass"
check "engine ptx on the SASS-only app: not instrumented, app ok" "grep -q 'elements ok' $O/ptx-sass.out && grep -qi 'not instrumented' $O/ptx-sass.err"
GBPF_SANITIZER_LIB=/nonexistent/lib.so GBPF_CUDA_ENGINE=auto "$BIN/gbpf" -j run "$BIN/exitcount.bpf.o" -- "$A/vecadd_sass" > "$O/nolib.out" 2> "$O/nolib.err"
echo "# nolib: $(head -c 400 "$O/nolib.err" | tr '\n' '|')"
check "no libsanitizer-public.so: app still ok, user told" "grep -q 'elements ok' $O/nolib.out && grep -qi 'sanitizer' $O/nolib.err"

if [ -x /tmp/san-smoke/san_smoke ]; then
	echo "== the smoke program (tests/cuda_sanitizer/smoke) inside gbpf run"
	GBPF_CUDA_ENGINE=auto timeout 60 "$BIN/gbpf" run "$BIN/exitcount.bpf.o" -- /tmp/san-smoke/san_smoke \
		"$ROOT/tests/cuda_sanitizer/smoke/glob.ptx" /tmp/san-smoke/app.cubin glob 2>&1 | cut -c1-600 | tail -8
fi
echo "cuda_sanitizer device: ok $PASS, not ok $FAIL"
if [ "${GBPF_SAN_BENCH:-1}" = 1 ]; then
	bash "$ROOT/bench/cuda/sanitizer/run.sh" "$BIN"
fi
if [ -n "${OUT:-}" ]; then
	tar czf "$OUT/san-logs.tgz" -C "$O" . 2>/dev/null
	[ -d /tmp/gbpf-san-bench-out ] && tar czf "$OUT/san-bench-logs.tgz" -C /tmp/gbpf-san-bench-out . 2>/dev/null
fi
