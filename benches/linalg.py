"""ferrograd beside torch on the ``linalg`` decompositions: each op forward, and forward plus backward,
on one 256x256 float32 matrix, timed in alternating rounds in one process; the ratio is the median
of the per-round ratios ferrograd/torch.

usage: python3 benches/linalg.py [torch_threads]      (needs torch)

On a machine shared with other work, pass 1 so torch's thread pool does not wait on busy cores.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
import torch

import ferrograd

N = 256
ROUNDS = 7
REPEATS = 5


def _svd_loss(T, a, b):
    u, s, vh = T.linalg.svd(a, full_matrices=False)
    return (u * u).sum() + s.sum() + (vh * vh).sum()


CASES = {
    "inv": lambda T, a, b: T.linalg.inv(a).sum(),
    "det": lambda T, a, b: T.linalg.det(a),
    "solve": lambda T, a, b: T.linalg.solve(a, b).sum(),
    "cholesky": lambda T, a, b: T.linalg.cholesky(a @ a.T).sum(),
    "eigvalsh": lambda T, a, b: T.linalg.eigvalsh(a + a.T).sum(),
    "svd": _svd_loss,
    "qr": lambda T, a, b: T.linalg.qr(a).R.sum(),
}


def _seconds(fn) -> float:
    start = time.perf_counter()
    for _ in range(REPEATS):
        fn()
    return (time.perf_counter() - start) / REPEATS


def _runs(T, case, a_np, b_np):
    def forward():
        with T.no_grad():
            case(T, T.tensor(a_np), T.tensor(b_np))

    def backward():
        a, b = T.tensor(a_np, requires_grad=True), T.tensor(b_np, requires_grad=True)
        case(T, a, b).backward()

    return forward, backward


def main() -> None:
    if len(sys.argv) > 1:
        torch.set_num_threads(int(sys.argv[1]))
    rng = np.random.default_rng(0)
    a_np = (rng.standard_normal((N, N)) + N**0.5 * np.eye(N)).astype(np.float32)
    b_np = rng.standard_normal((N, N)).astype(np.float32)
    print(
        f"{N}x{N} float32, torch threads {torch.get_num_threads()}; ratio ferrograd/torch (median of rounds)"
    )
    for name, case in CASES.items():
        ours, theirs = _runs(ferrograd, case, a_np, b_np), _runs(torch, case, a_np, b_np)
        for f in (*ours, *theirs):
            f()  # warm up
        times = {k: [] for k in ("fg_f", "t_f", "fg_b", "t_b")}
        for _ in range(ROUNDS):
            times["fg_f"].append(_seconds(ours[0]))
            times["t_f"].append(_seconds(theirs[0]))
            times["fg_b"].append(_seconds(ours[1]))
            times["t_b"].append(_seconds(theirs[1]))
        forward = statistics.median(x / y for x, y in zip(times["fg_f"], times["t_f"]))
        both = statistics.median(x / y for x, y in zip(times["fg_b"], times["t_b"]))
        print(
            f"{name:9s} forward {statistics.median(times['fg_f']) * 1e3:7.2f} ms ({forward:.2f}x)   "
            f"forward+backward {statistics.median(times['fg_b']) * 1e3:7.2f} ms ({both:.2f}x)"
        )


if __name__ == "__main__":
    main()
