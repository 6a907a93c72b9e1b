#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/capture_outputs.sh - run every example tool as its README says, on
# a CUDA machine, and keep what it printed: the outputs pasted into
# examples/*/README.md come from here.
# Usage: capture_outputs.sh BIN OUT
#   BIN: what tests/device/pack.sh packs (gbpf, libgbpf.so.0, the agent, the
#        cuda plugin, the probe objects *.bpf.o, lib/ with libbpf and libelf);
#        BIN/COMMIT, when present, names the commit it was built from.
#   OUT: one OUT/<tool>.txt per example. Each starts with the date, GPU,
#        driver and commit, then per command: "$ COMMAND" (run in a folder
#        holding the apps and the probe objects, so it reads as a user types
#        it), its stdout and stderr as they came, and "[exit S, T s]".
#        Long runs of similar lines (ring buffer records, per-thread slots)
#        are cut to their first and last lines with the count cut between;
#        "[records printed: N]" counts every record of an event stream.
# Needs nvcc (CUDA 12+ at /usr/local/cuda/bin or in PATH) and one NVIDIA GPU.
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 BIN OUT" >&2
	exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" || exit 2
OUT=$(cd "$2" && pwd)
W=$(mktemp -d /tmp/gbpf-capture.XXXXXX) || exit 1
trap 'rm -rf "$W"' EXIT
export PATH=$BIN:$PATH:/usr/local/cuda/bin
export LD_LIBRARY_PATH=$BIN:$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GBPF_AGENT_LIB=$BIN/libgbpf-agent.so GBPF_PLUGIN_PATH=$BIN/libgbpf-cuda.so
export CUDA_CACHE_PATH=$W/jitcache
# A run of more than RUN_MAX lines of one shape (the same line but for its
# numbers: ring buffer records, per-thread slots) keeps its first RUN_HEAD
# and last RUN_TAIL lines and says how many it cut; all else is kept.
RUN_MAX=${CAPTURE_RUN_MAX:-16}
RUN_HEAD=${CAPTURE_RUN_HEAD:-8}
RUN_TAIL=${CAPTURE_RUN_TAIL:-2}
LIMIT_S=${CAPTURE_LIMIT_S:-40}

# The apps, nvcc's default build as in the READMEs.
cd "$W" || exit 1
for app in vecadd branches reduce loop; do
	nvcc -o "$app" "$ROOT/examples/apps/$app.cu" > "$W/nvcc-$app.log" 2>&1 ||
		{ echo "capture: nvcc $app failed:"; tail -5 "$W/nvcc-$app.log"; } >&2
done
ln -sf "$BIN"/*.bpf.o .

if [ -f "$BIN/COMMIT" ]; then
	commit=$(cat "$BIN/COMMIT")
else
	commit=$(git -C "$ROOT" describe --always --dirty 2> /dev/null || echo unknown)
fi
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2> /dev/null | head -1)
header() {
	echo "# date:   $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "# gpu:    ${gpu%%,*} (driver${gpu#*,})"
	echo "# cuda:   $(nvcc --version | sed -n 's/^Cuda compilation tools, //p')"
	echo "# commit: $commit"
}

collapse() {
	awk -v max="$RUN_MAX" -v h="$RUN_HEAD" -v t="$RUN_TAIL" '
	function shape(l) { gsub(/[0-9a-fA-F]+/, "#", l); return l }
	function flush(   i) {
		if (n > max) {
			for (i = 1; i <= h; i++) print run[i]
			printf "[... %d more lines like these cut ...]\n", n - h - t
			for (i = n - t + 1; i <= n; i++) print run[i]
		} else {
			for (i = 1; i <= n; i++) print run[i]
		}
		n = 0
	}
	{
		s = shape($0)
		if (n && s != cur) flush()
		cur = s
		run[++n] = $0
	}
	END { flush() }'
}

# cap TOOL "COMMAND" [STDIN-SCRIPT]: run COMMAND (shell words) in $W and
# append its output, collapsed, to OUT/TOOL.txt. STDIN-SCRIPT, when given, is
# a shell command whose output feeds COMMAND's stdin (the loop app launches
# when told to).
cap() {
	local tool=$1 cmd=$2 feed=${3:-} f=$OUT/$1.txt raw=$W/raw rc start secs
	[ -f "$f" ] || header > "$f"
	{
		echo
		if [ -n "$feed" ]; then echo "\$ ($feed) | $cmd"; else echo "\$ $cmd"; fi
	} >> "$f"
	start=$(date +%s%N)
	if [ -n "$feed" ]; then
		bash -c "$feed" | timeout "$LIMIT_S" bash -c "$cmd" > "$raw" 2>&1
	else
		timeout "$LIMIT_S" bash -c "$cmd" < /dev/null > "$raw" 2>&1
	fi
	rc=$?
	secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	collapse < "$raw" >> "$f"
	if [ "$rc" = 124 ]; then
		echo "[exit $rc: timed out after $LIMIT_S s]"
	else
		echo "[exit $rc, $secs s]"
	fi >> "$f"
	# Line counts of an event stream: how many records of each map came out.
	[ "$tool" = kernelretsnoop ] && echo "[records printed: $(grep -c '^events: ' "$raw")]" >> "$f"
}

# launch N commands to the loop app, one per second, then quit.
# shellcheck disable=SC2016 # expanded by the bash that feeds the app
LOOP_FEED='sleep 1; for n in 10 100 1000; do echo launch $n; sleep 1.2; done; echo quit'

cap threadhist "gbpf run threadhist.bpf.o -- ./vecadd"
cap kernelretsnoop "gbpf run kernelretsnoop.bpf.o -- ./vecadd"
cap kernelretsnoop "gbpf run kernelretsnoop_reserve.bpf.o -- ./vecadd"
cap launchlate "gbpf run launchlate.bpf.o -- ./vecadd"
cap launchlate "gbpf run -i 1 launchlate.bpf.o -- ./loop" "$LOOP_FEED"
cap cuda-counter "gbpf run cuda_counter.bpf.o -- ./vecadd"
cap cuda-counter "gbpf run -i 1 -c 3 cuda_counter.bpf.o -- ./loop" "$LOOP_FEED"
cap mem_trace "gbpf run mem_trace.bpf.o -- ./vecadd"
cap mem_trace "gbpf run mem_trace.bpf.o -- ./reduce"
cap bbcount "gbpf run bbcount.bpf.o -- ./vecadd"
cap bbcount "gbpf run bbcount.bpf.o -- ./branches"
cap directly_run_on_gpu "gbpf prog run --backend cuda --threads 64 vec_add.bpf.o"
ls "$OUT"
