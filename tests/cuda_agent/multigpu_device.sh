#!/usr/bin/env bash
# tests/cuda_agent/multigpu_device.sh BIN - several GPUs and contexts in one
# process, and a job of two processes, under one `gbpf run` (H200; all
# visible GPUs, 1 or more). BIN as for device_run.sh (tests/device/pack.sh),
# with perdevice.bpf.o and exitcount.bpf.o.
# CHECKS: examples/apps/multigpu.cu launches vec_add (256 x 256 threads) L
# times on every GPU; the exit count of a map only GPUs use (each context
# its own device copy, merged) and of a map host probes share (registered
# memory) equal the threads launched on all GPUs; launches per device (the
# host probe's ctx->device) match; a two-process job (one GPU each, or both
# on GPU 0 with one GPU) sums exactly into one controller's maps; the app's
# output is identical with and without gbpf.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "$1" && pwd)
O=${OUT:-/tmp/gbpf-multigpu}
A=/tmp/gbpf-multigpu-apps
mkdir -p "$O" "$A"
export PATH=$PATH:/usr/local/cuda/bin
export LD_LIBRARY_PATH=$BIN:$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GBPF_AGENT_LIB=$BIN/libgbpf-agent.so GBPF_PLUGIN_PATH=$BIN/libgbpf-cuda.so
export CUDA_CACHE_PATH=$A/jitcache
PASS=0 FAIL=0
check() { if eval "$2"; then PASS=$((PASS + 1)); echo "ok - $1"; else FAIL=$((FAIL + 1)); echo "not ok - $1"; fi; }
# mapval FILE MAP KEY: the value of KEY in the last JSON print of array MAP
mapval() {
	python3 - "$@" <<'PY'
import json, sys
path, name, key = sys.argv[1], sys.argv[2], int(sys.argv[3])
val = None
for line in open(path):
    line = line.strip()
    if not line.startswith('{'):
        continue
    try:
        o = json.loads(line)
    except ValueError:
        continue
    for m in o.get('maps', []) if isinstance(o, dict) else []:
        if m.get('name') != name:
            continue
        for e in m.get('data', []):
            if isinstance(e, dict) and e.get('key') == key:
                val = e.get('value')
print(val if val is not None else '')
PY
}

NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
L=5
THREADS=65536
echo "# GPUs visible: $NGPU"
cd "$ROOT" || exit 1
nvcc -o "$A/multigpu" examples/apps/multigpu.cu 2>&1 | tail -3
[ -x "$A/multigpu" ] || { echo "not ok - nvcc built no multigpu app"; echo "passed 0 failed 1"; exit 1; }
"$A/multigpu" $L > "$O/plain.out" 2> "$O/plain.err"
check "multigpu alone: one ok line per GPU ($NGPU)" "[ \$(grep -c ': ok$' $O/plain.out) = $NGPU ]"

echo "== one process, every GPU: GPU-only map (device copies per context) and per-device launches"
timeout 120 "$BIN/gbpf" -j run "$BIN/perdevice.bpf.o" -- "$A/multigpu" $L > "$O/pd.out" 2> "$O/pd.err"
rc=$?
grep -v '^{' "$O/pd.out" > "$O/pd.app"
check "exits 0 (rc $rc), app output identical" "[ $rc = 0 ] && cmp -s $O/plain.out $O/pd.app"
want=$((NGPU * L * THREADS))
got=$(mapval "$O/pd.out" gpu_exits 0)
check "GPU-only map: exits ${got:-none} == $want ($NGPU GPUs x $L x $THREADS)" "[ '${got:-x}' = $want ]"
for ((d = 0; d < NGPU; d++)); do
	got=$(mapval "$O/pd.out" launches_by_device $d)
	check "host probe ctx->device: launches on GPU $d == $L (${got:-none})" "[ '${got:-x}' = $L ]"
done
check "one instrumented module per GPU ($(grep -c ': instrumented' "$O/pd.err") reports)" \
	"[ \$(grep -c ': instrumented' $O/pd.err) -ge $NGPU ] && ! grep -q 'not instrumented' $O/pd.err"
echo "# stderr: $(head -c 500 "$O/pd.err" | tr '\n' ' ')"

echo "== one process, every GPU: map shared with a host probe (registered memory)"
timeout 120 "$BIN/gbpf" -j run "$BIN/exitcount.bpf.o" -- "$A/multigpu" $L > "$O/ec.out" 2> "$O/ec.err"
got=$(mapval "$O/ec.out" exitcount 0)
check "host-shared map: exits ${got:-none} == $want" "[ '${got:-x}' = $want ]"
got=$(mapval "$O/ec.out" exitcount 1)
check "host-shared map: launches ${got:-none} == $((NGPU * L))" "[ '${got:-x}' = $((NGPU * L)) ]"

echo "== a job of two processes under one controller"
D1=$((NGPU > 1 ? 1 : 0))
timeout 120 "$BIN/gbpf" -j run "$BIN/perdevice.bpf.o" -- sh -c \
	"'$A/multigpu' --device 0 3 & '$A/multigpu' --device $D1 4; wait" > "$O/job.out" 2> "$O/job.err"
rc=$?
want=$(((3 + 4) * THREADS))
got=$(mapval "$O/job.out" gpu_exits 0)
check "two processes (GPUs 0 and $D1): exits ${got:-none} == $want, both apps ok (rc $rc)" \
	"[ '${got:-x}' = $want ] && [ \$(grep -c ': ok$' $O/job.out) = 2 ]"
if [ "$D1" = 1 ]; then
	a=$(mapval "$O/job.out" launches_by_device 0); b=$(mapval "$O/job.out" launches_by_device 1)
	check "two processes: launches per device 3 and 4 (${a:-none}, ${b:-none})" "[ '${a:-x}' = 3 ] && [ '${b:-x}' = 4 ]"
fi
echo "# job stderr: $(head -c 400 "$O/job.err" | tr '\n' ' ')"
echo "passed $PASS failed $FAIL"
[ "$FAIL" = 0 ]
