"""Random programs mixing out-of-place ops, views and in-place ops.

Each program either raises the error PyTorch raises, or gives the gradients
of the same program written out of place. The out-of-place version keeps,
for every storage, its current value as a tensor computed without in-place
ops; a view reads its elements through a constant one-hot matrix and an
in-place write through a view replaces them with ``where``. Where torch is
importable the program also runs under torch: an error of ours must be
torch's error, and gradients must be torch's whenever torch computes them.

``FERROGRAD_PROGRAM_EXAMPLES`` sets the number of examples (thousands
locally; CI keeps the default).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import has_torch

if has_torch:
    import torch

EXAMPLES = int(os.environ.get("FERROGRAD_PROGRAM_EXAMPLES", "150"))

# ---------------------------------------------------------------------------
# Programs: a list of steps over a pool of tensors. Entry 0 is the leaf x,
# entry 1 is x * 1 (a tensor with history).

VIEWS = [
    "slice",
    "select",
    "transpose",
    "unsqueeze",
    "narrow",
    "flatten",
    "t",
    "permute",
    "squeeze",
    "diagonal",
]
INPLACE = [
    "mul_w",
    "add_w",
    "sub_w",
    "mul_c",
    "add_c",
    "div_c",
    "sin_",
    "cos_",
    "exp_",
    "tanh_",
    "sigmoid_",
    "neg_",
    "zero_",
    "fill_",
    "clamp_",
    "relu_",
    "masked_fill_",
    "copy_w",
    "iadd_w",
    "imul_entry",
    "setitem_slice",
    "setitem_index",
    "setitem_mask",
    "pow_c",
    "index_add_",
    "no_grad_mul_c",
]
OUT_OF_PLACE = ["sin", "mul_w", "exp", "square", "add_entry"]


@st.composite
def programs(draw):
    steps = []
    n = 2  # pool size
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["view", "view", "inplace", "inplace", "inplace", "op"]))
        # The leaf (entry 0) only now and then: writes to it always fail.
        src = 0 if draw(st.integers(0, 9)) == 0 else draw(st.integers(1, n - 1))
        if kind == "view":
            steps.append(("view", src, draw(st.sampled_from(VIEWS)), draw(st.integers(0, 10**6))))
            n += 1
        elif kind == "op":
            steps.append(("op", src, draw(st.sampled_from(OUT_OF_PLACE)), draw(st.integers(0, n - 1))))
            n += 1
        else:
            steps.append(("inplace", src, draw(st.sampled_from(INPLACE)), draw(st.integers(0, n - 1))))
    return steps


# ---------------------------------------------------------------------------
# View ops on ferrograd, torch and NumPy index arrays (same semantics). A
# view whose parameters do not fit the tensor's shape is replaced by an
# identity-like view (`unsqueeze(0)`), decided from the shape alone so every
# run takes the same decision.


def view_plan(shape, kind, seed):
    rng = np.random.default_rng(seed)
    nd = len(shape)
    if kind in ("slice", "select", "narrow", "transpose", "permute") and nd == 0:
        return ("unsqueeze", 0)
    if kind == "slice":
        d = int(rng.integers(nd))
        size = shape[d]
        start = int(rng.integers(0, size + 1))
        stop = int(rng.integers(start, size + 1))
        step = int(rng.integers(1, 3))
        return ("slice", d, start, stop, step)
    if kind == "select":
        d = int(rng.integers(nd))
        if shape[d] == 0:
            return ("unsqueeze", 0)
        return ("select", d, int(rng.integers(-shape[d], shape[d])))
    if kind == "narrow":
        d = int(rng.integers(nd))
        start = int(rng.integers(0, shape[d] + 1))
        return ("narrow", d, start, int(rng.integers(0, shape[d] - start + 1)))
    if kind == "transpose":
        return ("transpose", int(rng.integers(nd)), int(rng.integers(nd)))
    if kind == "unsqueeze":
        return ("unsqueeze", int(rng.integers(-nd - 1, nd + 1)))
    if kind == "t":
        return ("t",) if nd <= 2 else ("transpose", 0, 1)
    if kind == "permute":
        return ("permute", tuple(int(d) for d in rng.permutation(nd)))
    if kind == "squeeze":
        return ("squeeze",)
    if kind == "diagonal":
        if nd != 2:
            return ("unsqueeze", 0)
        return ("diagonal", int(rng.integers(-shape[0], shape[1] + 1)))
    return ("flatten",)


def apply_view(t, plan, lib):
    kind = plan[0]
    if kind == "slice":
        _, d, start, stop, step = plan
        key = (slice(None),) * d + (slice(start, stop, step),)
        return t[key]
    if kind == "select":
        _, d, i = plan
        return t[(slice(None),) * d + (i,)]
    if kind == "narrow":
        _, d, start, length = plan
        key = (slice(None),) * d + (slice(start, start + length),)
        return t[key] if lib == "np" else t.narrow(d, start, length)
    if kind == "transpose":
        _, a, b = plan
        if lib == "np":
            return np.swapaxes(t, a, b)
        return t.transpose(a, b)
    if kind == "unsqueeze":
        return np.expand_dims(t, plan[1]) if lib == "np" else t.unsqueeze(plan[1])
    if kind == "t":
        return t.T if lib == "np" else t.t()
    if kind == "permute":
        return np.transpose(t, plan[1]) if lib == "np" else t.permute(*plan[1])
    if kind == "squeeze":
        return np.squeeze(t) if lib == "np" else t.squeeze()
    if kind == "diagonal":
        return np.diagonal(t, plan[1]) if lib == "np" else t.diagonal(plan[1])
    # flatten: whether it is a view is decided by `flatten_is_view`.
    return t.reshape(-1)


def flatten_is_view(idx: np.ndarray) -> bool:
    """Whether `reshape(-1)` of a tensor whose elements sit at `idx` is
    taken as a view: when they are consecutive (then it is one in both
    libraries). Other cases are made copies explicitly with `clone()`."""
    flat = idx.reshape(-1)
    return flat.size <= 1 or bool(np.all(np.diff(flat) == 1))


# ---------------------------------------------------------------------------
# Running a program with ferrograd or torch (in place, as written).


def inplace_step(T, t, name, other, w, mask_src):
    if name == "mul_w":
        t.mul_(w)
    elif name == "add_w":
        t.add_(w, alpha=0.5)
    elif name == "sub_w":
        t.sub_(w)
    elif name == "mul_c":
        t.mul_(1.5)
    elif name == "add_c":
        t.add_(0.25)
    elif name == "div_c":
        t.div_(2.0)
    elif name == "pow_c":
        t.pow_(2)
    elif name in ("sin_", "cos_", "exp_", "tanh_", "sigmoid_", "neg_", "zero_", "relu_"):
        getattr(t, name)()
    elif name == "fill_":
        t.fill_(0.5)
    elif name == "clamp_":
        t.clamp_(-0.5, 0.75)
    elif name == "masked_fill_":
        t.masked_fill_(mask_src > 0, 0.3)
    elif name == "copy_w":
        t.copy_(w)
    elif name == "iadd_w":
        t += w
    elif name == "imul_entry":
        if tuple(other.shape) == tuple(t.shape):
            t *= other
        else:
            t *= 2.0
    elif name == "setitem_slice":
        if t.dim() == 0:
            t[...] = w
        else:
            t[: max(1, t.shape[0] // 2)] = w * 2
    elif name == "setitem_index":
        if t.dim() == 0 or t.shape[0] == 0:
            t[...] = w
        else:
            # Distinct rows: with a repeated index torch counts each copy of w.
            t[T.tensor(sorted({0, t.shape[0] - 1}))] = w
    elif name == "setitem_mask":
        t[mask_src > 0] = w
    elif name == "index_add_":
        if t.dim() == 0 or t.shape[0] == 0:
            t.add_(w)
        else:
            src = w * T.ones(2, *t.shape[1:], dtype=T.float64)
            t.index_add_(0, T.tensor([0, 0]), src, alpha=-0.5)
    elif name == "no_grad_mul_c":
        with T.no_grad():
            t.mul_(1.5)
    else:  # pragma: no cover - the strategy only draws known names
        raise AssertionError(name)


def functional_step(t, name, other, w, mask_src):
    """What an in-place step computes, with out-of-place ops only."""
    rows = np.zeros(tuple(t.shape), dtype=bool)
    if name == "mul_w":
        return t * w
    if name == "add_w":
        return t + 0.5 * w
    if name == "sub_w":
        return t - w
    if name == "mul_c":
        return t * 1.5
    if name == "add_c":
        return t + 0.25
    if name == "div_c":
        return t / 2.0
    if name == "pow_c":
        return t.pow(2)
    if name in ("sin_", "cos_", "exp_", "tanh_", "sigmoid_", "neg_", "relu_"):
        return getattr(t, name[:-1])()
    if name == "zero_":
        return t * 0.0
    if name == "fill_":
        return t * 0.0 + 0.5
    if name == "clamp_":
        return t.clamp(-0.5, 0.75)
    if name == "masked_fill_":
        return fg.where(mask_src > 0, fg.tensor(0.3, dtype=fg.float64), t)
    if name == "copy_w":
        return t * 0.0 + w
    if name == "iadd_w":
        return t + w
    if name == "imul_entry":
        return t * other if tuple(other.shape) == tuple(t.shape) else t * 2.0
    if name == "setitem_slice":
        if t.dim() == 0:
            return t * 0.0 + w
        rows[: max(1, t.shape[0] // 2)] = True
        return fg.where(fg.tensor(rows), w * 2, t)
    if name == "setitem_index":
        if t.dim() == 0 or t.shape[0] == 0:
            return t * 0.0 + w
        rows[[0, t.shape[0] - 1]] = True
        return fg.where(fg.tensor(rows), w, t)
    if name == "setitem_mask":
        return fg.where(mask_src > 0, w, t)
    if name == "index_add_":
        if t.dim() == 0 or t.shape[0] == 0:
            return t + w
        rows[0] = True
        return t + fg.where(fg.tensor(rows), w * -1.0, fg.tensor(0.0, dtype=fg.float64))
    if name == "no_grad_mul_c":
        # New values, no gradient through the change.
        return t + (t * 1.5 - t).detach()
    raise AssertionError(name)  # pragma: no cover


def out_of_place(t, name, other, w):
    if name == "sin":
        return t.sin()
    if name == "mul_w":
        return t * w
    if name == "exp":
        return t.exp()
    if name == "square":
        return t * t
    # add_entry
    if tuple(other.shape) == tuple(t.shape):
        return t + other
    return t + 1.0


def run_program(T, steps, x0, w0, plans):
    """Runs the program as written; returns (grads of x and w, error)."""
    x = T.tensor(x0, requires_grad=True)
    w = T.tensor(w0, requires_grad=True)
    pool = [x, x * 1]
    try:
        for i, (kind, src, name, arg) in enumerate(steps):
            t = pool[src]
            if kind == "view":
                plan = plans[i]
                v = apply_view(t, plan, "T")
                if plan[0] == "flatten" and not plans[("flat", i)]:
                    v = v.clone()  # what reshape gives when it must copy
                pool.append(v)
            elif kind == "op":
                # torch keeps a transposed input's strides in the result;
                # contiguous inputs give contiguous results in both.
                pool.append(out_of_place(t.contiguous(), name, pool[arg].contiguous(), w))
            else:
                mask_src = (
                    pool[arg].detach().clone()
                    if tuple(pool[arg].shape) == tuple(t.shape)
                    else t.detach().clone()
                )
                inplace_step(T, t, name, pool[arg], w, mask_src)
        loss = sum((p * T.tensor(coefficients(p.shape))).sum() for p in pool)
        loss.backward()
    except RuntimeError as e:
        return None, str(e)
    return (
        x.grad.numpy().copy() if x.grad is not None else np.zeros_like(x0),
        w.grad.numpy().copy() if w.grad is not None else np.zeros_like(w0),
    ), None


def coefficients(shape):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float64).reshape(shape) % 5 - 2) / 3.0


# ---------------------------------------------------------------------------
# The same program out of place, with ferrograd's out-of-place ops.


def reference(steps, x0, w0, plans):
    x = fg.tensor(x0, requires_grad=True)
    w = fg.tensor(w0, requires_grad=True)
    values = {0: x, 1: x * 1}  # storage id -> current value
    # entry -> (storage id, positions in the storage's flat value)
    entries = [(0, np.arange(x0.size).reshape(x0.shape)), (1, np.arange(x0.size).reshape(x0.shape))]
    sizes = {0: x0.size, 1: x0.size}

    def onehot(storage, idx):
        p = np.zeros((sizes[storage], idx.size))
        p[idx.reshape(-1), np.arange(idx.size)] = 1.0
        return fg.tensor(p)

    def read(e):
        s, idx = entries[e]
        flat = values[s].reshape(-1)
        return (flat.unsqueeze(0) @ onehot(s, idx)).reshape(idx.shape)

    def write(e, new):
        s, idx = entries[e]
        p = onehot(s, idx)
        covered = fg.tensor(p.numpy().sum(1) > 0)
        flat = values[s].reshape(-1)
        scattered = (p @ new.reshape(-1).unsqueeze(1)).reshape(-1)
        values[s] = fg.where(covered, scattered, flat).reshape(values[s].shape)

    def new_storage(value):
        s = len(values)
        values[s] = value
        sizes[s] = int(np.prod(value.shape))
        entries.append((s, np.arange(sizes[s]).reshape(tuple(value.shape))))

    for i, (kind, src, name, arg) in enumerate(steps):
        if kind == "view":
            s, idx = entries[src]
            plan = plans[i]
            vidx = apply_view(idx, plan, "np")
            if plan[0] == "flatten" and not plans[("flat", i)]:
                new_storage(read(src).reshape(-1))
            else:
                entries.append((s, np.array(vidx)))
        elif kind == "op":
            new_storage(out_of_place(read(src), name, read(arg), w))
        else:
            t = read(src)
            other = read(arg)
            mask_src = (other if tuple(other.shape) == tuple(t.shape) else t).detach()
            write(src, functional_step(t, name, other, w, mask_src))
    loss = sum((read(e) * fg.tensor(coefficients(tuple(read(e).shape)))).sum() for e in range(len(entries)))
    loss.backward()
    return x.grad.numpy(), w.grad.numpy() if w.grad is not None else np.zeros_like(w0)


def make_plans(steps, shape):
    """View parameters per step, from the shapes NumPy index arrays take."""
    plans = {}
    idxs = [np.arange(int(np.prod(shape))).reshape(shape)] * 2
    for i, (kind, src, name, arg) in enumerate(steps):
        if kind == "view":
            plan = view_plan(idxs[src].shape, name, arg)
            plans[i] = plan
            v = apply_view(idxs[src], plan, "np")
            if plan[0] == "flatten":
                plans[("flat", i)] = flatten_is_view(idxs[src])
                if not plans[("flat", i)]:
                    v = np.arange(v.size)
            idxs.append(np.array(v))
        elif kind == "op":
            a = idxs[src]
            idxs.append(np.arange(a.size).reshape(a.shape))
    return plans


def normalize(message: str) -> str:
    """The message without the package name and the hint, which differ."""
    message = message.replace("ferrograd", "torch").split(" Hint:")[0]
    message = message.replace("torch::autograd::", "")
    # Which saved tensor is reported first depends on the order the nodes
    # run in; that a saved tensor was modified is what must agree.
    return message.split(": [")[0]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    steps=programs(),
    shape=st.sampled_from([(3, 4), (4,), (2, 3, 2), (5, 1)]),
    seed=st.integers(0, 2**16),
)
def test_inplace_programs_give_out_of_place_gradients_or_torch_errors(steps, shape, seed):
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-1, 1, size=shape)
    w0 = np.array(rng.uniform(0.5, 1.5))
    plans = make_plans(steps, shape)
    grads, error = run_program(fg, steps, x0, w0, plans)
    if has_torch:
        tgrads, terror = run_program(torch, steps, x0, w0, plans)
    if error is not None:
        if has_torch:
            assert terror is not None, f"ferrograd raised, torch did not: {error}"
            assert normalize(error) == normalize(terror)
        else:
            assert "in-place" in error or "inplace" in error
        return
    gx, gw = reference(steps, x0, w0, plans)
    # Chains of exp can overflow; such programs say nothing about autograd.
    assume(np.all(np.isfinite(gx)) and np.all(np.isfinite(gw)))
    np.testing.assert_allclose(grads[0], gx, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(grads[1], gw, rtol=1e-9, atol=1e-9)
    if has_torch and terror is None:
        np.testing.assert_allclose(grads[0], tgrads[0], rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(grads[1], tgrads[1], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(
    "steps",
    [
        # A view of a view of a tensor with history, written in place.
        [("view", 1, "slice", 3), ("view", 2, "t", 0), ("inplace", 3, "mul_w", 0)],
        # Writes through the base after views were taken, then through a view.
        [("view", 1, "select", 1), ("inplace", 1, "sin_", 0), ("inplace", 2, "add_w", 0)],
        # Leaf and view-of-leaf errors.
        [("inplace", 0, "add_c", 0)],
        [("view", 0, "slice", 1), ("inplace", 2, "add_c", 0)],
        # A saved tensor modified after it was saved.
        [("op", 1, "sin", 0), ("view", 1, "narrow", 5), ("inplace", 3, "mul_c", 0)],
    ],
)
def test_known_programs(steps):
    shape = (3, 4)
    x0 = np.linspace(-1, 1, 12).reshape(shape)
    w0 = np.array(0.7)
    plans = make_plans(steps, shape)
    grads, error = run_program(fg, steps, x0, w0, plans)
    if has_torch:
        _, terror = run_program(torch, steps, x0, w0, plans)
        assert (error is None) == (terror is None)
        if error is not None:
            assert normalize(error) == normalize(terror)
    if error is None:
        gx, gw = reference(steps, x0, w0, plans)
        np.testing.assert_allclose(grads[0], gx, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(grads[1], gw, rtol=1e-9, atol=1e-9)
