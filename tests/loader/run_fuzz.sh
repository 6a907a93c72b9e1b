#!/bin/sh
# tests/loader/run_fuzz.sh FUZZER SEED_DIR SECONDS WORK_DIR
# Runs the loader fuzz target over a copy of the seed corpus for SECONDS and
# reports one TAP line: ok when libFuzzer found nothing, not ok otherwise.
fuzzer=$1 seeds=$2 secs=$3 work=$4
rm -rf "$work" && mkdir -p "$work/corpus" "$work/artifacts" || exit 1
cp "$seeds"/* "$work/corpus/" 2>/dev/null
# short inputs reach the name parsers too (demangler, attach points)
printf '%s' '_ZN4gemm6matmulILi16ELi32EfEEvPKT1_PS1_j' >"$work/corpus/name-template"
printf '%s' '_ZN2ns2k3EPNS_1WIiEES2_' >"$work/corpus/name-subst"
printf '%s' 'uretprobe//usr/lib/libcuda.so.1:cuLaunchKernel' >"$work/corpus/name-uprobe"
echo "1..1"
if "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
	-artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1; then
	echo "ok 1 - fuzz_loader ran ${secs}s over $(ls "$work/corpus" | wc -l) inputs without a finding"
else
	echo "not ok 1 - fuzz_loader found a problem (see $work/log and $work/artifacts)"
	tail -n 40 "$work/log" | sed 's/^/# /'
	exit 1
fi
