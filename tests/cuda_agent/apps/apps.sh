# shellcheck shell=bash
# tests/cuda_agent/apps/apps.sh - sourced by tests/cuda_agent/device_run.sh
# (needs its ROOT BIN O A, check, PASS FAIL). `gbpf run` on apps that use
# the less common ways to reach the GPU: NVRTC modules (PTX and cubin), CUDA
# graphs (stream capture, explicit kernel node, exec update), cudaLaunchKernelEx
# with clusters, several contexts and streams, >48 KB dynamic shared memory,
# `__device__` globals read by the host, a full constant bank, trace_printk, and PyTorch.
# Each app prints "grid=GxGxG block=BxBxB launches=L" per kernel configuration
# ("ptx=no" on kernels that carry no PTX); the expected exit count under
# exitcount.bpf.o is computed from those lines of the app's plain run.

# Threads launched in kernels that can be instrumented, from an app's output:
# with "ptx" as second argument only kernels that carry PTX (engine ptx),
# else every kernel (engine auto: the Compute Sanitizer engine patches the rest).
apps_expected_exits() {
	awk -v ptx_only="${2:-}" '/grid=[0-9]+x[0-9]+x[0-9]+ block=[0-9]+x[0-9]+x[0-9]+ launches=[0-9]+/ && !(ptx_only == "ptx" && /ptx=no/) {
		g = b = l = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^grid=/) g = substr($i, 6)
			else if ($i ~ /^block=/) b = substr($i, 7)
			else if ($i ~ /^launches=/) { l = substr($i, 10); sub(/[^0-9].*/, "", l) }
		}
		split(g, gv, "x"); split(b, bv, "x")
		n += gv[1] * gv[2] * gv[3] * bv[1] * bv[2] * bv[3] * l
	} END { printf "%d\n", n }' "$1"
}

# The exit count (exitcount key 0) in the last map print of a `gbpf -j run` output.
apps_exits() {
	grep -o '{"key":0,"value":[0-9]*}' "$1" | tail -1 | grep -o '[0-9]*}$' | tr -d '}'
}

echo "== apps: build"
cd "$ROOT" || exit 1
nvcc -o "$A/nvrtc" examples/apps/nvrtc.cu -lnvrtc -lcuda 2>&1 | tail -3
for app in graph multictx bigsmem devglobal bigconst; do
	nvcc -o "$A/$app" "examples/apps/$app.cu" -lcuda 2>&1 | tail -3
done
# Thread-block clusters need sm_90.
nvcc -arch=sm_90 -o "$A/launchex" examples/apps/launchex.cu 2>&1 | tail -3
# PTX for sm_90: a counter's sums go through shared memory only in a module for sm_80 or later
# (docs/ATTACH.md; the default build's compute_75 PTX gets there by its .target raised to sm_80)
nvcc -arch=sm_90 -o "$A/bigsmem_sm90" examples/apps/bigsmem.cu 2>&1 | tail -3
[ -x "$A/vecadd" ] || nvcc -o "$A/vecadd" examples/apps/vecadd.cu 2>&1 | tail -3

echo "== apps: gbpf run with exitcount"
# graph_warm: `graph --warm`, its kernels instrumented before the stream capture.
for app in nvrtc graph graph_warm launchex multictx bigsmem devglobal bigconst; do
	bin=$app args=
	[ "$app" = graph_warm ] && bin=graph args=--warm
	if [ ! -x "$A/$bin" ]; then
		check "$app: built" false
		continue
	fi
	# shellcheck disable=SC2086 # args: none or one word
	timeout 60 "$A/$bin" $args > "$O/$app.plain" 2> "$O/$app.plainerr"
	prc=$?
	check "$app: exits 0 alone ($(head -c 200 "$O/$app.plainerr" | tr '\n' ' '))" "[ $prc = 0 ]"
	# shellcheck disable=SC2086
	timeout 60 "$BIN/gbpf" -j run "$BIN/exitcount.bpf.o" -- "$A/$bin" $args > "$O/$app.out" 2> "$O/$app.err"
	rc=$?
	grep -v '^{' "$O/$app.out" > "$O/$app.appout"
	check "$app: exits 0 under gbpf run (rc $rc) and prints what it prints alone" \
		"[ $rc = 0 ] && cmp -s $O/$app.plain $O/$app.appout"
	want=$(apps_expected_exits "$O/$app.plain")
	got=$(apps_exits "$O/$app.out")
	check "$app: exit count ${got:-none} == $want threads launched" "[ '${got:-x}' = '$want' ] && [ $want -gt 0 ]"
	echo "# app stderr: $(grep -v '^gbpf run' "$O/$app.err" | head -c 300 | tr '\n' ' ')"
	echo "# reports: $(grep '^gbpf run' "$O/$app.err" | head -8 | cut -c1-240 | tr '\n' '|')"
