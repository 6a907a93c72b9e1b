#!/usr/bin/env bash
# tests/cuda_agent/attach_device.sh - gbpf attach / detach on a running CUDA app (H200).
# Usage: attach_device.sh BIN   where BIN holds gbpf, libgbpf.so.0, libgbpf-agent.so,
# libgbpf-cuda.so and the probe objects exitcount.bpf.o and threadhist.bpf.o (as for
# tests/cuda_agent/device_run.sh).
# examples/apps/loop.cu is started idle (`gbpf run --idle --backend cuda`): its module
# is loaded by a warm-up launch before anything is attached; it launches vec_add
# (256 x 256 threads) on command. CHECKS: attach counts exactly the launches made
# while attached (thread exits and host launches), detach (maps unmapped, app goes
# on), re-attach, hot swap to another object, Ctrl-C of the controller, and the
# app's output identical to a run without gbpf. Then, where python3 has torch, the
# same on a PyTorch training loop (coexist_device.py attach_ptx; its probes
# torchwin_exit.bpf.o and torchwin_entry.bpf.o must be in BIN).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "$1" && pwd)
O=${OUT:-/tmp/gbpf-cuda-attach}
A=/tmp/gbpf-cuda-attach-apps
mkdir -p "$O" "$A"
export PATH=$PATH:/usr/local/cuda/bin
export LD_LIBRARY_PATH=$BIN:$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GBPF_AGENT_LIB=$BIN/libgbpf-agent.so GBPF_PLUGIN_PATH=$BIN/libgbpf-cuda.so
export CUDA_CACHE_PATH=$A/jitcache
export XDG_RUNTIME_DIR=$(mktemp -d /tmp/gbpf-attach-xdg-XXXXXX)
PASS=0 FAIL=0
THREADS=65536
check() { if eval "$2"; then PASS=$((PASS + 1)); echo "ok - $1"; else FAIL=$((FAIL + 1)); echo "not ok - $1"; fi; }
# wait_for FILE PATTERN SECONDS: until grep finds PATTERN in FILE
wait_for() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# launch N: tell the app, wait for its answer (the Nth "launched" line)
NLAUNCHED=0
launch() {
	echo "launch $1" >&3
	NLAUNCHED=$((NLAUNCHED + 1))
	local i
	for ((i = 0; i < 600; i++)); do
		[ "$(grep -c '^launched' "$O/app.out")" -ge "$NLAUNCHED" ] && return 0
		sleep 0.1
	done
	echo "# app did not answer 'launch $1'"
	return 1
}
value_of() { grep -o "{\"key\":$2,\"value\":[0-9]*}" "$1" | tail -1 | grep -o '[0-9]*}$' | tr -d '}'; }

echo "== build"
cd "$ROOT" || exit 1
nvcc -o "$A/loop" examples/apps/loop.cu 2>&1 | tail -3
[ -x "$A/loop" ] || { echo "not ok - nvcc built no loop app"; exit 1; }

echo "== reference run (no gbpf)"
printf 'launch 3\nlaunch 5\nlaunch 2\nlaunch 4\nlaunch 1\nlaunch 1\nquit\n' | "$A/loop" | grep -v '^ready' > "$O/plain.out"

echo "== idle app"
rm -f "$O/fifo"; mkfifo "$O/fifo"
exec 3<>"$O/fifo"
"$BIN/gbpf" run --idle --backend cuda -- "$A/loop" <&3 > "$O/app.out" 2> "$O/app.err" &
APP=$!
check "idle app starts (ready line)" "wait_for $O/app.out '^ready pid' 60"
PID=$(awk '/^ready pid/ { print $3 }' "$O/app.out")
check "--idle: the app has gbpf's pid" "[ '$PID' = '$APP' ]"
check "agent socket exists, mode 0600" "[ \"\$(stat -c %a $XDG_RUNTIME_DIR/gbpf/$PID.sock)\" = 600 ]"
launch 3

