#!/bin/sh
# tests/reliability/run_fuzz.sh NAME FUZZER SECONDS WORK_DIR REGRESSION_DIR SEED...
# Runs a libFuzzer target for SECONDS over a fresh corpus made of the seeds
# (files, or folders whose files are copied) and the regression inputs,
# and prints one TAP line: ok when nothing was found; otherwise not ok, with
# the artifact to copy into REGRESSION_DIR (the replay test then keeps it).
name=$1 fuzzer=$2 secs=$3 work=$4 regress=$5
shift 5
rm -rf "$work" && mkdir -p "$work/corpus" "$work/artifacts" || exit 1
# todo-* regression inputs reproduce open bugs: they would stop every run at once
for s in "$@" "$regress"; do
	if [ -d "$s" ]; then
		find "$s" -maxdepth 1 -type f ! -name README.md ! -name 'todo-*' -exec cp {} "$work/corpus/" \;
	elif [ -f "$s" ]; then
		cp "$s" "$work/corpus/"
	fi
done
echo "1..1"
if "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=3072 -max_len=65536 \
	-artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1; then
	echo "ok 1 - $name ran ${secs}s over $(ls "$work/corpus" | wc -l) inputs without a finding"
else
	echo "not ok 1 - $name found a problem: add $(ls "$work/artifacts" | head -n 1) from $work/artifacts to $regress"
	tail -n 40 "$work/log" | sed 's/^/# /'
	exit 1
fi
