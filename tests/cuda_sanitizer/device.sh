#!/usr/bin/env bash
# tests/cuda_sanitizer/device.sh BIN - the Compute Sanitizer engine on a CUDA
# machine (H200). BIN: what tests/device/pack.sh packs (with the probe
# objects of tests/cuda_sanitizer/progs: santhreads, sanlaunch, memkern,
# sanclock; and tests/cuda_agent's devctx_exit),
# plus BIN/apps from tests/cuda_sanitizer/build_apps.sh (compiled here
# where absent).
#
# Sections (SAN_SECTIONS, default "apps cublas torch subcost bench"):
#   bisect  why patching failed inside `gbpf run` (session 4): the standalone
#           smoke program with the subscription before cuInit, between cuInit
#           and the primary context, after the context, under an idle agent.
#   apps    examples/apps/vecadd.cu built SASS-only (-gencode
#           arch=compute_90,code=sm_90) under `gbpf run` with
#           GBPF_CUDA_ENGINE=sanitizer: exitcount, threadhist, kernelretsnoop,
#           mem_trace CHECKED exactly, app output identical; ctx->device
#           (devctx_exit) and bpf_ktime_get_ns against the host's launch time
#           (sanclock); engine choices.
#   cublas  tests/cuda_sanitizer/apps/sgemm_cublas.cu (cuBLAS SGEMM, SASS only)
#   torch   tests/cuda_sanitizer/apps/torch_train.py (convolutions, ReLU,
#           pooling, linear, cross-entropy, SGD: cuDNN, cuBLAS and PyTorch
#           kernels, SASS only). Both with the examples as users run them,
#           under GBPF_CUDA_ENGINE=sanitizer, each checked independently:
#             santhreads: entries == exits == threads the host launched;
#             threadhist + sanlaunch: every per-thread slot t counts the
#               launches with more than t threads (check_events.py threadhist);
#             kernelretsnoop + sanlaunch: events + lost == threads launched,
#               each (launch, block, thread) at most once, inside its launch;
#             mem_trace: its total equals memkern's (per kernel); per
#               kernel, memkern equals Nsight Compute's per-thread count of
#               memory instructions of the plain run wherever ncu's
#               warp-level classes show none the callbacks skip (local,
#               LDGSTS, LDSM, generic), is at most it elsewhere, and lies
#               within ncu's warp-level counts per class (x1 .. x32).
#           App output identical to the plain run in every run.
#   subcost the cost of the subscription, part by part, without gbpf
#           (bench/cuda/sanitizer/subcost.c): "subcost|" lines.
#   bench   bench/cuda/sanitizer/run.sh.
# SAN_TIME_BUDGET (s, default 215): no new section step starts after it.
# Prints "ok - " / "not ok - " lines, then a result table ("san|") and
# "cuda_sanitizer device: ok N, not ok M". Logs: $OUT/san-logs.tgz.
# From tests/device/run.sh: `bash tests/cuda_sanitizer/device.sh "$BIN"`.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "$1" && pwd)
O=/tmp/gbpf-san-out
A=/tmp/gbpf-san-apps
S=/tmp/san-smoke
SECTIONS=${SAN_SECTIONS:-apps cublas torch subcost bench}
BUDGET=${SAN_TIME_BUDGET:-215}
rm -rf "$O" # logs of an earlier run on a warm machine must not stand in for this one
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
# gbpfrun NAME ENGINE "PROBE..." APP...: stdout in $O/NAME.out, stderr in $O/NAME.err, app lines in $O/NAME.app
gbpfrun() {
	local name=$1 engine=$2 probes=() p; shift 2
	for p in $1; do probes+=("$BIN/$p.bpf.o"); done
	shift
	local t0=$(date +%s%N)
	GBPF_CUDA_ENGINE=$engine timeout 120 "$BIN/gbpf" -j run "${probes[@]}" -- "$@" > "$O/$name.out" 2> "$O/$name.err"
	local rc=$?
	# The application's lines without gbpf's objects: an object can follow a line's text
	# the application had begun (check_events.py lines()); no application here prints empty lines.
	sed -E 's/\{"type":".*$//' "$O/$name.out" | grep -v '^$' > "$O/$name.app"
	echo "# $name: rc $rc, $(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f s", (b - a) / 1e9 }'); $(grep -v '^$' "$O/$name.err" | grep -iv 'info: .*instrumented by\|not instrumented.*no probe' | head -2 | cut -c1-200 | tr '\n' '|')"
	return $rc
}
# Whether time is left for another step (SAN_TIME_BUDGET).
time_left() {
	if [ $(( $(date +%s) - T0 )) -ge "$BUDGET" ]; then
		echo "# skipped (time budget ${BUDGET} s spent): $1"
		return 1
	fi
}
# app NAME NVCC-ARGS...: $A/NAME, prebuilt in $BIN/apps (build_apps.sh) or compiled now.
app() {
	local name=$1; shift
	if [ -x "$BIN/apps/$name" ]; then
		cp "$BIN/apps/$name" "$A/$name"
	else
		nvcc "$@" -o "$A/$name" 2>&1 | tail -2
	fi
}
# The exit count (key 0) and others from the last print of an array map.
mapval() { grep -o "{\"key\":$2,\"value\":[0-9]*}" "$1" | tail -1 | grep -o '[0-9]*}$' | tr -d '}'; }
# mapkv FILE MAP KEY: KEY's value in the last print of array map MAP (one JSON line per map).
mapkv() { grep "\"name\":\"$2\"" "$1" | tail -1 | grep -o "{\"key\":$3,\"value\":[0-9]*}" | grep -o '[0-9]*}$' | tr -d '}'; }
# mapkeys FILE MAP: "key:value" of MAP's non-zero entries in its last print, space separated.
mapkeys() { grep "\"name\":\"$2\"" "$1" | tail -1 | grep -o '{"key":[0-9]*,"value":[1-9][0-9]*}' | sed 's/{"key":\([0-9]*\),"value":\([0-9]*\)}/\1:\2/' | tr '\n' ' ' | sed 's/ $//'; }

