#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A small deterministic PyTorch training run for tests/cuda_sanitizer/device.sh.

Two convolutions (cuDNN forward, weight-gradient and data-gradient kernels),
ReLU, max pooling, a linear layer (cuBLAS GEMM), cross-entropy and SGD with
momentum (elementwise and multi-tensor kernels): every kernel is NVIDIA's or
PyTorch's own SASS, no PTX. Weights and data are made on the CPU from a fixed
seed; cuDNN and cuBLAS are held to deterministic algorithms without TF32, so
the printed losses are identical from run to run and with or without probes.
  torch_train.py [STEPS]
Exits 1 if a loss is not finite, 2 if there is no CUDA device.
"""
import math
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if not torch.cuda.is_available():
        print("torch_train: no CUDA device", file=sys.stderr)
        sys.exit(2)
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(8, 16, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(16 * 8 * 8, 10),
    )
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(16, 3, 16, 16, generator=gen)
    y = torch.randint(0, 10, (16,), generator=gen)
    model = model.cuda()
    x, y = x.cuda(), y.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    for i, l in enumerate(losses):
        print("torch_train: step %d loss %.6f" % (i, l))
    if not all(math.isfinite(l) for l in losses):
        print("torch_train: a loss is not finite: %s" % losses, file=sys.stderr)
        sys.exit(1)
    with torch.no_grad():
        print("torch_train: weight checksum %.6f" % float(sum(p.double().sum() for p in model.parameters())))


if __name__ == "__main__":
    main()
