#!/bin/sh
# The main job as a demo: build gbpf, list the backends this machine has, and
# run the example probes on the best one (a GPU when there is one, otherwise
# the reference interpreter on the CPU).
set -eu
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
build=${GBPF_DEMO_BUILD:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" --buildtype=release -Dfuzz=false >/dev/null
ninja -C "$build" >/dev/null
gbpf="$build/tools/gbpf"
examples="$build/examples"

echo "== gbpf backends"
"$gbpf" backends
echo
echo "== vector add, one eBPF program per GPU thread (directly_run_on_gpu)"
"$gbpf" prog show "$examples/directly_run_on_gpu/vec_add.bpf.o"
"$gbpf" prog run --threads 64 "$examples/directly_run_on_gpu/vec_add.bpf.o"
echo
echo "== threadhist: per-thread execution counts (run directly, 4 rounds of 256 threads)"
"$gbpf" prog run --threads 256 "$examples/threadhist/threadhist.bpf.o"
