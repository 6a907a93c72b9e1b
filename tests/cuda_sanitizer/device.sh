#!/usr/bin/env bash
# tests/cuda_sanitizer/device.sh BIN - the Compute Sanitizer engine on a CUDA
# machine (H200). BIN: what tests/device/pack.sh packs, plus santhreads.bpf.o
# (tests/cuda_sanitizer/progs, built by meson in BUILD/tests/cuda_sanitizer/;
# skipped where absent).
#
# Sections (SAN_SECTIONS, default "bisect apps cublas torch bench"):
#   bisect  why patching failed inside `gbpf run`: the standalone smoke program
#           (tests/cuda_sanitizer/smoke) with the subscription before cuInit,
#           between cuInit and the primary context, after the context, under an idle agent that does
#           or does not open the cuda backend, and the engine with the
#           subscription at load vs lazy. One line per variant ("bisect|").
#   apps    examples/apps/vecadd.cu built SASS-only (-gencode
#           arch=compute_90,code=sm_90) under `gbpf run` with
#           GBPF_CUDA_ENGINE=sanitizer: exitcount, threadhist, kernelretsnoop,
#           mem_trace CHECKED exactly, app output identical; engine choices.
#   cublas  a cublasSgemm app (tests/cuda_sanitizer/apps/sgemm_cublas.cu):
#           entries == exits == threads launched (santhreads), output identical.
#   torch   tests/cuda_agent/apps/torch_step.py: the same.
#   bench   bench/cuda/sanitizer/run.sh.
# Prints "ok - " / "not ok - " lines, then a result table ("san|") and
# "cuda_sanitizer device: ok N, not ok M". Logs: $OUT/san-logs.tgz.
# From tests/device/run.sh: `bash tests/cuda_sanitizer/device.sh "$BIN"`.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "$1" && pwd)
O=/tmp/gbpf-san-out
A=/tmp/gbpf-san-apps
S=/tmp/san-smoke
SECTIONS=${SAN_SECTIONS:-bisect apps cublas torch bench}
mkdir -p "$O" "$A"
export PATH=$PATH:/usr/local/cuda/bin
export LD_LIBRARY_PATH=$BIN:$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GBPF_AGENT_LIB=$BIN/libgbpf-agent.so GBPF_PLUGIN_PATH=$BIN/libgbpf-cuda.so
export GBPF_CACHE_DIR=$A/cache
PASS=0 FAIL=0 TABLE=""
T0=$(date +%s)
check() {
	if eval "$2"; then PASS=$((PASS + 1)); echo "ok - $1"; TABLE="$TABLE
san|ok    |$1"; else FAIL=$((FAIL + 1)); echo "not ok - $1"; TABLE="$TABLE
san|NOT ok|$1"; fi
}
want() { case " $SECTIONS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
# gbpfrun NAME ENGINE PROBE APP...: stdout in $O/NAME.out, stderr in $O/NAME.err, app lines in $O/NAME.app
gbpfrun() {
	local name=$1 engine=$2 probe=$3; shift 3
	local t0=$(date +%s%N)
	GBPF_CUDA_ENGINE=$engine timeout 120 "$BIN/gbpf" -j run "$BIN/$probe.bpf.o" -- "$@" > "$O/$name.out" 2> "$O/$name.err"
	local rc=$?
	grep -v '^{' "$O/$name.out" > "$O/$name.app"
	echo "# $name: rc $rc, $(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f s", (b - a) / 1e9 }'); $(grep -v '^$' "$O/$name.err" | grep -iv 'info: .*instrumented by\|not instrumented.*no probe' | head -2 | cut -c1-200 | tr '\n' '|')"
	return $rc
}
# The exit count (key 0) and others from the last print of an array map.
mapval() { grep -o "{\"key\":$2,\"value\":[0-9]*}" "$1" | tail -1 | grep -o '[0-9]*}$' | tr -d '}'; }

echo "== setup ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); $(nvcc --version | tail -2 | head -1))"
cd "$ROOT"
echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); ptxas $(command -v ptxas); $(ls /usr/local/cuda/compute-sanitizer/libsanitizer-public.so 2>&1)"
nvcc -gencode arch=compute_90,code=sm_90 -o "$A/vecadd_sass" examples/apps/vecadd.cu 2>&1 | tail -2
nvcc -arch=sm_90 -o "$A/vecadd_ptx" examples/apps/vecadd.cu 2>&1 | tail -2
echo "# ptx in the SASS-only app: $(cuobjdump -lptx "$A/vecadd_sass" 2>&1 | grep -c 'PTX file') file(s)"