done
# bigsmem --max asks for all the shared memory a block may have; mem_count's counter sums add 32
# bytes of their own (docs/ATTACH.md, "Counters summed per thread"), so the PTX engine's copy cannot
# have it: the original must run (the Compute Sanitizer engine may instrument it then), the app's
# results stay right, and the user is told.
if [ -x "$A/bigsmem_sm90" ] && [ -f "$BIN/mem_count.bpf.o" ]; then
	timeout 60 "$A/bigsmem_sm90" --max > "$O/bigsmem_max.plain" 2> "$O/bigsmem_max.plainerr"
	prc=$?
	timeout 60 "$BIN/gbpf" -j run "$BIN/mem_count.bpf.o" -- "$A/bigsmem_sm90" --max > "$O/bigsmem_max.out" 2> "$O/bigsmem_max.err"
	rc=$?
	grep -v '^{' "$O/bigsmem_max.out" > "$O/bigsmem_max.appout"
	check "bigsmem --max under mem_count: exits 0 (rc $rc, alone $prc), prints what it prints alone ($(head -c 120 "$O/bigsmem_max.plain"))" \
		"[ $rc = 0 ] && [ $prc = 0 ] && grep -q ': ok' $O/bigsmem_max.plain && cmp -s $O/bigsmem_max.plain $O/bigsmem_max.appout"
	# the copy cannot be given that much (the app's attribute, replayed on it, fails) or cannot launch
	check "bigsmem --max: the instrumented copy refused and reported, the original ran" \
		"grep -Eq 'stage_k.*(attribute replay failed.*cuFuncSetAttribute\(8,|instrumented kernel failed to launch.*the original ran)' $O/bigsmem_max.err"
	echo "# bigsmem --max reports: $(grep '^gbpf run' "$O/bigsmem_max.err" | head -4 | cut -c1-240 | tr '\n' '|')"
fi
# bigconst's __constant__ table leaves 8 bytes of the 64 KB bank: ptxas refuses the module with the
# constant-bank map table, the agent injects the kernel again with the global table only (its exit
# count is checked above) and says so.
check "bigconst: refused with the constant-bank map table, instrumented with the global table, told" \
	"grep 'sum_k' $O/bigconst.err | grep -q 'injected again with the global table only' && grep 'sum_k' $O/bigconst.err | grep -q ': instrumented'"
# The cubin from NVRTC holds no PTX: the Compute Sanitizer engine (engine auto) patches it.
check "nvrtc: the cubin's kernel patched by the Sanitizer engine, app ok" \
	"grep 'rtc_axpy' $O/nvrtc.err | grep -q 'instrumented by the Compute Sanitizer' && grep -q 'rtc_axpy from cubin.*ok' $O/nvrtc.appout"

