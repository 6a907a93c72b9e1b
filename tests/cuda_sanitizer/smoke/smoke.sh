#!/usr/bin/env bash
# tests/cuda_sanitizer/smoke/smoke.sh - build san_smoke on the GPU machine and
# try each patch-module form (see san_smoke.c).
set -u
D=$(cd "$(dirname "$0")" && pwd)
T=/tmp/san-smoke
mkdir -p "$T"
export PATH=$PATH:/usr/local/cuda/bin
SI=/usr/local/cuda/compute-sanitizer
gcc -O1 -o "$T/san_smoke" "$D/san_smoke.c" -I/usr/local/cuda/include -I$SI/include -L$SI -Wl,-rpath,$SI \
	-lsanitizer-public -L/usr/local/cuda/lib64/stubs -lcuda || exit 1
gcc -O1 -DSMOKE_LATE_CUDA -o "$T/san_smoke_late" "$D/san_smoke.c" -I/usr/local/cuda/include -I$SI/include -L$SI \
	-Wl,-rpath,$SI -lsanitizer-public -ldl || exit 1
nvcc -cubin -arch=sm_90 -o "$T/app.cubin" "$D/app.cu" || exit 1
cat > "$T/p.cu" <<'CU'
#include <stdint.h>
extern "C" __device__ __noinline__ int __gbpf_san_exit(void *ud, uint64_t pc)
{ atomicAdd((unsigned long long *)ud + 3, 1ull); return 0; }
CU
nvcc -arch=sm_90 --compile-as-tools-patch --cubin -o "$T/nvcc.cubin" "$T/p.cu" && \
nvcc -arch=sm_90 --compile-as-tools-patch --fatbin -o "$T/nvcc.fatbin" "$T/p.cu"
sed 's/ = {0x67627066f0000d00}//; s/ = 0x67627066f1000eff//' "$D/glob.ptx" > "$T/noinit.ptx"
# SMOKE_BUILD_ONLY=1: build only (tests/cuda_sanitizer/device.sh runs its own variants).
[ "${SMOKE_BUILD_ONLY:-0}" = 1 ] && exit 0
for f in "$D/nop.ptx" "$T/nvcc.cubin" "$T/nvcc.fatbin" "$T/noinit.ptx" "$D/ec.ptx" "$D/ec_vis.ptx" "$D/glob_helpers.ptx" "$D/glob_stack.ptx"; do
	timeout 60 "$T/san_smoke" "$f" "$T/app.cubin" load 2>&1 | tail -2
done
timeout 60 "$T/san_smoke" "$T/nvcc.cubin" "$T/app.cubin" cnt 2>&1 | tail -3
timeout 60 "$T/san_smoke" "$D/cnt.ptx" "$T/app.cubin" cnt 2>&1 | tail -3
timeout 60 "$T/san_smoke" "$D/glob.ptx" "$T/app.cubin" glob 2>&1 | tail -3
timeout 60 "$T/san_smoke" "$D/imm.ptx" "$T/app.cubin" imm 2>&1 | tail -3
echo "== libcuda loaded after the subscription"
timeout 60 "$T/san_smoke_late" "$D/glob.ptx" "$T/app.cubin" glob 2>&1 | tail -2
echo "== under the gbpf cuda plugin's interception (LD_PRELOAD, no agent)"
[ -n "${GBPF_SMOKE_PRELOAD:-}" ] && LD_PRELOAD=$GBPF_SMOKE_PRELOAD timeout 60 "$T/san_smoke" "$D/glob.ptx" "$T/app.cubin" glob 2>&1 | tail -2
[ -n "${GBPF_SMOKE_PRELOAD:-}" ] && LD_PRELOAD=$GBPF_SMOKE_PRELOAD timeout 60 "$T/san_smoke_late" "$D/glob.ptx" "$T/app.cubin" glob 2>&1 | tail -2
