#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A PyTorch training step under `gbpf run` (tests/cuda_agent/device_run.sh).

Five SGD steps of a two-layer MLP (matmul, relu, mse, backward: torch's own
kernels, shipped as SASS without PTX, which gbpf reports as not
instrumentable), then a custom kernel compiled at run time by NVRTC to PTX
and launched with the driver API through ctypes on torch's stream and
tensors (no cupy, no compiler at run time beyond NVRTC): the instrumentable
part. Prints deterministic lines (losses to 4 decimals, the custom kernel's
launch configuration as "grid=.. block=.. launches=..") and exits 1 if a
result is wrong, 2 if the setup fails.
"""
import ctypes
import glob
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402

KERNEL = r"""
extern "C" __global__ void torch_axpb(const float *x, float *y, float a, float b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + b;
}
"""


def fail(code, msg):
    print("torch_step: " + msg, file=sys.stderr)
    sys.exit(code)


def load_nvrtc():
    """libnvrtc from the system CUDA or the one that came with torch's wheels."""
    names = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"]
    roots = [os.path.dirname(torch.__file__), "/usr/local/cuda/lib64"]
    roots += [p for p in sys.path if p.endswith("site-packages") or p.endswith("dist-packages")]
    cands = list(names)
    for r in roots:
        for pat in ("nvidia/*/lib/libnvrtc.so*", "nvidia/*/*/lib/libnvrtc.so*", "lib/libnvrtc*.so*",
                    "libnvrtc.so*"):
            cands += sorted(glob.glob(os.path.join(r, pat)))
    for c in cands:
        if "builtins" in c or "alt" in os.path.basename(c):
            continue
        try:
            return ctypes.CDLL(c)
        except OSError:
            continue
    fail(2, "libnvrtc not found (tried %s)" % ", ".join(cands[:6]))


def nvrtc_ptx(nvrtc, major, minor):
    prog = ctypes.c_void_p()
    ck = lambda r, what: r == 0 or fail(2, "%s failed: nvrtc error %d" % (what, r))
    ck(nvrtc.nvrtcCreateProgram(ctypes.byref(prog), KERNEL.encode(), b"torch_axpb.cu", 0, None, None),
       "nvrtcCreateProgram")
    opt = ("--gpu-architecture=compute_%d%d" % (major, minor)).encode()
    opts = (ctypes.c_char_p * 1)(opt)
    if nvrtc.nvrtcCompileProgram(prog, 1, opts) != 0:
        n = ctypes.c_size_t()
        nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value + 1)
        nvrtc.nvrtcGetProgramLog(prog, log)
        fail(2, "nvrtcCompileProgram (%s): %s" % (opt.decode(), log.value.decode(errors="replace")))
    n = ctypes.c_size_t()
    ck(nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(n)), "nvrtcGetPTXSize")
    ptx = ctypes.create_string_buffer(n.value)
    ck(nvrtc.nvrtcGetPTX(prog, ptx), "nvrtcGetPTX")
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    return ptx


def train():
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    dev = "cuda"
    x = torch.randn(512, 64, device=dev)
    w_true = torch.randn(64, 8, device=dev)
    y = torch.tanh(x @ w_true)
    w1 = (torch.randn(64, 128, device=dev) * 0.1).requires_grad_()
    w2 = (torch.randn(128, 8, device=dev) * 0.1).requires_grad_()
    losses = []
    for _ in range(5):
        h = torch.relu(x @ w1)
        loss = ((h @ w2 - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            for w in (w1, w2):
                w -= 0.5 * w.grad
                w.grad = None
        losses.append(loss.item())
    for i, l in enumerate(losses):
        print("torch_step: step %d loss %.4f" % (i, l))
    if not all(b < a for a, b in zip(losses, losses[1:])):
        fail(1, "loss did not decrease: %s" % losses)
    return h.detach()


def custom_kernel(h):
    major, minor = torch.cuda.get_device_capability()
    ptx = nvrtc_ptx(load_nvrtc(), major, minor)
    cuda = ctypes.CDLL("libcuda.so.1")
    ck = lambda r, what: r == 0 or fail(2, "%s failed: CUresult %d" % (what, r))
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    ck(cuda.cuModuleLoadData(ctypes.byref(mod), ptx), "cuModuleLoadData")
    ck(cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b"torch_axpb"), "cuModuleGetFunction")
    xin = h.flatten().contiguous()
    out = torch.empty_like(xin)
    n, block, launches = xin.numel(), 256, 3
    grid = (n + block - 1) // block
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    for k in range(launches):
        a, b = ctypes.c_float(2.0 + k), ctypes.c_float(-1.0 * k)
        px, py, cn = ctypes.c_void_p(xin.data_ptr()), ctypes.c_void_p(out.data_ptr()), ctypes.c_int(n)
        args = (ctypes.c_void_p * 5)(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p)
                                       for v in (px, py, a, b, cn)])
        ck(cuda.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, stream, args, None), "cuLaunchKernel")
        torch.cuda.synchronize()
        want = (2.0 + k) * xin - 1.0 * k
        if not torch.allclose(out, want, rtol=1e-6, atol=1e-6):
            fail(1, "torch_axpb launch %d: max error %g" % (k, (out - want).abs().max().item()))
    ck(cuda.cuModuleUnload(mod), "cuModuleUnload")
    print("torch_step: torch_axpb nvrtc grid=%dx1x1 block=%dx1x1 launches=%d: ok" % (grid, block, launches))
    print("torch_step: checksum %.4f" % float(out.double().sum()))


def main():
    if not torch.cuda.is_available():
        fail(2, "no CUDA device")
    h = train()
    custom_kernel(h)


if __name__ == "__main__":
    main()