echo "== setup ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); $(nvcc --version | tail -2 | head -1))"
cd "$ROOT"
echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); ptxas $(command -v ptxas); $(ls /usr/local/cuda/compute-sanitizer/libsanitizer-public.so 2>&1)"
app vecadd_sass -gencode arch=compute_90,code=sm_90 examples/apps/vecadd.cu
app vecadd_ptx -arch=sm_90 examples/apps/vecadd.cu
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
	"$A/vecadd_sass" 2>&1 | grep -v '^$' > "$O/plain.app"
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
	# ctx->device (issue #5): devctx_exit (tests/cuda_agent/progs) counts thread exits under the
	# device its gpu/exit probe reads from the engine's record, launches under host/launch's
	# ctx->device (the agent's cuCtxGetDevice). On one GPU both are 0, as the old constant was:
	# the pad and the agreement are what this shows there; the fake-driver test (san_engine)
	# shows other ordinals.
	if [ -f "$BIN/devctx_exit.bpf.o" ]; then
		gbpfrun sass-devctx sanitizer devctx_exit "$A/vecadd_sass"
		hostdev=$(mapkeys "$O/sass-devctx.out" host_device_launches)
		gpudev=$(mapkeys "$O/sass-devctx.out" gpu_device_exits)
		echo "# devctx_exit: launches per host device {$hostdev}, thread exits per GPU ctx->device {$gpudev}"
		check "ctx->device under the Sanitizer engine: 65536 exits under the launch's device (cuCtxGetDevice), none elsewhere, pad 0" \
			"[ -n '$hostdev' ] && [ '$hostdev' = '${hostdev%%:*}:1' ] && [ '$gpudev' = '${hostdev%%:*}:65536' ] && cmp -s $O/plain.app $O/sass-devctx.app"
	else
		check "ctx->device under the Sanitizer engine: $BIN/devctx_exit.bpf.o packed" false
	fi
	# bpf_ktime_get_ns (issue #5): GPU entry time less the host's launch time (launchlate's way).
	if [ -f "$BIN/sanclock.bpf.o" ]; then
		gbpfrun sass-clock sanitizer sanclock "$A/vecadd_sass"
		c_n=$(mapkv "$O/sass-clock.out" san_clock 0); c_ok=$(mapkv "$O/sass-clock.out" san_clock 1)
		c_bad=$(mapkv "$O/sass-clock.out" san_clock 2); c_last=$(mapkv "$O/sass-clock.out" san_clock 3)
		echo "# sanclock: launches ${c_n:-0}, latency in [0, 10 s] ${c_ok:-0}, outside ${c_bad:-0}, last ${c_last:-0} ns (zero entries are not printed)"
		check "bpf_ktime_get_ns under the Sanitizer engine is the host's CLOCK_MONOTONIC: launch-to-entry latency in [0, 10 s] (${c_last:-?} ns)" \
			"[ '${c_n:-0}' -ge 1 ] && [ '$c_ok' = '$c_n' ] && [ '${c_bad:-0}' = 0 ] && cmp -s $O/plain.app $O/sass-clock.app"
	else
		check "bpf_ktime_get_ns under the Sanitizer engine: $BIN/sanclock.bpf.o packed" false
	fi
	gbpfrun sass-auto auto exitcount "$A/vecadd_sass"
	check "engine auto on the SASS-only app: Sanitizer engine, 65536 exits" "[ '$(mapval "$O/sass-auto.out" 0)' = 65536 ]"
	gbpfrun ptx-san sanitizer exitcount "$A/vecadd_ptx"
	gbpfrun ptx-ptx ptx exitcount "$A/vecadd_ptx"
	check "same PTX kernel: engine sanitizer and engine ptx both count 65536" \
		"[ '$(mapval "$O/ptx-san.out" 0)' = 65536 ] && [ '$(mapval "$O/ptx-ptx.out" 0)' = 65536 ]"
	gbpfrun sass-ptx ptx exitcount "$A/vecadd_sass"
	check "engine ptx on the SASS-only app: not instrumented, app ok" "grep -q 'elements ok' $O/sass-ptx.out && grep -qi 'not instrumented' $O/sass-ptx.err"
