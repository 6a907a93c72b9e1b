#!/bin/sh
# Build gbpf with clang, ASan and UBSan (and libFuzzer targets) and run every
# test. Ends with one line: "N passed, N failed[, N skipped]", counting each
# TAP check of every test program.
set -eu
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
build=${GBPF_TEST_BUILD:-build-test}
fuzz_seconds=${GBPF_FUZZ_SECONDS:-60}
if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" -Db_sanitize=address,undefined -Db_lundef=false \
		-Dfuzz=true -Dfuzz_seconds="$fuzz_seconds" >/dev/null
else
	meson configure "$build" -Dfuzz_seconds="$fuzz_seconds" >/dev/null
fi
ninja -C "$build"

# The demo builds with the system compiler (gcc) at -O3: its warnings differ
# from clang's, and -Werror makes them errors, so build that way too.
gcc_build=${build}-gcc
if [ ! -f "$gcc_build/build.ninja" ]; then
	CC=gcc meson setup "$gcc_build" --buildtype=release -Dfuzz=false >/dev/null
fi
ninja -C "$gcc_build" >/dev/null || { echo "Error: the gcc release build (as the demo builds) fails" >&2; exit 1; }

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
meson test -C "$build" --num-processes 2 --print-errorlogs --timeout-multiplier 3 || status=$?
python3 scripts/tap_summary.py "$build/meson-logs/testlog.json"
exit $status
