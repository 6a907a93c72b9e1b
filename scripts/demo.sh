#!/bin/sh
# The main job as a demo: build gbpf, list the backends this machine has, and
# run the example probes on the best one: a GPU when there is one; on a
# machine without a GPU but with an OpenCL ICD (PoCL), the opencl backend,
# with `gbpf run` of example probes inside the example OpenCL apps; otherwise
# the reference interpreter on the CPU.
set -eu
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
build=${GBPF_DEMO_BUILD:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" --buildtype=release -Dfuzz=false >/dev/null
ninja -C "$build" >/dev/null
gbpf="$build/tools/gbpf"
examples="$build/examples"
oclapps="$build/examples/apps/opencl"

echo "== gbpf backends"
"$gbpf" backends
selected=$("$gbpf" backends | sed -n 's/^selected: \([a-z0-9]*\).*/\1/p')
echo
echo "== vector add, one eBPF program per GPU thread (directly_run_on_gpu)"
"$gbpf" prog show "$examples/vec_add.bpf.o"
"$gbpf" prog run --threads 64 "$examples/vec_add.bpf.o"
echo
echo "== threadhist: per-thread execution counts, run directly on 32 threads"
"$gbpf" prog run --threads 32 "$examples/threadhist.bpf.o"

if [ "$selected" = opencl ] && [ -x "$oclapps/ocl_vecadd" ]; then
	echo
	echo "== OpenCL app without gbpf"
	"$oclapps/ocl_vecadd"
	echo
	echo "== gbpf run threadhist: exits of the work-items of vecadd (4096 launched)"
	"$gbpf" run --backend opencl "$examples/threadhist.bpf.o" -- "$oclapps/ocl_vecadd"
	echo
	echo "== gbpf run mem_trace: global loads and stores of vecadd (2 x 4096 loads, 4096 stores)"
	"$gbpf" run --backend opencl "$examples/mem_trace.bpf.o" -- "$oclapps/ocl_vecadd"
	echo
	echo "== gbpf run launchlate: launch-to-start latency of 7 launches of 3 kernels"
	"$gbpf" run --backend opencl "$examples/launchlate.bpf.o" -- "$oclapps/ocl_multikernel"
	echo
	echo "== gbpf run cuda-counter: launches and work-groups per kernel (stats: calls, blocks, block_ns)"
	"$gbpf" run --backend opencl "$examples/cuda_counter.bpf.o" -- "$oclapps/ocl_vecadd"
fi
