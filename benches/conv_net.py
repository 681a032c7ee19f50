"""ferrograd beside torch on convolutional work: a ResNet-18 training step and the ops it is made
of (conv2d, max_pool2d, batch norm), forward and backward, timed in alternating rounds in one
process; the ratio is the median of the per-round ratios ferrograd/torch.

usage: python3 benches/conv_net.py      (needs torch)
"""

from __future__ import annotations

import pathlib
import statistics
import time

import torch

import ferrograd

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "resnet_finetune.py"
ROUNDS = 7


def resnet18(T):
    """The example's ResNet-18, built on the module T."""
    source = EXAMPLE.read_text().replace("import ferrograd as torch\nfrom ferrograd import nn, optim", "")
    namespace = {"torch": T, "nn": T.nn, "optim": T.optim}
    exec(compile(source, str(EXAMPLE), "exec"), namespace)
    return namespace["ResNet18"]()


def training_step(T, batch):
    T.manual_seed(0)
    model = resnet18(T)
    opt = T.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    x, y = T.rand(batch, 3, 64, 64), T.randint(0, 1000, (batch,))

    def step():
        opt.zero_grad()
        T.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    return step


def op_step(T, make):
    T.manual_seed(0)
    x = T.randn(8, 64, 16, 16, requires_grad=True)
    op = make(T)
    return lambda: op(x).sum().backward()


CASES = {
    "resnet18 step, batch 1": lambda T: training_step(T, 1),
    "resnet18 step, batch 8": lambda T: training_step(T, 8),
    "conv2d 64->64 3x3": lambda T: op_step(T, lambda T: T.nn.Conv2d(64, 64, 3, padding=1)),
    "max_pool2d 3x3 s2": lambda T: op_step(T, lambda T: T.nn.MaxPool2d(3, 2, 1)),
    "batch_norm2d": lambda T: op_step(T, lambda T: T.nn.BatchNorm2d(64)),
}


def timed(step, inner):
    t0 = time.perf_counter()
    for _ in range(inner):
        step()
    return (time.perf_counter() - t0) / inner


def compare(cases):
    """Times each ``make(T)`` step of ``cases`` with both libraries and prints the ratio."""
    for name, make in cases.items():
        steps = []
        for T in (ferrograd, torch):
            step = make(T)
            step()
            inner = max(1, int(0.2 / timed(step, 1)))
            steps.append((step, inner))
        samples = [[], []]
        for _ in range(ROUNDS):
            for k, (step, inner) in enumerate(steps):
                samples[k].append(timed(step, inner))
        ours, theirs = (statistics.median(s) * 1e3 for s in samples)
        ratio = statistics.median(a / b for a, b in zip(*samples))
        print(f"{name:24s} ferrograd {ours:8.2f} ms  torch {theirs:8.2f} ms  ratio {ratio:.3f}", flush=True)


def main():
    compare(CASES)


if __name__ == "__main__":
    main()
