#!/usr/bin/env bash
# bench/cuda/ab.sh BIN_A BIN_B [BIN_C ...] [ROWS] - the same rows of
# bench/cuda/run.sh for several builds in one call on one card: A first, then
# each other build followed by A again (A, B, A or A, B, A, C, A ...), so that
# each change is judged against its baseline measured beside it, not against a
# number from another call or another card. BIN_*: what tests/device/pack.sh
# packs (e.g. pack.sh with the base commit checked out into .devdata/bin_a).
# ROWS (the last argument when it is not a folder): GBPF_BENCH_ROWS (default
# "mem"). Writes each run's output under $OUT (default /tmp/gbpf-ab) and prints
# the rows of the runs side by side.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROWS=mem
BINS=()
for arg in "$@"; do
	if [ -d "$arg" ]; then BINS+=("$arg"); else ROWS=$arg; fi
done
[ "${#BINS[@]}" -ge 2 ] || { echo "usage: ab.sh BIN_A BIN_B [BIN_C ...] [ROWS]"; exit 2; }
O=${OUT:-/tmp/gbpf-ab}
mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/# card: /'
# the order of the runs: A, then each other build and A again
RUN=("${BINS[0]}")
for bin in "${BINS[@]:1}"; do RUN+=("$bin" "${BINS[0]}"); done
i=0
for bin in "${RUN[@]}"; do
	i=$((i + 1))
	mkdir -p "$O/run$i"
	OUT=$O/run$i GBPF_BENCH_ROWS=$ROWS bash "$ROOT/bench/cuda/run.sh" "$bin" > "$O/run$i.txt" 2>&1
	grep '^bench|' "$O/run$i.txt" | cut -d'|' -f2,3,4 > "$O/run$i.rows"
done
# one line per row: the row's name, then "measured (ratio)" of each run in order
files=()
for j in $(seq 1 "$i"); do files+=("$O/run$j.rows"); done
names=$(for bin in "${RUN[@]}"; do basename "$bin"; done | paste -sd'|')
paste -d'|' "${files[@]}" |
	awk -F'|' -v names="$names" '
		NR == 1 { n = split(names, h, "|"); printf "%-44s", "row"; for (k = 1; k <= n; k++) printf " | %-30s", h[k]; printf "\n"; next }
		{ printf "%-44s", $1; for (k = 0; 3 * k + 3 <= NF; k++) printf " | %-30s", $(3 * k + 2) " (" $(3 * k + 3) ")"; printf "\n" }'
