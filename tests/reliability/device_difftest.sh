#!/usr/bin/env bash
# tests/reliability/device_difftest.sh - differential test on a GPU: runs the
# already-built gbpf-difftest against one backend and prints one line.
# Usage: device_difftest.sh DIFFTEST_BINARY [COUNT] [SEED] [BACKEND]
#   COUNT programs (default 5000) from SEED (default 1) on BACKEND (default
#   cuda). libgbpf and the plugin are found as the binary finds them
#   (GBPF_PLUGIN_PATH, LD_LIBRARY_PATH). Builds nothing.
# Output: "difftest BACKEND: N programs, M mismatches, R rejected (seeds A..B, S s)"
# and exit status 0 only when every program ran and none differed. The TAP
# log (with reproducers) is kept in ${OUT:-/tmp}/difftest-BACKEND.tap.
set -u
bin=${1:?usage: device_difftest.sh DIFFTEST_BINARY [COUNT] [SEED] [BACKEND]}
count=${2:-5000}
seed=${3:-1}
backend=${4:-cuda}
log=${OUT:-/tmp}/difftest-$backend.tap
start=$(date +%s)
"$bin" --seed "$seed" --count "$count" --backend "$backend" >"$log" 2>&1
rc=$?
secs=$(($(date +%s) - start))
summary=$(grep '^# difftest:' "$log" | tail -n 1)
mism=$(echo "$summary" | sed -n 's/.*; \([0-9]*\) mismatches.*/\1/p')
rej=$(echo "$summary" | sed -n 's/.*mismatches, \([0-9]*\) rejected.*/\1/p')
ran=$(echo "$summary" | sed -n "s/.* $backend \([0-9]*\)\/\([0-9]*\).*/\2/p")
if [ -z "$summary" ]; then
	echo "difftest $backend: no result (exit $rc; see $log: $(grep -m1 '^not ok' "$log"))"
	exit 1
fi
echo "difftest $backend: ${ran:-0} programs, ${mism:-?} mismatches, ${rej:-?} rejected" \
	"(seeds $seed..$((seed + count - 1)), ${secs} s)"
status=0
[ "$rc" = 0 ] && [ "${mism:-1}" = 0 ] || status=1
# Reproducers of mismatches found before (tests/reliability/repro/*.s, the
# programs as the shrinker printed them): "todo-" ones are open bugs, a
# difference there is expected and says so; any other that differs fails.
for rep in "$(dirname "$0")"/repro/*.s; do
	[ -f "$rep" ] || continue
	"$bin" --asm "$rep" --backend "$backend" >"$log.repro" 2>&1
	line=$(grep -m1 -E '^(not )?ok 1 ' "$log.repro" | cut -c1-160)
	case "$(basename "$rep")" in
	todo-*) echo "difftest $backend repro $(basename "$rep") (open bug): ${line:-no result}" ;;
	*)
		echo "difftest $backend repro $(basename "$rep"): ${line:-no result}"
		case "$line" in "ok 1 "*) ;; *) status=1 ;; esac ;;
	esac
done
exit $status
