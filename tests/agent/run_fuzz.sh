#!/bin/sh
# tests/agent/run_fuzz.sh FUZZER SECONDS WORK_DIR: one TAP line for the protocol fuzzer.
fuzzer=$1 secs=$2 work=$3
rm -rf "$work" && mkdir -p "$work/corpus" "$work/artifacts" || exit 1
echo "1..1"
if "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
	-artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1; then
	echo "ok 1 - fuzz_agent_proto ran ${secs}s without a finding"
else
	echo "not ok 1 - fuzz_agent_proto found a problem (see $work/log and $work/artifacts)"
	tail -n 40 "$work/log" | sed 's/^/# /'
	exit 1
fi