fi

# Nsight Compute's counts of memory instructions (check_events.py mem-ncu):
# per thread only for all memory instructions together, per opcode class only
# per warp (on the H200's ncu the per-thread per-class names answer n/a; the
# SW-patched sass metrics are not listed by --query-metrics). Calibrated once
# on the SASS-only vecadd: 131072 global loads + 65536 stores per thread, 4096
# and 2048 per warp.
NCU_LIST=$(python3 tests/cuda_sanitizer/check_events.py ncu-metrics)
NCU_CAL_RC=""
ncu_calibrate() {
	[ -n "$NCU_CAL_RC" ] && return "$NCU_CAL_RC"
	NCU_CAL_RC=1
	command -v ncu > /dev/null || { echo "# no ncu"; return 1; }
	timeout 60 ncu --csv --log-file "$O/ncu-cal.csv" --print-units base --cache-control none --clock-control none \
		--metrics "$NCU_LIST" "$A/vecadd_sass" > /dev/null 2> "$O/ncu-cal.err"
	python3 tests/cuda_sanitizer/check_events.py ncu-sum "$O/ncu-cal.csv" > "$O/ncu-cal.sum"
	sed 's/^/ncu-cal|vecadd_sass (want 196608 per-thread memory instructions, 4096 + 2048 per warp)|/' "$O/ncu-cal.sum"
	grep -qx "smsp__sass_thread_inst_executed_op_memory_pred_on.sum 196608" "$O/ncu-cal.sum" &&
		grep -qx "smsp__sass_inst_executed_op_global_ld.sum 4096" "$O/ncu-cal.sum" &&
		grep -qx "smsp__sass_inst_executed_op_global_st.sum 2048" "$O/ncu-cal.sum" && NCU_CAL_RC=0
	return "$NCU_CAL_RC"
}