if want bisect; then
	echo "== bisect: sanitizerAddPatches of the smoke program's good module"
	SMOKE_BUILD_ONLY=1 bash tests/cuda_sanitizer/smoke/smoke.sh > "$O/smoke-build.log" 2>&1 || echo "# smoke build failed: $(tail -c 300 "$O/smoke-build.log")"
	G=tests/cuda_sanitizer/smoke/glob.ptx
	IDLE="LD_PRELOAD=$BIN/libgbpf-agent.so:$BIN/libgbpf-cuda.so GBPF_AGENT_LISTEN=1"
	BACK="GBPF_AGENT_BACKEND=cuda GBPF_AGENT_BACKEND_PATH=$BIN/libgbpf-cuda.so"
	bis() { # LABEL ENV...: one line
		local label=$1; shift
		local line
		line=$(timeout 60 env "$@" "$S/san_smoke" "$G" "$S/app.cubin" glob 2>&1 | grep -v '^#' | grep 'AddPatches' | tail -1)
		echo "bisect|$label|$(echo "$line" | sed 's/^.*AddPatches(/AddPatches(/; s/ (want [^)]*)//' | cut -c1-230)"
		echo "$line" > "$O/bisect-$label.txt"
	}
	if [ -x "$S/san_smoke" ]; then
		bis alone-subscribe-first SMOKE_ORDER=
		bis alone-cuInit-then-subscribe SMOKE_ORDER=init_first
		bis alone-ctx-then-subscribe SMOKE_ORDER=ctx_first
		# shellcheck disable=SC2086
		bis idle-agent-no-backend $IDLE GBPF_SAN_SUBSCRIBE=lazy
		# shellcheck disable=SC2086
		bis idle-agent-backend-open-lazy $IDLE $BACK GBPF_SAN_SUBSCRIBE=lazy
		# shellcheck disable=SC2086
		bis idle-agent-backend-open-load $IDLE $BACK
		check "bisect: standalone, a subscription before cuInit or between cuInit and the context patches; after the context it does not" \
			"grep -q 'counter 65536 ' $O/bisect-alone-subscribe-first.txt && grep -q 'counter 65536 ' $O/bisect-alone-cuInit-then-subscribe.txt && ! grep -q 'counter 65536 ' $O/bisect-alone-ctx-then-subscribe.txt"
		check "bisect: idle agent opening the backend (primary context in its constructor) breaks a lazy subscription; the load-time one works" \
			"! grep -q 'counter 65536 ' $O/bisect-idle-agent-backend-open-lazy.txt && grep -q 'counter 65536 ' $O/bisect-idle-agent-backend-open-load.txt"
	else
		echo "# smoke program not built: bisect lines skipped"
	fi
	GBPF_SAN_SUBSCRIBE=lazy gbpfrun sass-lazy sanitizer exitcount "$A/vecadd_sass"
	echo "bisect|gbpf run, engine subscribed lazily|exits $(mapval "$O/sass-lazy.out" 0); $(grep -o 'sanitizerAddPatches[^|]*' "$O/sass-lazy.err" | tail -1 | cut -c1-200)"
fi

if want apps; then
	echo "== SASS-only vecadd (256 x 256 threads), GBPF_CUDA_ENGINE=sanitizer"
	"$A/vecadd_sass" > "$O/plain.app" 2>&1
	gbpfrun sass-exitcount sanitizer exitcount "$A/vecadd_sass"
	echo "bisect|gbpf run, engine subscribed at load|exits $(mapval "$O/sass-exitcount.out" 0); $(grep -io 'instrumented by the compute sanitizer[^|]*' "$O/sass-exitcount.err" | head -1)"
	check "exitcount: 65536 exits, 1 launch, app output identical" \
		"[ '$(mapval "$O/sass-exitcount.out" 0)' = 65536 ] && [ '$(mapval "$O/sass-exitcount.out" 1)' = 1 ] && cmp -s $O/plain.app $O/sass-exitcount.app"
	check "the kernel reported instrumented by the Compute Sanitizer engine" "grep -qi 'instrumented by the compute sanitizer engine' $O/sass-exitcount.err"
	gbpfrun sass-threadhist sanitizer threadhist "$A/vecadd_sass"
	check "threadhist: 65536 per-thread slots, each exactly 1, output identical" \
		"grep -q '\"name\":\"thread_exits\"[^]]*\"entries\":65536' $O/sass-threadhist.out && ! grep -o '\"value\":[0-9]*' $O/sass-threadhist.out | grep -qv '\"value\":1$' && cmp -s $O/plain.app $O/sass-threadhist.app"
	gbpfrun sass-krs sanitizer kernelretsnoop "$A/vecadd_sass"
	python3 tests/cuda_sanitizer/check_events.py krs "$O/sass-krs.out" 65536 256 256 > "$O/krs.check"
	krs_rc=$?
	sed 's/^/# /' "$O/krs.check"
	check "kernelretsnoop: events + lost == 65536, distinct in-range threads, one kernel id, launch ids set" \
		"[ $krs_rc = 0 ] && cmp -s $O/plain.app $O/sass-krs.app"
	gbpfrun sass-mem sanitizer mem_trace "$A/vecadd_sass"
	python3 tests/cuda_sanitizer/check_events.py mem "$O/sass-mem.out" 131072 65536 > "$O/mem.check"
	mem_rc=$?
	sed 's/^/# /' "$O/mem.check" | cut -c1-400
	check "mem_trace: exactly 131072 global 4-byte loads and 65536 stores, output identical" \
		"[ $mem_rc = 0 ] && cmp -s $O/plain.app $O/sass-mem.app"
	gbpfrun sass-auto auto exitcount "$A/vecadd_sass"
	check "engine auto on the SASS-only app: Sanitizer engine, 65536 exits" "[ '$(mapval "$O/sass-auto.out" 0)' = 65536 ]"
	gbpfrun ptx-san sanitizer exitcount "$A/vecadd_ptx"
	gbpfrun ptx-ptx ptx exitcount "$A/vecadd_ptx"
	check "same PTX kernel: engine sanitizer and engine ptx both count 65536" \
		"[ '$(mapval "$O/ptx-san.out" 0)' = 65536 ] && [ '$(mapval "$O/ptx-ptx.out" 0)' = 65536 ]"
	gbpfrun sass-ptx ptx exitcount "$A/vecadd_sass"
	check "engine ptx on the SASS-only app: not instrumented, app ok" "grep -q 'elements ok' $O/sass-ptx.out && grep -qi 'not instrumented' $O/sass-ptx.err"