echo "== attach exitcount, 5 launches, detach"
"$BIN/gbpf" -j attach "$PID" "$BIN/exitcount.bpf.o" > "$O/att1.out" 2> "$O/att1.err" &
ATT=$!
check "attach: agent attached" "wait_for $O/att1.err 'info: attached' 60"
launch 5
check "kernel loaded before the attach is instrumented" "grep -q 'info: kernel .*: instrumented' $O/att1.err"
"$BIN/gbpf" detach "$PID" 2> "$O/det1.err"
check "gbpf detach succeeds" "grep -q 'detached' $O/det1.err"
wait $ATT
echo "# att1: $(grep exitcount "$O/att1.out" | tail -1 | cut -c1-200)"
echo "# att1 err: $(head -c 600 "$O/att1.err" | tr '\n' ' ')"
check "exit count == 5 launches x $THREADS threads" "[ \"\$(value_of $O/att1.out 0)\" = $((5 * THREADS)) ]"
check "host launches == 5" "[ \"\$(value_of $O/att1.out 1)\" = 5 ]"
check "detached: map memory unmapped" "! grep -q 'memfd:gbpf-maps' /proc/$PID/maps"
launch 2

echo "== re-attach, 4 launches, Ctrl-C"
"$BIN/gbpf" -j attach "$PID" "$BIN/exitcount.bpf.o" > "$O/att2.out" 2> "$O/att2.err" &
ATT=$!
check "re-attach" "wait_for $O/att2.err 'info: attached' 60"
launch 4
kill -INT $ATT
wait $ATT
check "re-attached: exit count == 4 x $THREADS" "[ \"\$(value_of $O/att2.out 0)\" = $((4 * THREADS)) ]"
check "re-attached: host launches == 4" "[ \"\$(value_of $O/att2.out 1)\" = 4 ]"

echo "== hot swap exitcount -> threadhist"
"$BIN/gbpf" -j attach "$PID" "$BIN/exitcount.bpf.o" > "$O/att3.out" 2> "$O/att3.err" &
ATT3=$!
check "attach exitcount" "wait_for $O/att3.err 'info: attached' 60"
launch 1
"$BIN/gbpf" -j attach "$PID" "$BIN/threadhist.bpf.o" > "$O/att4.out" 2> "$O/att4.err" &
ATT4=$!
check "second attach replaces the first" "wait_for $O/att4.err 'info: attached' 60"
wait $ATT3
check "replaced session: exit count == 1 x $THREADS" "[ \"\$(value_of $O/att3.out 0)\" = $THREADS ]"
launch 1
kill -INT $ATT4
wait $ATT4
check "threadhist after the swap: $THREADS per-thread slots, each 1" \
	"grep -q '\"name\":\"thread_exits\"[^]]*\"entries\":$THREADS' $O/att4.out && ! grep -o '\"value\":[0-9]*' $O/att4.out | grep -qv '\"value\":1$'"

echo "quit" >&3
wait $APP
check "app exits 0" "[ $? = 0 ]"
exec 3>&-
grep -v '^ready' "$O/app.out" > "$O/app.cmp"
check "app output identical to the run without gbpf" "cmp -s $O/plain.out $O/app.cmp"
check "socket removed at exit" "[ ! -e $XDG_RUNTIME_DIR/gbpf/$PID.sock ]"
echo "# app stderr: $(head -c 400 "$O/app.err" | tr '\n' ' ')"
# The same on a PyTorch training loop (attach, replace, detach; #12's done-when):
# tests/cuda_agent/coexist_device.py: attach/replace/detach with engines ptx and auto,
# the PyTorch profiler beside gbpf, spawned workers (GBPF_COEXIST_SECTIONS).
# GBPF_ATTACH_TORCH=0 skips it.
if [ "${GBPF_ATTACH_TORCH:-1}" = 1 ] && python3 -c 'import torch' 2>/dev/null; then
	echo "== PyTorch training loop: attach, replace, detach; profiler beside gbpf; spawned workers (coexist_device.py)"
	python3 "$ROOT/tests/cuda_agent/coexist_device.py" "$BIN" "$O/torch" --budget 150 \
		${GBPF_COEXIST_SECTIONS:-attach_ptx attach_auto profiler spawn} > "$O/torch.log" 2>&1
	grep -v '^passed ' "$O/torch.log"
	PASS=$((PASS + $(grep -c '^ok - ' "$O/torch.log")))
	FAIL=$((FAIL + $(grep -c '^not ok - ' "$O/torch.log")))
fi
echo "passed $PASS failed $FAIL"
[ "$FAIL" = 0 ]