echo "== apps: trace_printk"
if [ -f "$BIN/printk_blocks.bpf.o" ]; then
	timeout 60 "$BIN/gbpf" run "$BIN/printk_blocks.bpf.o" -- "$A/vecadd" > "$O/printk.out" 2> "$O/printk.err"
	rc=$?
	grep -x 'vec_add block [0-9]*' "$O/printk.out" | sort | uniq -c | awk '{ print $1, $4 }' > "$O/printk.counts"
	# vecadd: 256 blocks; block b prints "vec_add block b" once.
	check "printk: vecadd exits 0 (rc $rc) and its output is intact" \
		"[ $rc = 0 ] && grep -q 'elements ok' $O/printk.out"
	check "printk: each of the 256 lines 'vec_add block 0..255' exactly once ($(wc -l < "$O/printk.counts") distinct, $(grep -c '^vec_add block' "$O/printk.out") in all)" \
		"[ \"\$(awk '\$1 == 1 && \$2 >= 0 && \$2 < 256' $O/printk.counts | wc -l)\" = 256 ] && [ \$(grep -c '^vec_add block' $O/printk.out) = 256 ]"
	echo "# printk stderr: $(head -c 400 "$O/printk.err" | tr '\n' ' ')"
else
	echo "# skip printk: $BIN/printk_blocks.bpf.o not packed (tests/cuda_agent/progs/printk_blocks.bpf.c)"
fi

echo "== apps: PyTorch"
T="$ROOT/tests/cuda_agent/apps/torch_step.py"
if python3 -c 'import torch; assert torch.cuda.is_available()' > /dev/null 2>&1; then
	PYTHONUNBUFFERED=1 timeout 120 python3 "$T" > "$O/torch.plain" 2> "$O/torch.plainerr"
	prc=$?
	check "torch: exits 0 alone ($(tail -c 300 "$O/torch.plainerr" | tr '\n' ' '))" "[ $prc = 0 ]"
	# PTX injection only (tests/cuda_sanitizer/device.sh checks torch under the patching engine).
	PYTHONUNBUFFERED=1 GBPF_CUDA_ENGINE=ptx timeout 120 "$BIN/gbpf" -j run "$BIN/exitcount.bpf.o" -- python3 "$T" \
		> "$O/torch.out" 2> "$O/torch.err"
	rc=$?
	grep -v '^{' "$O/torch.out" > "$O/torch.appout"
	check "torch: exits 0 under gbpf run (rc $rc) and prints what it prints alone" \
		"[ $rc = 0 ] && cmp -s $O/torch.plain $O/torch.appout"
	# torch's kernels carry no PTX: only the NVRTC kernel counts exits.
	want=$(apps_expected_exits "$O/torch.plain" ptx)
	got=$(apps_exits "$O/torch.out")
	check "torch: exit count ${got:-none} == $want threads of torch_axpb" "[ '${got:-x}' = '$want' ] && [ $want -gt 0 ]"
	echo "# app stderr: $(grep -v '^gbpf run' "$O/torch.err" | tail -c 300 | tr '\n' ' ')"
	if [ -f "$BIN/kernelids.bpf.o" ]; then
		PYTHONUNBUFFERED=1 timeout 120 "$BIN/gbpf" -j run "$BIN/kernelids.bpf.o" -- python3 "$T" \
			> "$O/torchids.out" 2> "$O/torchids.err"
		rc=$?
		grep -v '^{' "$O/torchids.out" > "$O/torchids.appout"
		check "torch (kernelids): exits 0 (rc $rc), output as alone" \
			"[ $rc = 0 ] && cmp -s $O/torch.plain $O/torchids.appout"
		python3 "$ROOT/tests/cuda_agent/apps/check_reports.py" "$O/torchids.out" "$O/torchids.err" torch_axpb \
			> "$O/torch_reports.tap" 2>&1
		grep -v '^1\.\.' "$O/torch_reports.tap" | sed 's/^ok /# reports ok /; s/^not ok /# reports NOT ok /'
		check "torch: every launched kernel reported (instrumented, or not with a reason); torch_axpb instrumented" \
			"grep -q '^1\.\.' $O/torch_reports.tap && ! grep -q '^not ok' $O/torch_reports.tap"
	else
		echo "# skip torch kernel reports: $BIN/kernelids.bpf.o not packed (tests/cuda_agent/progs/kernelids.bpf.c)"
	fi
else
	echo "# skip torch: python3 cannot import torch with a CUDA device"
fi