fi

# san_app NAME CMD...: santhreads under the Sanitizer engine vs the plain run.
san_app() {
	local name=$1; shift
	if [ ! -f "$BIN/santhreads.bpf.o" ]; then
		echo "# skip $name: $BIN/santhreads.bpf.o not packed (tests/cuda_sanitizer/progs/santhreads.bpf.c)"
		return
	fi
	PYTHONUNBUFFERED=1 timeout 120 "$@" > "$O/$name-plain.app" 2> "$O/$name-plain.err"
	echo "# $name alone: rc $?, $(head -c 200 "$O/$name-plain.app" | tr '\n' '|')"
	PYTHONUNBUFFERED=1 gbpfrun "$name" sanitizer santhreads "$@"
	local rc=$? ex la th en
	ex=$(mapval "$O/$name.out" 0); la=$(mapval "$O/$name.out" 1); th=$(mapval "$O/$name.out" 2); en=$(mapval "$O/$name.out" 3)
	echo "# $name: launches ${la:-0}, threads launched ${th:-0}, entries ${en:-0}, exits ${ex:-0}; kernels instrumented $(grep -ci 'instrumented by the compute sanitizer' "$O/$name.err"), not $(grep -ci 'not instrumented' "$O/$name.err")"
	grep -i 'error\|not instrumented' "$O/$name.err" | sort | uniq -c | sort -rn | head -4 | cut -c1-240 | sed 's/^/#   /'
	check "$name: exit 0, output identical" "[ $rc = 0 ] && cmp -s $O/$name-plain.app $O/$name.app"
	check "$name: entries == exits == threads launched (${th:-0})" \
		"[ -n '$th' ] && [ '${th:-0}' -gt 0 ] && [ '$ex' = '$th' ] && [ '$en' = '$th' ]"
}

if want cublas; then
	echo "== cuBLAS SGEMM (sm_90 SASS, no PTX)"
	nvcc -gencode arch=compute_90,code=sm_90 -o "$A/sgemm_cublas" tests/cuda_sanitizer/apps/sgemm_cublas.cu -lcublas 2>&1 | tail -2
	san_app cublas "$A/sgemm_cublas" 512 2
fi

if want torch; then
	echo "== PyTorch training step"
	if python3 -c 'import torch; assert torch.cuda.is_available()' > /dev/null 2>&1; then
		san_app torch python3 tests/cuda_agent/apps/torch_step.py
	else
		echo "# skip torch: python3 cannot import torch with a CUDA device"
	fi
fi

echo "# elapsed $(( $(date +%s) - T0 )) s"
echo "== results"
echo "$TABLE" | sed '/^$/d'
echo "cuda_sanitizer device: ok $PASS, not ok $FAIL"
if want bench; then
	bash "$ROOT/bench/cuda/sanitizer/run.sh" "$BIN"
fi
if [ -n "${OUT:-}" ]; then
	tar czf "$OUT/san-logs.tgz" -C "$O" . 2>/dev/null
	[ -d /tmp/gbpf-san-bench-out ] && tar czf "$OUT/san-bench-logs.tgz" -C /tmp/gbpf-san-bench-out . 2>/dev/null
fi
exit 0
