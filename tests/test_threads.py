"""Concurrency: many threads driving backward, the pool, reentrant backward,
determinism, fork and checkpointing. Every test that could hang carries a
timeout so a deadlock fails instead of blocking the run."""

import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import ferrograd as fg
from ferrograd.autograd import Function
from ferrograd.utils.checkpoint import checkpoint, checkpoint_sequential

HEAVY = 1 << 16  # elements: enough for a node to count as heavy in the engine


@pytest.fixture
def two_threads():
    """Runs the test with a pool of two workers, restoring the size after."""
    before = fg.get_num_threads()
    fg.set_num_threads(2)
    yield
    fg.set_num_threads(before)


def run_threads(n, target):
    """Runs ``target(i)`` on n threads and re-raises the first exception."""
    errors = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported to the test thread
            errors.append(e)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


class Triple(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return g * 3


# --- the pool -------------------------------------------------------------


def test_set_and_get_num_threads(two_threads):
    fg.set_num_threads(3)
    assert fg.get_num_threads() == 3
    x = fg.ones(HEAVY * 2, requires_grad=True)
    (x * 2).tanh().sum().backward()
    assert x.grad.shape == (HEAVY * 2,)
    fg.set_num_threads(1)
    assert fg.get_num_threads() == 1


@pytest.mark.parametrize("bad", [0, -1])
def test_set_num_threads_rejects_non_positive(bad):
    with pytest.raises(RuntimeError, match="^set_num_threads expects a positive integer$"):
        fg.set_num_threads(bad)


def test_num_threads_from_environment():
    code = "import ferrograd; print(ferrograd.get_num_threads())"
    env = dict(os.environ, FERROGRAD_NUM_THREADS="3")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "3"


@pytest.mark.timeout(60)
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_keeps_working(two_threads):
    x = fg.randn(HEAVY * 4, requires_grad=True)
    (x.tanh() * x).sum().backward()  # the pool is running before the fork
    expected = x.grad.numpy().copy()
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads running
        pid = os.fork()
    if pid == 0:  # the child: parallel kernels and backward must still run
        status = 1
        try:
            y = x.detach().requires_grad_()
            (y.tanh() * y).sum().backward()
            status = 0 if np.array_equal(y.grad.numpy(), expected) else 2
        finally:
            os.write(write_end, bytes([status]))
            os._exit(0)
    os.close(write_end)
    status = os.read(read_end, 1)
    os.close(read_end)
    os.waitpid(pid, 0)
    assert status == b"\x00"


# --- many threads ---------------------------------------------------------


@pytest.mark.timeout(120)
def test_stress_mixed_graphs_shared_leaves(two_threads):
    """Threads x iterations over built-in ops, custom Functions, hooks and a
    shared leaf; integer-valued float64 data keeps every sum exact, so the
    result must be exactly the expected one whatever the interleaving."""
    n_threads, iters = 8, 40
    w = fg.tensor(np.arange(1.0, 7.0).reshape(2, 3), dtype=fg.float64, requires_grad=True)
    big = fg.ones(HEAVY, dtype=fg.float64, requires_grad=True)
    hook_calls = []
    lock = threading.Lock()

    def count(g):
        with lock:
            hook_calls.append(1)
        return g * 2

    def worker(i):
        for k in range(iters):
            x = fg.tensor(np.full((4, 2), float(i + 1)), dtype=fg.float64)
            h = x @ w  # 4x3
            if k % 2:
                h = Triple.apply(h)
            h.register_hook(count)
            loss = h.sum() + (big * 2).sum()
            loss.backward(retain_graph=bool(k % 3 == 0))

    run_threads(n_threads, worker)
    # d(sum(x @ w))/dw = column sums of x = 4 * (i + 1); Triple triples it on odd k;
    # the hook doubles it.
    per_thread = [4 * (i + 1) * 2 * (iters // 2 + 3 * (iters // 2)) for i in range(n_threads)]
    np.testing.assert_array_equal(w.grad.numpy(), np.full((2, 3), float(sum(per_thread))))
    np.testing.assert_array_equal(big.grad.numpy(), np.full(HEAVY, 2.0 * n_threads * iters))
    assert len(hook_calls) == n_threads * iters


@pytest.mark.timeout(60)
@pytest.mark.parametrize("retain", [False, True])
def test_graph_shared_between_threads(retain):
    n = 8
    x = fg.tensor([1.0, 2.0, 3.0], dtype=fg.float64, requires_grad=True)
    y = (x * x).sum()
    barrier = threading.Barrier(n)
    outcomes = []

    def worker(_):
        barrier.wait()
        try:
            y.backward(retain_graph=retain)
            outcomes.append("ok")
        except RuntimeError as e:
            assert "Trying to backward through the graph a second time" in str(e)
            outcomes.append("freed")

    run_threads(n, worker)
    successes = outcomes.count("ok")
    assert successes == n if retain else successes >= 1
    np.testing.assert_array_equal(x.grad.numpy(), successes * 2 * x.detach().numpy())


@pytest.mark.timeout(120)
def test_python_nodes_on_workers_while_other_threads_hold_the_gil(two_threads):
    """Workers run custom Function backwards (they need the GIL) while other
    threads hold the GIL: one spins in Python, one runs mid-size products
    whose parallel kernels wait for the pool. Nothing may deadlock."""
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            sum(range(1000))

    def products():
        a = fg.randn(96, 96)
        while not stop.is_set():
            (a @ a).sum()

    def backward_loop(i):
        for _ in range(20):
            xs = [fg.randn(HEAVY, requires_grad=True) for _ in range(4)]
            total = sum(Triple.apply(x.tanh()).sum() for x in xs)
            total.backward()
            for x in xs:
                expected = 3 * (1 - np.tanh(x.detach().numpy()) ** 2)
                np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5, atol=1e-6)

    helpers = [threading.Thread(target=spin), threading.Thread(target=products)]
    for t in helpers:
        t.start()
    try:
        run_threads(2, backward_loop)
    finally:
        stop.set()
        for t in helpers:
            t.join()


# --- reentrant backward ---------------------------------------------------


class Reenter(Function):
    """Backward differentiates a fresh copy of itself, ``depth`` levels deep."""

    @staticmethod
    def forward(ctx, x, depth):
        ctx.save_for_backward(x)
        ctx.depth = depth
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        if ctx.depth == 0:
            return g * 2, None
        with fg.enable_grad():
            inner = x.detach().requires_grad_()
            (gx,) = fg.autograd.grad(Reenter.apply(inner, ctx.depth - 1).sum(), inner)
        return g * gx, None


@pytest.mark.timeout(60)
def test_reentrant_backward_100_deep():
    x = fg.tensor([1.0, -2.0], dtype=fg.float64, requires_grad=True)
    Reenter.apply(x, 100).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


@pytest.mark.timeout(60)
def test_reentrant_backward_from_many_threads(two_threads):
    def worker(i):
        x = fg.full((HEAVY,), float(i), requires_grad=True)
        y = fg.full((HEAVY,), float(i), requires_grad=True)
        # two heavy branches: the engine runs them on the pool's workers
        (Reenter.apply(x, 30).sum() + Reenter.apply(y, 30).sum()).backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.full(HEAVY, 2.0))
        np.testing.assert_array_equal(y.grad.numpy(), np.full(HEAVY, 2.0))

    run_threads(4, worker)


# --- determinism ----------------------------------------------------------


def fan_in_gradient():
    """A leaf feeding many heavy branches: its buffer sums many gradients."""
    fg.manual_seed(0)
    x = fg.randn(HEAVY, requires_grad=True)
    ws = [fg.randn(HEAVY) for _ in range(8)]
    sum(((x * w).tanh() * w).sum() for w in ws).backward()
    return x.grad.numpy().tobytes()


@pytest.mark.timeout(120)
def test_deterministic_mode_is_bitwise_reproducible():
    before = fg.get_num_threads()
    fg.use_deterministic_algorithms(True)
    try:
        assert fg.are_deterministic_algorithms_enabled()
        fg.set_num_threads(1)
        reference = fan_in_gradient()
        fg.set_num_threads(2)
        for _ in range(10):
            assert fan_in_gradient() == reference
    finally:
        fg.use_deterministic_algorithms(False)
        fg.set_num_threads(before)
    assert not fg.are_deterministic_algorithms_enabled()


def test_deterministic_flags():
    fg.use_deterministic_algorithms(True, warn_only=True)
    try:
        assert fg.is_deterministic_algorithms_warn_only_enabled()
    finally:
        fg.use_deterministic_algorithms(False)
    assert not fg.is_deterministic_algorithms_warn_only_enabled()


# --- checkpoint -----------------------------------------------------------


def block(x, w):
    return (x @ w).tanh() * 2


def test_checkpoint_gradients_match_plain_backward():
    fg.manual_seed(1)
    x = fg.randn(5, 4, dtype=fg.float64, requires_grad=True)
    w = fg.randn(4, 4, dtype=fg.float64, requires_grad=True)
    out = checkpoint(block, checkpoint(block, x, w, use_reentrant=True), w, use_reentrant=True)
    assert out.grad_fn.name() == "CheckpointFunctionBackward"
    out.sum().backward()
    gx, gw = x.grad.numpy(), w.grad.numpy()
    x.grad = w.grad = None
    block(block(x, w), w).sum().backward()
    np.testing.assert_allclose(gx, x.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gw, w.grad.numpy(), rtol=1e-12)


def test_checkpoint_replays_random_numbers():
    x = fg.ones(1000, dtype=fg.float64, requires_grad=True)

    def noisy(t):
        return t * fg.rand(1000, dtype=fg.float64)

    fg.manual_seed(3)
    checkpoint(noisy, x, use_reentrant=True).sum().backward()
    fg.manual_seed(3)
    np.testing.assert_array_equal(x.grad.numpy(), fg.rand(1000, dtype=fg.float64).numpy())


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_sequential_matches_plain(use_reentrant):
    fg.manual_seed(2)
    layers = [fg.nn.Linear(6, 6).double() for _ in range(6)]
    x = fg.randn(3, 6, dtype=fg.float64, requires_grad=True)
    checkpoint_sequential(layers, 3, x, use_reentrant=use_reentrant).sum().backward()
    gx = x.grad.numpy()
    x.grad = None
    h = x
    for layer in layers:
        h = layer(h)
    h.sum().backward()
    np.testing.assert_allclose(gx, x.grad.numpy(), rtol=1e-12)


def test_reentrant_checkpoint_rejects_grad_and_inputs():
    x = fg.randn(3, requires_grad=True)
    message = "When use_reentrant=True, ferrograd.utils.checkpoint is incompatible with .grad()"
    with pytest.raises(RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        fg.autograd.grad(checkpoint(fg.sin, x, use_reentrant=True).sum(), x)
    with pytest.raises(RuntimeError, match="incompatible with .grad"):
        checkpoint(fg.sin, x, use_reentrant=True).sum().backward(inputs=[x])


def test_checkpoint_warnings_and_errors():
    x = fg.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(fg.sin, x)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(fg.sin, fg.randn(3), use_reentrant=True)
    assert not y.requires_grad
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(fg.sin, x, use_reentrant=True, scale=2)


PEAK_RSS_SCRIPT = """
import sys
import ferrograd as fg
from ferrograd.utils.checkpoint import checkpoint
def peak_kib():
    # VmHWM belongs to this process's own memory map, so unlike ru_maxrss
    # it does not start from the size of the parent that forked it.
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
x = fg.randn(1 << 21, requires_grad=True)
def segment(h):
    for _ in range(8):
        h = (h * 1.01).tanh()
    return h
base = peak_kib()
h = x
for _ in range(6):
    h = checkpoint(segment, h, use_reentrant=sys.argv[2] == "1") if sys.argv[1] == "1" else segment(h)
h.sum().backward()
print(peak_kib() - base)
"""


@pytest.mark.timeout(120)
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status")
@pytest.mark.parametrize("reentrant", ["1", "0"])
def test_checkpoint_saves_activation_memory(reentrant):
    def peak_growth(use_checkpoint):
        out = subprocess.run(
            [sys.executable, "-c", PEAK_RSS_SCRIPT, use_checkpoint, reentrant],
            capture_output=True,
            text=True,
            check=True,
        )
        return int(out.stdout)

    plain, checkpointed = peak_growth("0"), peak_growth("1")
    # 48 activations of 8 MiB each without checkpointing; about 6 segment
    # inputs plus one segment's activations with it.
    assert checkpointed < 0.5 * plain, (plain, checkpointed)
