# shellcheck shell=bash
# tests/cuda_agent/apps/tools_matrix.sh - sourced by tests/cuda_agent/device_run.sh
# (needs its ROOT BIN O A, check, PASS FAIL). Every example tool on every
# build and launch path of issue #5's done-when: a default nvcc build,
# -cudart=shared, -arch=sm_90, a compressed fatbin, an NVRTC module (PTX and
# cubin), cuLaunchKernelEx (clusters, dynamic shared memory), CUDA graphs
# (stream capture, explicit node, exec update), a cooperative launch, more
# than 48 KB of dynamic shared memory, several contexts and streams, a kernel
# with more memory sites than gbpf inlines a memory probe into (manysites).
# One `gbpf -j run` per (tool, app); the app's output must be what it
# prints alone, and tests/cuda_agent/apps/check_tools.py checks the tool's
# numbers exactly against the app's own "grid=.. block=.. launches=..
# mem=.." lines. One table line per (tool, app), then the failures.
# Apps already in $A (e.g. built elsewhere with the same nvcc) are reused.

echo "== tools matrix: build"
cd "$ROOT" || exit 1
matrix_build() { # NAME SOURCE NVCC-ARGS...
	local name=$1 src=$2
	shift 2
	[ -x "$A/$name" ] || nvcc "$@" -o "$A/$name" "examples/apps/$src.cu" 2>&1 | tail -2
}
matrix_build vecadd vecadd
matrix_build vecadd_shared vecadd -cudart=shared
matrix_build vecadd_sm90 vecadd -arch=sm_90
matrix_build vecadd_compress vecadd -Xfatbin=-compress-all
matrix_build nvrtc nvrtc -lnvrtc -lcuda
matrix_build launchex launchex -arch=sm_90
matrix_build graph graph -lcuda
matrix_build coop coop
matrix_build bigsmem bigsmem -lcuda
matrix_build multictx multictx -lcuda
matrix_build manysites manysites

MATRIX_APPS=${MATRIX_APPS:-"vecadd vecadd_shared vecadd_sm90 vecadd_compress nvrtc launchex graph coop bigsmem multictx manysites"}
MATRIX_TOOLS=${MATRIX_TOOLS:-"threadhist kernelretsnoop launchlate cuda_counter mem_trace mem_count bbcount"}
echo "== tools matrix: $(echo "$MATRIX_TOOLS" | wc -w) tools x $(echo "$MATRIX_APPS" | wc -w) apps"
matrix_ok=0 matrix_bad=0
: > "$O/matrix.table"
for app in $MATRIX_APPS; do
	if [ ! -x "$A/$app" ]; then
		echo "not ok - matrix $app: not built" >> "$O/matrix.table"
		matrix_bad=$((matrix_bad + 1))
		continue
	fi
	if ! timeout 60 "$A/$app" > "$O/m-$app.plain" 2> "$O/m-$app.plainerr"; then
		echo "not ok - matrix $app: fails alone: $(head -c 200 "$O/m-$app.plainerr" | tr '\n' ' ')" >> "$O/matrix.table"
		matrix_bad=$((matrix_bad + 1))
		continue
	fi
	for tool in $MATRIX_TOOLS; do
		f="$O/m-$tool-$app"
		start=$(date +%s%N)
		timeout 60 "$BIN/gbpf" -j run "$BIN/$tool.bpf.o" -- "$A/$app" > "$f.out" 2> "$f.err"
		rc=$?
		secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
		grep -v '^{' "$f.out" > "$f.appout"
		verdict=$(python3 "$ROOT/tests/cuda_agent/apps/check_tools.py" "$tool" "$O/m-$app.plain" "$f.out" "$f.err" 2>&1 | tail -1)
		if [ $rc = 0 ] && cmp -s "$O/m-$app.plain" "$f.appout" && [ "${verdict#ok }" != "$verdict" ]; then
			matrix_ok=$((matrix_ok + 1))
			echo "ok - $tool x $app (${secs} s): ${verdict#ok - }" >> "$O/matrix.table"
		else
			matrix_bad=$((matrix_bad + 1))
			why=""
			[ $rc = 0 ] || why="rc $rc; "
			cmp -s "$O/m-$app.plain" "$f.appout" || why="${why}app output differs; "
			echo "not ok - $tool x $app (${secs} s): $why${verdict}" >> "$O/matrix.table"
			echo "#   $tool x $app reports: $(grep '^gbpf run' "$f.err" | grep -v 'info: attached' | head -4 | cut -c1-200 | tr '\n' '|')" >> "$O/matrix.table"
		fi
		rm -f "$f.appout"
		# Event streams are large: keep only their first lines.
		[ "$tool" = kernelretsnoop ] && head -50 "$f.out" > "$f.head" && rm -f "$f.out"
	done
