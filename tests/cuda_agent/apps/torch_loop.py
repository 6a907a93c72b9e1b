#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A deterministic PyTorch training loop for attach / replace / detach tests.

Every step first launches a custom kernel (CUDA C compiled at start by NVRTC
to PTX, loaded and launched through the driver API with ctypes, on torch's
stream) that derives the step's input batch from the data set, then one SGD
step of a two-layer MLP on it (torch's own kernels: cuBLAS GEMMs,
elementwise, reductions; they ship as SASS). The custom kernel is part of
the data path: an instrumented copy that computed anything else would change
every later loss. stdout carries only deterministic lines: each step's loss
as float.hex (exact), and at the end the weights' sum (float.hex of a
float64 sum) and a SHA-256 of their bytes. A run under gbpf must print the
same bytes as a plain run.

Options:
  --steps N             training steps (default 24)
  --pause-at S,S,...    before step S: synchronise, print "torch_loop: paused at
                        step S" on stderr, wait until MARKER_DIR/go.S exists
  --marker-dir D        where the go.S files appear (default: cwd)
  --sleep SECONDS       sleep after each step (a loop that runs long enough)
  --stats FILE          per step: host time of the custom kernel's cuLaunchKernel
                        call, its GPU time (CUDA events) and the whole step's time
                        (torch's kernels included, up to loss.item()), JSON
  --profile FILE        run the loop under torch.profiler (CPU + CUDA activities,
                        CUPTI); FILE gets the kernel table, FILE.json the names of
                        the CUDA kernels the profiler saw
  --workers N           N processes (torch.multiprocessing spawn), each running the
                        loop on device 0 with its own seed; results printed by the
                        parent in rank order
TORCH_LOOP_PTX=FILE loads that PTX instead of compiling KERNEL_SRC with NVRTC.
Exit status: 0, 1 when a result is wrong, 2 when the setup fails, 3 when a
pause marker never came.
"""
import argparse
import ctypes
import glob
import hashlib
import json
import os
import sys
import time

# cuBLAS is deterministic only with a fixed workspace; must precede torch's CUDA init.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402

KERNEL_NAME = "gbpf_loop_jitter"
# fmaf_rn: one rounding, whatever the JIT does around it (instrumented or not).
KERNEL_SRC = r"""
extern "C" __global__ void gbpf_loop_jitter(const float *x, float *out, float a, float b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = __fmaf_rn(a, x[i], b);
}
"""
ROWS, FEATS, HIDDEN, OUTS = 2048, 128, 256, 16  # the custom kernel: 262144 threads, 1024 blocks
BLOCK = 256
PAUSE_TIMEOUT_S = 180


def die(code, msg):
    print("torch_loop: " + msg, file=sys.stderr, flush=True)
    sys.exit(code)


def open_nvrtc():
    """libnvrtc: the system CUDA's, else one that came with torch's wheels."""
    tried = []
    dirs = ["/usr/local/cuda/lib64", os.path.dirname(torch.__file__)]
    dirs += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    names = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"]
    for d in dirs:
        for pat in ("libnvrtc.so*", "lib/libnvrtc.so*", "nvidia/cuda_nvrtc/lib/libnvrtc.so*",
                    "nvidia/*/lib/libnvrtc.so*"):
            names += sorted(glob.glob(os.path.join(d, pat)))
    for n in names:
        if "builtins" in n or "alt" in os.path.basename(n):
            continue
        tried.append(n)
        try:
            return ctypes.CDLL(n)
        except OSError:
            pass
    die(2, "no libnvrtc (tried %s)" % ", ".join(tried[:8]))


def compile_ptx():
    # A machine without NVRTC (or a smoke test on a fake driver) may hand in the PTX.
    given = os.environ.get("TORCH_LOOP_PTX")
    if given:
        with open(given, "rb") as f:
            return ctypes.create_string_buffer(f.read())
    nvrtc = open_nvrtc()
    major, minor = torch.cuda.get_device_capability(0)
    prog = ctypes.c_void_p()
    if nvrtc.nvrtcCreateProgram(ctypes.byref(prog), KERNEL_SRC.encode(), b"jitter.cu", 0, None,
                                None):
        die(2, "nvrtcCreateProgram failed")
    arch = ("--gpu-architecture=compute_%d%d" % (major, minor)).encode()
    opts = (ctypes.c_char_p * 1)(arch)
    if nvrtc.nvrtcCompileProgram(prog, 1, opts):
        size = ctypes.c_size_t()
        nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value + 1)
        nvrtc.nvrtcGetProgramLog(prog, log)
        die(2, "NVRTC (%s): %s" % (arch.decode(), log.value.decode(errors="replace")))
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetPTX(prog, ptx)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    return ptx


class Jitter:
    """The custom kernel, loaded from PTX with the driver API in torch's context."""

    def __init__(self):
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # torch's (primary) context is current from here on
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.mod, self.fn = ctypes.c_void_p(), ctypes.c_void_p()
        ptx = compile_ptx()
        self.check(self.cu.cuModuleLoadData(ctypes.byref(self.mod), ptx), "cuModuleLoadData")
        self.check(self.cu.cuModuleGetFunction(ctypes.byref(self.fn), self.mod,
                                               KERNEL_NAME.encode()), "cuModuleGetFunction")

    @staticmethod
    def check(rc, what):
        if rc:
            die(2, "%s: CUresult %d" % (what, rc))

    def launch(self, x, out, a, b):
        """out = fma(a, x, b) on torch's current stream; returns the host time of the call (ns)."""
        n = x.numel()
        args_v = [ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(out.data_ptr()),
                  ctypes.c_float(a), ctypes.c_float(b), ctypes.c_int(n)]
        args = (ctypes.c_void_p * len(args_v))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p)
                                                 for v in args_v])
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        grid = (n + BLOCK - 1) // BLOCK
        t0 = time.perf_counter_ns()
        rc = self.cu.cuLaunchKernel(self.fn, grid, 1, 1, BLOCK, 1, 1, 0, stream, args, None)
        t1 = time.perf_counter_ns()
        self.check(rc, "cuLaunchKernel")
        return t1 - t0