# san_app NAME CMD...: the examples under the Sanitizer engine, each checked, vs the plain run.
san_app() {
	local name=$1; shift
	local p
	for p in santhreads sanlaunch memkern; do
		if [ ! -f "$BIN/$p.bpf.o" ]; then
			echo "# skip $name: $BIN/$p.bpf.o not packed (tests/cuda_sanitizer/progs/$p.bpf.c)"
			return
		fi
	done
	timeout 120 "$@" 2> "$O/$name-plain.err" | grep -v '^$' > "$O/$name-plain.app"
	echo "# $name alone: rc ${PIPESTATUS[0]}, $(head -c 300 "$O/$name-plain.app" | tr '\n' '|')"
	if time_left "$name santhreads"; then
		gbpfrun "$name" sanitizer santhreads "$@"
		local rc=$? ex la th en
		ex=$(mapval "$O/$name.out" 0); la=$(mapval "$O/$name.out" 1); th=$(mapval "$O/$name.out" 2); en=$(mapval "$O/$name.out" 3)
		echo "# $name: launches ${la:-0}, threads launched ${th:-0}, entries ${en:-0}, exits ${ex:-0}; kernels instrumented $(grep -ci 'instrumented by the compute sanitizer' "$O/$name.err"), not $(grep -ci 'not instrumented' "$O/$name.err")"
		grep -i 'error\|not instrumented' "$O/$name.err" | sort | uniq -c | sort -rn | head -4 | cut -c1-240 | sed 's/^/#   /'
		check "$name santhreads: exit 0, output identical" "[ $rc = 0 ] && cmp -s $O/$name-plain.app $O/$name.app"
		check "$name santhreads: entries == exits == threads launched (${th:-0})" \
			"[ -n '$th' ] && [ '${th:-0}' -gt 0 ] && [ '$ex' = '$th' ] && [ '$en' = '$th' ]"
	fi
	if time_left "$name threadhist"; then
		gbpfrun "$name-th" sanitizer "threadhist sanlaunch" "$@"
		rc=$?
		python3 tests/cuda_sanitizer/check_events.py threadhist "$O/$name-th.out" > "$O/$name-th.check"
		local th_rc=$?
		sed 's/^/# /' "$O/$name-th.check" | cut -c1-600
		check "$name threadhist: every per-thread slot counts the launches that had that thread, output identical" \
			"[ $rc = 0 ] && [ $th_rc = 0 ] && cmp -s $O/$name-plain.app $O/$name-th.app"
	fi
	if time_left "$name kernelretsnoop"; then
		gbpfrun "$name-krs" sanitizer "kernelretsnoop sanlaunch" "$@"
		rc=$?
		python3 tests/cuda_sanitizer/check_events.py krs-launches "$O/$name-krs.out" > "$O/$name-krs.check"
		local krs_rc=$?
		sed 's/^/# /' "$O/$name-krs.check" | cut -c1-600
		check "$name kernelretsnoop: events + lost == threads launched, each (launch, block, thread) once and in range, output identical" \
			"[ $rc = 0 ] && [ $krs_rc = 0 ] && cmp -s $O/$name-plain.app $O/$name-krs.app"
	fi
	if time_left "$name mem_trace"; then
		gbpfrun "$name-mem" sanitizer mem_trace "$@"
		local mem_rc=$?
		time_left "$name memkern" && gbpfrun "$name-memkern" sanitizer memkern "$@"
		local t0 cal=1
		ncu_calibrate || cal=0
		t0=$(date +%s)
		if time_left "$name ncu" && command -v ncu > /dev/null; then
			timeout 150 ncu --csv --log-file "$O/$name.ncu.csv" --print-units base \
				--print-kernel-base mangled --cache-control none --clock-control none \
				--target-processes all --metrics "$NCU_LIST" "$@" > "$O/$name-ncu.app" 2> "$O/$name-ncu.err"
			echo "# $name under ncu: rc $?, $(( $(date +%s) - t0 )) s, $(grep -c '^"' "$O/$name.ncu.csv" 2> /dev/null) csv rows; $(grep -v '^$' "$O/$name-ncu.err" | head -2 | cut -c1-200 | tr '\n' '|')"
			python3 tests/cuda_sanitizer/check_events.py ncu-sum "$O/$name.ncu.csv" | sed "s/^/ncu|$name|/"
		fi
		local mode=exact
		[ $cal = 1 ] || { mode=bounds; echo "# ncu's per-thread count of vecadd is not the one expected: per-class warp-level bounds and totals only"; }
		python3 tests/cuda_sanitizer/check_events.py mem-ncu "$O/$name-mem.out" "$O/$name.ncu.csv" "$O/$name-memkern.out" $mode > "$O/$name-mem.check" 2>&1
		local ncu_rc=$?
		sed 's/^/# /' "$O/$name-mem.check" | cut -c1-700
		check "$name mem_trace ($mode): total == memkern's; per kernel <= ncu's per-thread memory instructions (== where ncu is calibrated and sees no class the callbacks skip), per class within ncu's warp-level bounds; output identical" \
			"[ $mem_rc = 0 ] && [ $ncu_rc = 0 ] && cmp -s $O/$name-plain.app $O/$name-mem.app"
	fi
}

