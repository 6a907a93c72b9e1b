#!/usr/bin/env bash
# tests/cuda_sanitizer/build_apps.sh OUT - build the CUDA programs of
# device.sh and bench/cuda/sanitizer/run.sh into OUT (normally BIN/apps of a
# tests/device/pack.sh folder), on any machine with nvcc and gcc (no GPU
# needed): the GPU machine then spends no time compiling. device.sh and
# run.sh compile whatever OUT lacks themselves.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$1
mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin
cd "$ROOT"
nvcc -gencode arch=compute_90,code=sm_90 -o "$OUT/vecadd_sass" examples/apps/vecadd.cu
nvcc -arch=sm_90 -o "$OUT/vecadd_ptx" examples/apps/vecadd.cu
nvcc -gencode arch=compute_90,code=sm_90 -o "$OUT/sgemm_cublas" tests/cuda_sanitizer/apps/sgemm_cublas.cu -lcublas
nvcc -O3 -arch=sm_90 -o "$OUT/vecadd_bench" bench/cuda/apps/vecadd_bench.cu
nvcc -O3 -gencode arch=compute_90,code=sm_90 -o "$OUT/vecadd_bench_sass" bench/cuda/apps/vecadd_bench.cu
gcc -O2 -o "$OUT/subcost" bench/cuda/sanitizer/subcost.c -I/usr/local/cuda/include \
	-L/usr/local/cuda/lib64/stubs -lcuda -ldl
nvcc -cubin -arch=sm_90 -o "$OUT/subcost_k.cubin" bench/cuda/sanitizer/subcost_k.cu
nvcc -arch=sm_90 --compile-as-tools-patch --cubin -o "$OUT/subcost_patch.cubin" bench/cuda/sanitizer/subcost_patch.cu
du -sh "$OUT" | cut -f1 | sed 's/^/apps: /'
