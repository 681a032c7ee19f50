"""Forward + backward time of many single ops, ferrograd's divided by torch's, to find the ops
that are much slower than the rest (a ratio above 1.5 is marked).

    python3 benches/op_scan.py [N] [OP ...]

N (default 256) sets the matrix side of the 2-D cases; the image cases use an 8x16x32x32 batch.
Needs torch; each op runs on both libraries in the same process, best of five rounds.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

import ferrograd as fg


def best_time(step, budget: float = 0.15) -> float:
    step()
    start = time.perf_counter()
    step()
    once = time.perf_counter() - start
    repeats = max(1, int(budget / max(once, 1e-7)))
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeats):
            step()
        rounds.append((time.perf_counter() - start) / repeats)
    return min(rounds)


def assign_columns(a, b):
    c = a * 1
    c[:, 1:5] = b[:, :4]
    return c


side = int(sys.argv[1]) if len(sys.argv) > 1 else 256
only = set(sys.argv[2:])
rng = np.random.default_rng(0)
A = rng.standard_normal((side, side)).astype(np.float32)
B = rng.standard_normal((side, side)).astype(np.float32)
index = rng.integers(0, side, side)
image = rng.standard_normal((8, 16, 32, 32)).astype(np.float32)
kernel = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)

MATRIX_CASES = {
    "exp": lambda T, a, b: a.exp(),
    "log(abs)": lambda T, a, b: (a.abs() + 1).log(),
    "sigmoid": lambda T, a, b: a.sigmoid(),
    "tanh": lambda T, a, b: a.tanh(),
    "relu": lambda T, a, b: a.relu(),
    "gelu": lambda T, a, b: T.nn.functional.gelu(a),
    "silu": lambda T, a, b: T.nn.functional.silu(a),
    "softplus": lambda T, a, b: T.nn.functional.softplus(a),
    "asinh": lambda T, a, b: a.asinh(),
    "erfc": lambda T, a, b: a.erfc(),
    "pow3": lambda T, a, b: a**3,
    "sqrt": lambda T, a, b: (a * a + 1).sqrt(),
    "clamp": lambda T, a, b: a.clamp(-0.5, 0.5),
    "add_row": lambda T, a, b: a + b[0],
    "mul_col": lambda T, a, b: a * b[:, :1],
    "div": lambda T, a, b: a / (b.abs() + 1),
    "where": lambda T, a, b: T.where(a > 0, a, b),
    "maximum": lambda T, a, b: T.maximum(a, b),
    "sum0": lambda T, a, b: a.sum(0),
    "sum1": lambda T, a, b: a.sum(1),
    "mean": lambda T, a, b: a.mean(),
    "prod1": lambda T, a, b: (a * 0.01 + 1).prod(1),
    "var1": lambda T, a, b: a.var(1),
    "std0": lambda T, a, b: a.std(0),
    "max1": lambda T, a, b: a.max(1).values,
    "amax0": lambda T, a, b: a.amax(0),
    "norm": lambda T, a, b: a.norm(),
    "logsumexp1": lambda T, a, b: a.logsumexp(1),
    "softmax1": lambda T, a, b: a.softmax(1),
    "softmax0": lambda T, a, b: a.softmax(0),
    "log_softmax1": lambda T, a, b: a.log_softmax(1),
    "layer_norm": lambda T, a, b: T.nn.functional.layer_norm(a, (a.shape[1],)),
    "cumsum1": lambda T, a, b: a.cumsum(1),
    "cumprod1": lambda T, a, b: (a * 0.01 + 1).cumprod(1),
    "t.contig": lambda T, a, b: a.t().contiguous(),
    "permute3": lambda T, a, b: a.reshape(16, -1, 16).permute(2, 0, 1).contiguous(),
    "cat0": lambda T, a, b: T.cat([a, b], 0),
    "cat1": lambda T, a, b: T.cat([a, b], 1),
    "stack": lambda T, a, b: T.stack([a, b], 0),
    "expand_mul": lambda T, a, b: a[:, None, :8] * b[None, :, :8],
    "index_rows": lambda T, a, b: a[T.tensor(index)],
    "index_select": lambda T, a, b: a.index_select(1, T.tensor(index)),
    "gather1": lambda T, a, b: a.gather(1, T.tensor(np.tile(index[:8], (a.shape[0], 1)))),
    "masked_fill": lambda T, a, b: a.masked_fill(b > 0, 0.0),
    "setitem_slice": lambda T, a, b: assign_columns(a, b),
    "mse": lambda T, a, b: T.nn.functional.mse_loss(a, b),
    "cross_entropy": lambda T, a, b: T.nn.functional.cross_entropy(a, T.tensor(index)),
    "matmul": lambda T, a, b: a @ b,
    "bmm": lambda T, a, b: a.reshape(16, -1, 16) @ b.reshape(16, 16, -1),
    "embedding": lambda T, a, b: T.nn.functional.embedding(T.tensor(index), a),
    "flip": lambda T, a, b: a.flip(0),
    "roll": lambda T, a, b: a.roll(3, 1),
    "sort": lambda T, a, b: a.sort(1).values,
    "topk": lambda T, a, b: a.topk(5, 1).values,
    "tril": lambda T, a, b: a.tril(),
    "repeat": lambda T, a, b: a[:64].repeat(2, 2),
    "pad": lambda T, a, b: T.nn.functional.pad(a, (1, 1, 2, 2)),
    "unfold": lambda T, a, b: a.unfold(1, 4, 2),
    "diagonal": lambda T, a, b: a.reshape(16, 16, -1).diagonal(0, 0, 1),
    "einsum": lambda T, a, b: T.einsum("ij,jk->ik", a, b),
}
IMAGE_CASES = {
    "conv2d": lambda T, x, w: T.nn.functional.conv2d(x, w, padding=1),
    "conv_transpose2d": lambda T, x, w: T.nn.functional.conv_transpose2d(x, w, padding=1),
    "max_pool2d": lambda T, x, w: T.nn.functional.max_pool2d(x, 2),
    "avg_pool2d": lambda T, x, w: T.nn.functional.avg_pool2d(x, 2),
    "adaptive_avg": lambda T, x, w: T.nn.functional.adaptive_avg_pool2d(x, 1),
    "batch_norm": lambda T, x, w: T.nn.functional.batch_norm(x, None, None, training=True),
    "group_norm": lambda T, x, w: T.nn.functional.group_norm(x, 4),
    "group_norm_affine": lambda T, x, w: T.nn.functional.group_norm(
        x, 4, w.flatten()[:16], w.flatten()[16:32]
    ),
    "nearest2x": lambda T, x, w: T.nn.functional.interpolate(x, scale_factor=2),
    "bilinear2x": lambda T, x, w: T.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"),
    "pad_reflect": lambda T, x, w: T.nn.functional.pad(x, (2, 2, 2, 2), mode="reflect"),
}


def scan(cases, inputs) -> None:
    for name, op in cases.items():
        if only and name not in only:
            continue
        times = []
        for T in (fg, torch):
            xs = [T.tensor(x, requires_grad=x.dtype == np.float32) for x in inputs]

            def step(T=T, xs=xs, op=op):
                out = op(T, *xs)
                out.sum().backward()
                for x in xs:
                    x.grad = None

            times.append(best_time(step))
        ratio = times[0] / times[1]
        mark = "<<<" if ratio > 1.5 else ""
        print(
            f"{name:16s} {ratio:6.2f} {mark:3s} ferrograd {times[0] * 1e6:9.1f} us  torch {times[1] * 1e6:9.1f} us"
        )


scan(MATRIX_CASES, [A, B])
scan(IMAGE_CASES, [image, kernel])
