"""Plots for docs/performance.md: ferrograd beside torch, measured in one process.

usage: python3 benches/plots.py [OUTPUT_DIR]   (default: docs/img)

- op_time_vs_size.png: time of one elementwise op (`a * b`, `tanh`) against
  the number of elements, with autograd recording.
- backward_vs_branches.png: time of forward + backward of the
  `wide_branches` workload against its number of independent branches.

Needs matplotlib and torch; neither is a dependency of ferrograd.
"""

from __future__ import annotations

import pathlib
import statistics
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "shared" / "bench"))

import torch  # noqa: E402
from workloads import wide_branches  # noqa: E402

import ferrograd  # noqa: E402

LIBS = {"ferrograd": ferrograd, "torch": torch}
SIZES = [1, 16, 256, 4096, 1 << 16, 1 << 18, 1 << 20, 1 << 22]
BRANCHES = [1, 2, 4, 8, 16, 32]


def per_call(fn, budget: float = 0.15) -> float:
    """Median seconds per call over rounds of about `budget` seconds each."""
    fn()
    t0, calls = time.perf_counter(), 0
    while time.perf_counter() - t0 < budget / 5:
        fn()
        calls += 1
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        rounds.append((time.perf_counter() - t0) / calls)
    return statistics.median(rounds)


def op_times() -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {}
    for name, T in LIBS.items():
        mul, tanh = [], []
        for n in SIZES:
            a = T.randn(n, requires_grad=True)
            b = T.randn(n, requires_grad=True)
            mul.append(per_call(lambda a=a, b=b: a * b))
            tanh.append(per_call(lambda a=a: a.tanh()))
        out[name] = {"a * b": mul, "tanh": tanh}
    return out


def branch_times() -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for name, T in LIBS.items():
        T.manual_seed(0)
        out[name] = [per_call(wide_branches(T, branches=k)[0], budget=0.5) for k in BRANCHES]
    return out


def main() -> None:
    target = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img")
    target.mkdir(parents=True, exist_ok=True)

    ops = op_times()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, op in zip(axes, ["a * b", "tanh"]):
        for name, style in [("ferrograd", "o-"), ("torch", "s--")]:
            ax.loglog(SIZES, [t * 1e6 for t in ops[name][op]], style, label=name)
        ax.set_title(f"{op} (float32, requires_grad)")
        ax.set_xlabel("elements")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("time per op (µs)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(target / "op_time_vs_size.png", dpi=110)

    branches = branch_times()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for name, style in [("ferrograd", "o-"), ("torch", "s--")]:
        ax.plot(BRANCHES, [t * 1e3 for t in branches[name]], style, label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("independent branches (256×256 matmul, tanh, matmul, sum)")
    ax.set_ylabel("forward + backward (ms)")
    ax.set_title("wide_branches")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(target / "backward_vs_branches.png", dpi=110)

    for name in LIBS:
        print(name, "ops µs:", {op: [round(t * 1e6, 2) for t in ts] for op, ts in ops[name].items()})
        print(name, "branches ms:", [round(t * 1e3, 2) for t in branches[name]])


if __name__ == "__main__":
    main()
