#!/usr/bin/env bash
# bench/agent/launch_cost.sh [BUILD_DIR [REPEATS]] - what gbpf's own code adds to
# each kernel launch, without a GPU: tests/cuda_agent's application launches a
# kernel through tests/cuda_agent/fakecuda (a driver that only records calls),
# once alone and once under `gbpf run` with a probe for a kernel it does not
# have (bench/cuda/probes/noprobe.bpf.o: the agent loaded, every launch looked
# up, nothing instrumented), and once with an empty entry and exit probe
# (empty.bpf.o: every launch replaced by the instrumented kernel), each at N1
# and N2 launches. The cost per launch is the slope between the two (so the
# processes' start, gbpf's attach and the first launch's injection drop out);
# the six runs are repeated REPEATS times (default 5), interleaved, and the
# median of each is printed.
# Why: on the H200 the same row (bench/cuda/run.sh, "agent, no probe") moves
# by +-0.3 us between calls with the host's noise; this one measures our own
# path alone, to a few nanoseconds on one machine.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-$ROOT/build-rel}" && pwd)
REPEATS=${2:-5}
N1=100000
N2=2100000
FAKE=$B/tests/cuda_agent/fakecuda
APP=$B/tests/cuda_agent/cuda_agent_ptx_app
ninja -C "$B" tests/cuda_agent/fakecuda/libcuda.so.1 tests/cuda_agent/cuda_agent_ptx_app bench/cuda/noprobe.bpf.o \
	bench/cuda/empty.bpf.o \
	tools/gbpf plugins/cuda/libgbpf-cuda.so core/agent/libgbpf-agent.so > /dev/null || exit 1
# microseconds one command takes
took() {
	local start
	start=$(date +%s%N)
	"$@" > /dev/null 2>&1 || { echo "launch_cost: '$*' failed" >&2; exit 1; }
	echo $((($(date +%s%N) - start) / 1000))
}
plain() { took env LD_LIBRARY_PATH="$FAKE" "$APP" "$1"; }
# under `gbpf run` with probe object $1, $2 launches
agent() {
	took env LD_LIBRARY_PATH="$FAKE" GBPF_PLUGIN_PATH="$B/plugins/cuda/libgbpf-cuda.so" \
		"$B/tools/gbpf" run --backend cuda "$B/bench/cuda/$1.bpf.o" -- "$APP" "$2"
}
median() { sort -g | awk '{ v[NR] = $1 } END { printf "%.1f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: > /tmp/gbpf-launch-cost.runs
for _ in $(seq "$REPEATS"); do
	p1=$(plain $N1); a1=$(agent noprobe $N1); e1=$(agent empty $N1)
	p2=$(plain $N2); a2=$(agent noprobe $N2); e2=$(agent empty $N2)
	# ns per launch: us difference * 1000 / launches; then what the agent adds to plain
	awk -v p1="$p1" -v p2="$p2" -v a1="$a1" -v a2="$a2" -v e1="$e1" -v e2="$e2" -v n="$((N2 - N1))" \
		'BEGIN { p = (p2 - p1) * 1000 / n; a = (a2 - a1) * 1000 / n; e = (e2 - e1) * 1000 / n
			 printf "%.1f %.1f %.1f\n", p, a - p, e - p }' >> /tmp/gbpf-launch-cost.runs
done
col() { cut -d' ' -f"$1" /tmp/gbpf-launch-cost.runs | median; }
echo "launch cost (fake driver, $(nproc) cpus, median of $REPEATS, slope $N1..$N2 launches): plain $(col 1) ns;" \
	"added by the agent: nothing instrumented $(col 2) ns, an empty probe instrumented $(col 3) ns per launch"
