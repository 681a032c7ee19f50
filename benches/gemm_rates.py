"""Float32 product rates (GFLOP/s) of ferrograd and torch on the shapes of the GEMM-bound workloads,
on one thread and on all of them, in alternating rounds in one process.

    python3 benches/gemm_rates.py [ROUNDS]

The shapes are the eight products of `mlp_step` (784-512-512-10, batch 64; the weights used as
`W.t()` and the gradients' `g.t()` as in a training step) and the 256³ products of `wide_branches`
(forward, and the input's gradient `g @ w.t()`).
The ratio column is the median over rounds of ferrograd's time divided by torch's: near 1.0 means
the two multiply at the same rate, and a workload's ratio cannot then fall far below the share of
its products that ferrograd skips. Needs torch.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
import torch

import ferrograd as fg

# (name, left shape, right shape, left transposed, right transposed)
CASES = [
    ("x @ W1.t()", (64, 784), (512, 784), False, True),
    ("h1 @ W2.t()", (64, 512), (512, 512), False, True),
    ("h2 @ W3.t()", (64, 512), (10, 512), False, True),
    ("g3.t() @ h2", (64, 10), (64, 512), True, False),
    ("g3 @ W3", (64, 10), (10, 512), False, False),
    ("g2.t() @ h1", (64, 512), (64, 512), True, False),
    ("g2 @ W2", (64, 512), (512, 512), False, False),
    ("g1.t() @ x", (64, 512), (64, 784), True, False),
    ("256³", (256, 256), (256, 256), False, False),
    ("256³ @ w.t()", (256, 256), (256, 256), False, True),
]
ROUND_SECONDS = 0.1  # per library per round: long enough that the other library's threads, still
# spinning when a round begins, cost a few percent of it at most


def operands(T, left, right, left_t, right_t):
    rng = np.random.default_rng(0)
    a = T.tensor(rng.standard_normal(left).astype(np.float32))
    b = T.tensor(rng.standard_normal(right).astype(np.float32))
    return (a.t() if left_t else a), (b.t() if right_t else b)


def seconds_per_product(a, b, repeats: int) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return (time.perf_counter() - start) / repeats


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    threads = fg.get_num_threads()
    print(f"{'product':14s} {'m x k x n':>13s} threads {'ferrograd':>10s} {'torch':>8s}  ratio")
    for name, left, right, left_t, right_t in CASES:
        pairs = [operands(T, left, right, left_t, right_t) for T in (fg, torch)]
        m, k = pairs[0][0].shape
        n = pairs[0][1].shape[1]
        flops = 2 * m * k * n
        for count in sorted({1, threads}):
            times: list[list[float]] = [[], []]
            for T in (fg, torch):
                T.set_num_threads(count)
            repeats = [max(1, int(ROUND_SECONDS / seconds_per_product(a, b, 10))) for a, b in pairs]
            for _ in range(rounds):
                for side, (a, b) in enumerate(pairs):
                    times[side].append(seconds_per_product(a, b, repeats[side]))
            ratio = statistics.median(f / t for f, t in zip(*times))
            rates = [flops / statistics.median(s) / 1e9 for s in times]
            print(
                f"{name:14s} {f'{m}x{k}x{n}':>13s} {count:7d} {rates[0]:10.1f} {rates[1]:8.1f}  {ratio:.2f}",
                flush=True,
            )
    for T in (fg, torch):
        T.set_num_threads(threads)


if __name__ == "__main__":
    main()