if want cublas && time_left cublas; then
	echo "== cuBLAS SGEMM (sm_90 SASS, no PTX)"
	app sgemm_cublas -gencode arch=compute_90,code=sm_90 tests/cuda_sanitizer/apps/sgemm_cublas.cu -lcublas
	san_app cublas "$A/sgemm_cublas" 512 2
fi

if want torch && time_left torch; then
	echo "== PyTorch training (convolutions, pooling, linear, SGD)"
	if python3 -c 'import torch; assert torch.cuda.is_available()' > /dev/null 2>&1; then
		san_app torch python3 tests/cuda_sanitizer/apps/torch_train.py 2
	else
		echo "# skip torch: python3 cannot import torch with a CUDA device"
	fi
fi

if want subcost && time_left subcost; then
	echo "== the cost of the subscription, without gbpf (bench/cuda/sanitizer/subcost.c)"
	[ -x "$BIN/apps/subcost" ] && cp "$BIN/apps/subcost" "$A/subcost"
	if [ ! -x "$A/subcost" ]; then
		gcc -O2 -o "$A/subcost" bench/cuda/sanitizer/subcost.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda -ldl 2>&1 | tail -2
	fi
	for f in subcost_k.cubin subcost_patch.cubin; do
		[ -f "$BIN/apps/$f" ] && cp "$BIN/apps/$f" "$A/$f"
	done
	[ -f "$A/subcost_k.cubin" ] || nvcc -cubin -arch=sm_90 -o "$A/subcost_k.cubin" bench/cuda/sanitizer/subcost_k.cu
	[ -f "$A/subcost_patch.cubin" ] || nvcc -arch=sm_90 --compile-as-tools-patch --cubin -o "$A/subcost_patch.cubin" bench/cuda/sanitizer/subcost_patch.cu
	: > "$O/subcost.txt"
	for round in $(seq 1 "${SAN_SUBCOST_ROUNDS:-3}"); do
		for mode in none sub unload res launch all addpatch patchmod unsub; do
			timeout 60 "$A/subcost" $mode "$A/subcost_k.cubin" "$A/subcost_patch.cubin" >> "$O/subcost.txt" 2>&1 ||
				echo "subcost $mode: exit $?" >> "$O/subcost.txt"
		done
	done
	# Median of the rounds per mode and figure, then the ratio to "none".
	python3 - "$O/subcost.txt" <<'PY'
import re, sys, statistics
rows = {}
for ln in open(sys.argv[1]):
    m = re.match(r"subcost (\S+) (.*)", ln.strip())
    if not m or "=" not in m.group(2):
        if ln.strip():
            print("subcost|# " + ln.strip()[:300])
        continue
    for k, v in re.findall(r"(\w+)=([-0-9.]+)", m.group(2)):
        rows.setdefault(m.group(1), {}).setdefault(k, []).append(float(v))
keys = ["sync_us", "b2b_us", "launch_ns", "rtt_us", "tiny_gpu_us"]
base = {k: statistics.median(rows.get("none", {}).get(k, [0])) for k in keys}
print("subcost|%-12s|%s" % ("mode", "|".join("%-20s" % k for k in keys)))
for mode, d in rows.items():
    cells = []
    for k in keys:
        v = statistics.median(d[k]) if k in d else 0
        cells.append("%-20s" % ("%.2f (%.3fx)" % (v, v / base[k] if base[k] else 0)))
    extra = " ".join("%s=%s" % (k, int(statistics.median(v))) for k, v in d.items() if k not in keys)
    print("subcost|%-12s|%s|%s" % (mode, "|".join(cells), extra))
PY
fi

echo "# elapsed $(( $(date +%s) - T0 )) s"
echo "== results"
echo "$TABLE" | sed '/^$/d'
echo "cuda_sanitizer device: ok $PASS, not ok $FAIL"
if want bench && time_left bench; then
	bash "$ROOT/bench/cuda/sanitizer/run.sh" "$BIN"
fi
if [ -n "${OUT:-}" ]; then
	# Not the event streams (hundreds of MB): their checks are in the .check files.
	(cd "$O" && find . -type f -size -4M -print0 | tar czf "$OUT/san-logs.tgz" --null -T - 2>/dev/null)
	[ -d /tmp/gbpf-san-bench-out ] && tar czf "$OUT/san-bench-logs.tgz" -C /tmp/gbpf-san-bench-out . 2>/dev/null
fi
exit 0
