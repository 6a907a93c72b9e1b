#!/bin/sh
# tests/device/pack.sh - build gbpf (gcc, release) on THIS machine and put what
# `gbpf run` needs on a CUDA machine into one folder (default .devdata/bin,
# ignored by git): gbpf, libgbpf.so.0, the agent, the cuda plugin, the probe
# objects, and in lib/ the shared libraries the device machine may lack
# (libbpf, libelf). tests/device/run.sh uses it when GBPF_DEVICE_BIN names it.
# Usage: pack.sh [BUILD_DIR [OUT_DIR]]
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$ROOT/build-device-pack}
OUT=${2:-$ROOT/.devdata/bin}
cd "$ROOT"
if [ ! -f "$B/build.ninja" ]; then
	CC=gcc meson setup "$B" --buildtype=release -Dfuzz=false >/dev/null
fi
ninja -C "$B" tools/gbpf core/agent/libgbpf-agent.so plugins/cuda/libgbpf-cuda.so >/dev/null
# Probe objects are custom targets: ask ninja for every *.bpf.o of these folders.
ninja -C "$B" $(ninja -C "$B" -t targets all | sed -n 's#^\(\(examples\|tests/cuda_agent\|tests/cuda_sanitizer\|bench/cuda\)/[a-z_]*\.bpf\.o\):.*#\1#p') >/dev/null
rm -rf "$OUT"
mkdir -p "$OUT/lib"
cp "$B/tools/gbpf" "$B/core/libgbpf.so.0" "$B/core/agent/libgbpf-agent.so" \
	"$B/plugins/cuda/libgbpf-cuda.so" "$OUT/"
cp "$B"/examples/*.bpf.o "$B"/tests/cuda_agent/*.bpf.o "$B"/tests/cuda_sanitizer/*.bpf.o "$B"/bench/cuda/*.bpf.o \
	"$OUT/" 2>/dev/null || true
# The print/ring output bench (bench/agent/device.sh): its programs, the
# host-test backend and app it drives, the cpu plugin for the %s comparison;
# the PyTorch attach windows' probes (coexist_device.py).
EXTRA="bench/agent/bench_agent_print bench/agent/bench_agent_ring tests/agent/launch_app
tests/agent/libgbpf-testlaunch.so tests/agent/libgbpf-hosttest.so tests/agent/count.bpf.o
tests/agent/torchwin_exit.bpf.o tests/agent/torchwin_entry.bpf.o
tests/output/printk_str.bpf.o plugins/cpu/libgbpf-cpu.so"
for t in $EXTRA; do
	if ninja -C "$B" "$t" >/dev/null 2>&1; then cp "$B/$t" "$OUT/"; else echo "pack: $t not built (skipped)"; fi
done
for lib in libbpf.so.1 libelf.so.1; do
	p=$(ldd "$B/core/libgbpf.so.0" | awk -v l="$lib" '$1 == l { print $3 }')
	[ -n "$p" ] && cp -L "$p" "$OUT/lib/$lib"
done
du -sh "$OUT" | cut -f1 | sed 's/^/packed: /'