def wait_marker(step, marker_dir):
    torch.cuda.synchronize()
    print("torch_loop: paused at step %d" % step, file=sys.stderr, flush=True)
    path = os.path.join(marker_dir, "go.%d" % step)
    end = time.time() + PAUSE_TIMEOUT_S
    while not os.path.exists(path):
        if time.time() > end:
            die(3, "no %s within %d s" % (path, PAUSE_TIMEOUT_S))
        time.sleep(0.01)


def train(args, seed, out_lines, stats):
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = "cuda"
    jit = Jitter()
    data = torch.randn(ROWS, FEATS, device=dev)
    target = torch.tanh(data @ torch.randn(FEATS, OUTS, device=dev))
    w1 = (torch.randn(FEATS, HIDDEN, device=dev) * 0.05).requires_grad_()
    w2 = (torch.randn(HIDDEN, OUTS, device=dev) * 0.05).requires_grad_()
    batch = torch.empty_like(data)
    pauses = set(args.pause_at)
    ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for step in range(args.steps):
        if step in pauses:
            wait_marker(step, args.marker_dir)
        # The step's input: the data scaled and shifted by the custom kernel.
        t_step = time.perf_counter_ns()
        a = 1.0 + 1.0 / (step + 8)
        b = 0.01 * ((step % 5) - 2)
        ev0.record()
        launch_ns = jit.launch(data, batch, a, b)
        ev1.record()
        hidden = torch.relu(batch @ w1)
        loss = ((hidden @ w2 - target) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            for w in (w1, w2):
                w -= 0.2 * w.grad
                w.grad = None
        value = loss.item()  # synchronises: the events are complete
        out_lines.append("step %d loss %s" % (step, float(value).hex()))
        stats.append({"step": step, "launch_us": launch_ns / 1e3,
                      "gpu_us": ev0.elapsed_time(ev1) * 1e3,
                      "step_us": (time.perf_counter_ns() - t_step) / 1e3})
        if args.sleep:
            time.sleep(args.sleep)
    torch.cuda.synchronize()
    digest = hashlib.sha256()
    total = 0.0
    for w in (w1, w2):
        host = w.detach().cpu().contiguous()
        digest.update(bytes(host.view(torch.uint8).flatten().tolist()))
        total += float(host.double().sum())
    out_lines.append("weights sum %s sha256 %s" % (total.hex(), digest.hexdigest()))
    out_lines.append("%s launches %d grid %dx1x1 block %dx1x1" %
                     (KERNEL_NAME, args.steps, ROWS * FEATS // BLOCK, BLOCK))


def profile_run(args, out_lines, stats):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        train(args, 1234, out_lines, stats)
    names = sorted({e.name for e in prof.events()
                    if str(getattr(e, "device_type", "")).endswith("CUDA")})
    with open(args.profile, "w") as f:
        f.write(prof.key_averages().table(sort_by="cuda_time_total", row_limit=-1))
    with open(args.profile + ".json", "w") as f:
        json.dump(names, f)


def worker(rank, args, result_dir):
    lines, stats = [], []
    train(args, 1000 + rank, lines, stats)
    with open(os.path.join(result_dir, "rank%d.txt" % rank), "w") as f:
        f.write("".join("rank %d %s\n" % (rank, line) for line in lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--pause-at", default="")
    ap.add_argument("--marker-dir", default=".")
    ap.add_argument("--sleep", type=float, default=0.0)
    ap.add_argument("--stats")
    ap.add_argument("--profile")
    ap.add_argument("--workers", type=int, default=0)
    args = ap.parse_args()
    args.pause_at = [int(s) for s in args.pause_at.split(",") if s]
    if not torch.cuda.is_available():
        die(2, "no CUDA device")
    lines, stats = [], []
    if args.workers:
        import tempfile

        import torch.multiprocessing as mp

        result_dir = tempfile.mkdtemp(prefix="torch_loop_")
        mp.spawn(worker, args=(args, result_dir), nprocs=args.workers, join=True)
        for rank in range(args.workers):
            with open(os.path.join(result_dir, "rank%d.txt" % rank)) as f:
                sys.stdout.write(f.read())
        return 0
    if args.profile:
        profile_run(args, lines, stats)
    else:
        train(args, 1234, lines, stats)
    for line in lines:
        print("torch_loop: " + line)
    sys.stdout.flush()
    if args.stats:
        with open(args.stats, "w") as f:
            json.dump(stats, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
