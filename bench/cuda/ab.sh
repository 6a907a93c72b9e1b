#!/usr/bin/env bash
# bench/cuda/ab.sh BIN_A BIN_B [ROWS] - the same rows of bench/cuda/run.sh for two
# builds in one call on one card (A first, then B, then A again), so that a
# change is judged against its baseline measured beside it, not against a number
# from another call or another card. BIN_A / BIN_B: what tests/device/pack.sh
# packs (e.g. pack.sh with the base commit checked out into .devdata/bin_a).
# ROWS: GBPF_BENCH_ROWS (default "mem"). Writes each run's output under $OUT
# (default /tmp/gbpf-ab) and prints the rows of the three runs side by side.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
A=$1
B=$2
ROWS=${3:-mem}
O=${OUT:-/tmp/gbpf-ab}
mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/# card: /'
i=0
for bin in "$A" "$B" "$A"; do
	i=$((i + 1))
	mkdir -p "$O/run$i"
	OUT=$O/run$i GBPF_BENCH_ROWS=$ROWS bash "$ROOT/bench/cuda/run.sh" "$bin" > "$O/run$i.txt" 2>&1
	grep '^bench|' "$O/run$i.txt" | cut -d'|' -f2,3,4 > "$O/run$i.rows"
done
# one line per row: the row's name, then "measured (ratio)" of A, B and A again
paste -d'|' "$O/run1.rows" "$O/run2.rows" "$O/run3.rows" |
	awk -F'|' -v a="$(basename "$A")" -v b="$(basename "$B")" '
		NR == 1 { printf "%-44s | %-30s | %-30s | %s\n", "row", a, b, a " again"; next }
		{ printf "%-44s | %-30s | %-30s | %s\n", $1, $2 " (" $3 ")", $5 " (" $6 ")", $8 " (" $9 ")" }'