done
# mem_trace's counter summed per thread and flushed at its sites every 8 accesses
# (GBPF_PTX_COUNTER_SUM_FLUSH; 256 otherwise, which no app here reaches): the rest of the probe
# runs after each such flush, with the access's address (counts and stride total exact).
if [ -x "$A/manysites" ] && [ -f "$O/m-manysites.plain" ]; then
	f="$O/m-mem_trace-flush8-manysites"
	GBPF_PTX_COUNTER_SUM_FLUSH=8 timeout 60 "$BIN/gbpf" -j run "$BIN/mem_trace.bpf.o" -- "$A/manysites" > "$f.out" 2> "$f.err"
	rc=$?
	verdict=$(python3 "$ROOT/tests/cuda_agent/apps/check_tools.py" mem_trace "$O/m-manysites.plain" "$f.out" "$f.err" 2>&1 | tail -1)
	if [ $rc = 0 ] && [ "${verdict#ok }" != "$verdict" ]; then
		matrix_ok=$((matrix_ok + 1))
		echo "ok - mem_trace x manysites, sums flushed every 8 accesses: ${verdict#ok - }" >> "$O/matrix.table"
	else
		matrix_bad=$((matrix_bad + 1))
		echo "not ok - mem_trace x manysites, sums flushed every 8 accesses (rc $rc): $verdict" >> "$O/matrix.table"
	fi
fi
# directly_run_on_gpu: the vec_add program itself run as a 64-thread GPU kernel.
timeout 60 "$BIN/gbpf" -j prog run --backend cuda --threads 64 "$BIN/vec_add.bpf.o" > "$O/m-vec_add.out" 2> "$O/m-vec_add.err"
rc=$?
verdict=$(python3 "$ROOT/tests/cuda_agent/apps/check_tools.py" vec_add - "$O/m-vec_add.out" 2>&1 | tail -1)
if [ $rc = 0 ] && [ "${verdict#ok }" != "$verdict" ]; then
	matrix_ok=$((matrix_ok + 1))
	echo "ok - directly_run_on_gpu (prog run --threads 64): ${verdict#ok - }" >> "$O/matrix.table"
else
	matrix_bad=$((matrix_bad + 1))
	echo "not ok - directly_run_on_gpu (rc $rc): $verdict $(head -c 200 "$O/m-vec_add.err" | tr '\n' ' ')" >> "$O/matrix.table"
fi
# ctx->device on the GPU (gpu/block) against what host/launch sees, on several contexts and streams.
if [ -f "$BIN/blockdev.bpf.o" ] && [ -f "$O/m-multictx.plain" ]; then
	timeout 60 "$BIN/gbpf" -j run "$BIN/blockdev.bpf.o" -- "$A/multictx" > "$O/m-blockdev.out" 2> "$O/m-blockdev.err"
	rc=$?
	grep -v '^{' "$O/m-blockdev.out" > "$O/m-blockdev.appout"
	verdict=$(python3 "$ROOT/tests/cuda_agent/apps/check_tools.py" blockdev "$O/m-multictx.plain" "$O/m-blockdev.out" 2>&1 | tail -1)
	if [ $rc = 0 ] && cmp -s "$O/m-multictx.plain" "$O/m-blockdev.appout" && [ "${verdict#ok }" != "$verdict" ]; then
		matrix_ok=$((matrix_ok + 1))
		echo "ok - ctx->device x multictx: ${verdict#ok - }" >> "$O/matrix.table"
	else
		matrix_bad=$((matrix_bad + 1))
		echo "not ok - ctx->device x multictx (rc $rc): $verdict $(grep '^gbpf run' "$O/m-blockdev.err" | head -3 | tr '\n' '|')" >> "$O/matrix.table"
	fi
fi
# The same for gpu/exit (gbpf_gpu_ctx.device at offset 56): thread exits per device == threads launched.
if [ -f "$BIN/devctx_exit.bpf.o" ] && [ -f "$O/m-multictx.plain" ]; then
	timeout 60 "$BIN/gbpf" -j run "$BIN/devctx_exit.bpf.o" -- "$A/multictx" > "$O/m-devctx_exit.out" 2> "$O/m-devctx_exit.err"
	rc=$?
	grep -v '^{' "$O/m-devctx_exit.out" > "$O/m-devctx_exit.appout"
	verdict=$(python3 "$ROOT/tests/cuda_agent/apps/check_tools.py" devctx_exit "$O/m-multictx.plain" "$O/m-devctx_exit.out" 2>&1 | tail -1)
	if [ $rc = 0 ] && cmp -s "$O/m-multictx.plain" "$O/m-devctx_exit.appout" && [ "${verdict#ok }" != "$verdict" ]; then
		matrix_ok=$((matrix_ok + 1))
		echo "ok - gpu/exit ctx->device x multictx: ${verdict#ok - }" >> "$O/matrix.table"
	else
		matrix_bad=$((matrix_bad + 1))
		echo "not ok - gpu/exit ctx->device x multictx (rc $rc): $verdict $(grep '^gbpf run' "$O/m-devctx_exit.err" | head -3 | tr '\n' '|')" >> "$O/matrix.table"
	fi
else
	matrix_bad=$((matrix_bad + 1))
	echo "not ok - gpu/exit ctx->device x multictx: $BIN/devctx_exit.bpf.o or the multictx run missing" >> "$O/matrix.table"
fi
sed 's/^/# /' "$O/matrix.table"
check "tools matrix: $matrix_ok of $((matrix_ok + matrix_bad)) (tool, app) runs exact, app output identical" \
	"[ $matrix_bad = 0 ]"
