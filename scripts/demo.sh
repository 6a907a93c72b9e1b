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
"$gbpf" prog show "$examples/vec_add.bpf.o"
"$gbpf" prog run --threads 64 "$examples/vec_add.bpf.o"
echo
echo "== threadhist: per-thread execution counts, run directly on 32 threads"
"$gbpf" prog run --threads 32 "$examples/threadhist.bpf.o"
