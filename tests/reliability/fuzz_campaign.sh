#!/bin/sh
# tests/reliability/fuzz_campaign.sh BUILD OUT TARGET=SECONDS...
#
# A longer fuzz campaign: runs the libFuzzer targets of a `-Dfuzz=true`
# build one at a time (never two at once: the other engineers share the
# cores), each at the lowest priority for its own time, over a fresh corpus
# made of its seeds and regression inputs, and prints one line per target:
#   TARGET: S s, N execs (R/s), corpus C, findings F
# Findings (crash-*, leak-*, timeout-*, oom-*) stay in OUT/TARGET/artifacts:
# copy each into tests/reliability/regressions/<target>/ (verifier, cuda_inject)
# or the owning part's corpus, fix the bug and commit both.
#
# Targets: verifier cuda_inject inject_ptx inject_fatbin loader agent_proto
# spirv_inject. Example (from the repository root):
#   CC=clang meson setup build-fuzz -Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true
#   ninja -C build-fuzz tests/reliability/fuzz_verifier tests/reliability/verifier_seeds ...
#   tests/reliability/fuzz_campaign.sh build-fuzz /tmp/fuzz verifier=3600 cuda_inject=1800
# SEED_BUILD=DIR (default BUILD) names a build whose nvcc outputs
# (tests/inject: *.ptx, the apps in 8 fatbin forms) seed the PTX and fatbin
# targets, and its SPIR-V modules (tests/spirv, examples/apps) the SPIR-V
# target; a -Dfuzz=true build usually has not built them.
# The exit status is 1 when any target found something or could not run.
set -u
build=${1:?usage: fuzz_campaign.sh BUILD OUT TARGET=SECONDS...}
out=${2:?usage: fuzz_campaign.sh BUILD OUT TARGET=SECONDS...}
shift 2
sb=${SEED_BUILD:-$build}
status=0

# Copy seeds (files, or the plain files of folders; todo-* inputs reproduce
# open bugs and would stop the run at once) into a corpus folder.
seed() {
	dst=$1
	shift
	for s in "$@"; do
		if [ -d "$s" ]; then
			find "$s" -maxdepth 1 -type f ! -name README.md ! -name 'todo-*' \
				-exec cp {} "$dst/" \;
		elif [ -f "$s" ]; then
			cp "$s" "$dst/"
		fi
	done
}

for spec in "$@"; do
	t=${spec%%=*}
	secs=${spec#*=}
	extra=""
	case $t in
	verifier)
		bin=$build/tests/reliability/fuzz_verifier
		seeds="$build/tests/reliability/verifier_seeds tests/reliability/regressions/verifier" ;;
	cuda_inject)
		bin=$build/tests/reliability/fuzz_cuda_inject
		seeds="tests/inject/data tests/reliability/regressions/cuda_inject $(find "$sb/tests/inject" -maxdepth 1 -name '*.ptx' 2>/dev/null)"
		extra="-max_len=65536" ;;
	inject_ptx)
		bin=$build/tests/inject/fuzz_inject_ptx
		seeds="tests/inject/data $(find "$sb/tests/inject" -maxdepth 1 -name '*.ptx' 2>/dev/null)"
		extra="-max_len=65536" ;;
	inject_fatbin)
		bin=$build/tests/inject/fuzz_inject_fatbin
		seeds="$(find "$sb/tests/inject" -maxdepth 1 -type f ! -name '*.ptx' ! -name 'test_*' -size -4M 2>/dev/null)"
		extra="-max_len=4194304" ;;
	loader)
		bin=$build/tests/loader/fuzz_loader
		seeds="$(find "$build/tests/loader" "$build/examples" -maxdepth 1 -name '*.bpf.o' 2>/dev/null)" ;;
	agent_proto)
		bin=$build/tests/agent/fuzz_agent_proto
		seeds="" ;;
	spirv_inject)
		bin=$build/tests/spirv/fuzz_spirv_inject
		seeds="$(find "$sb/tests/spirv" "$sb/examples/apps" -name '*.spv' -size -1024k 2>/dev/null)"
		extra="-max_len=65536" ;;
	*)
		echo "$t: unknown target" >&2
		status=1
		continue ;;
	esac
	if [ ! -x "$bin" ]; then
		echo "$t: $bin is not built (meson setup -Dfuzz=true, then ninja it)" >&2
		status=1
		continue
	fi
	w=$out/$t
	rm -rf "$w" && mkdir -p "$w/corpus" "$w/artifacts" || exit 1
	# shellcheck disable=SC2086
	seed "$w/corpus" $seeds
	n0=$(ls "$w/corpus" | wc -l)
	start=$(date +%s)
	# shellcheck disable=SC2086
	nice -n 19 "$bin" -max_total_time="$secs" -timeout=30 -rss_limit_mb=3072 $extra \
		-print_final_stats=1 -artifact_prefix="$w/artifacts/" "$w/corpus" >"$w/log" 2>&1
	rc=$?
	end=$(date +%s)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$w/log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$w/log" | tail -n 1)
	found=$(ls "$w/artifacts" | wc -l)
	echo "$t: $((end - start)) s, ${execs:-?} execs (${rate:-?}/s), corpus $n0 -> $(ls "$w/corpus" | wc -l), findings $found (exit $rc)"
	if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
		status=1
		ls "$w/artifacts" | sed "s|^|  $w/artifacts/|"
	fi
done
exit $status
