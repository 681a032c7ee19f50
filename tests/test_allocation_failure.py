"""A buffer that cannot be allocated raises PyTorch's out-of-memory RuntimeError instead of
aborting the interpreter. Each case runs in a child process under an address-space limit a few GB
above what it already uses, so an abort fails that case instead of killing pytest."""

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux's"
)

PRELUDE = """
import resource

import ferrograd as torch
import ferrograd.nn.functional as F


def address_space():
    with open("/proc/self/status") as f:
        kib = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
    return kib * 1024


limit = address_space() + (3 << 30)
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
"""

CHECK = """
try:
    run()
except RuntimeError as e:
    expected = f"DefaultCPUAllocator: not enough memory: you tried to allocate {NBYTES} bytes."
    assert str(e) == expected, str(e)
else:
    raise AssertionError("the allocation succeeded")
# The interpreter and the library keep working after the failure.
x = torch.ones(3, requires_grad=True)
(x * torch.arange(3.0)).sum().backward()
assert x.grad.tolist() == [0.0, 1.0, 2.0], x.grad
print("recovered")
"""

# (what runs, the bytes its failing allocation asks for). 2**31 float32 elements are 8 GiB, past
# the limit; the first case is 4 TB, which Linux's overcommit refuses even without one.
CASES = {
    "zeros": ("torch.zeros(100000, 100000, 100)", 4 * 10**12),
    "ones": ("torch.ones(2**31)", 2**33),
    "empty": ("torch.empty(2**30, 4, dtype=torch.float64)", 2**35),
    "full": ("torch.full((2**31,), 1.5)", 2**33),
    "randn": ("torch.randn(2**31)", 2**33),
    # Just below the largest size a tensor may have: no allocator rounding may overflow.
    "complex_near_the_size_limit": ("torch.zeros(2**59 - 1, dtype=torch.complex128)", (2**59 - 1) * 16),
    "arange": ("torch.arange(2**31)", 2**34),
    "new_zeros": ("torch.ones(2, dtype=torch.float64).new_zeros(2**31)", 2**34),
    "expand_contiguous": ("torch.ones(1).expand(2**31).contiguous()", 2**33),
    "broadcast_mul": ("(lambda a: a[:, None] * a[None, :])(torch.ones(2**16))", 2**34),
    "unary_of_expand": ("torch.ones(1).expand(2**31).exp()", 2**33),
    "sum_of_expand": ("torch.ones(1, 1).expand(2**31, 2).sum(1)", 2**33),
    "repeat": ("torch.ones(2).repeat(2**30)", 2**33),
    # A product's output (float32 through gemm, int64 through the loop kernel).
    "matmul": ("torch.ones(2**16, 1) @ torch.ones(1, 2**16)", 2**34),
    "integer_matmul": (
        "torch.ones(2**16, 1, dtype=torch.int64) @ torch.ones(1, 2**16, dtype=torch.int64)",
        2**35,
    ),
    "cat": ("(lambda x: torch.cat([x, x]))(torch.ones(1).expand(2**30))", 2**33),
    "pad": ("F.pad(torch.ones(1).expand(2**31 - 2), (1, 1))", 2**33),
    # The forward result is one element; its gradient is zeros of the 2**31-element input.
    "backward": (
        "(lambda x: x.expand(2**31)[torch.tensor([0])].sum().backward())(torch.zeros(1, requires_grad=True))",
        2**33,
    ),
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("name", list(CASES))
def test_failed_allocation_raises_and_the_process_recovers(name):
    expr, nbytes = CASES[name]
    code = PRELUDE + f"\nNBYTES = {nbytes}\n\ndef run():\n    {expr}\n" + CHECK
    child = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True)
    assert child.returncode == 0, f"exit {child.returncode}\n{child.stdout}\n{child.stderr}"
    assert child.stdout.strip() == "recovered"


def _kernel_refuses_impossible_mappings() -> bool:
    """Linux checks a mapping against the machine's memory unless set to overcommit always (1)."""
    try:
        with open("/proc/sys/vm/overcommit_memory") as f:
            return f.read().strip() != "1"
    except OSError:
        return False


@pytest.mark.timeout(60)
@pytest.mark.skipif(not _kernel_refuses_impossible_mappings(), reason="the kernel overcommits always")
@pytest.mark.parametrize(
    "expr, nbytes",
    [
        ("torch.ones(2**40, 2, 1)", 2**43),
        ("torch.zeros(2**40, dtype=torch.complex64)", 2**43),
        ("torch.randn(4).new_full((2**39,), 2.0)", 2**41),
        # p terms of the multivariate log-gamma, one a row.
        ("torch.ones(3).mvlgamma(2**40)", 2**42),
    ],
)
def test_a_tensor_no_machine_can_hold_fails_without_an_address_space_limit(expr, nbytes):
    # No RLIMIT_AS here: the allocation itself must be refused, not granted
    # as address space and then filled until the kernel kills the process.
    code = "import ferrograd as torch\n" + f"\nNBYTES = {nbytes}\n\ndef run():\n    {expr}\n" + CHECK
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert child.returncode == 0, f"exit {child.returncode}\n{child.stdout}\n{child.stderr}"
    assert child.stdout.strip() == "recovered"


@pytest.mark.timeout(60)
@pytest.mark.skipif(not _kernel_refuses_impossible_mappings(), reason="the kernel overcommits always")
def test_more_sections_than_memory_can_hold_fail_at_once():
    code = (
        "import ferrograd as torch\n"
        "try:\n"
        "    torch.tensor_split(torch.zeros(3, 4), 2**40)\n"
        "except RuntimeError as e:\n"
        "    assert str(e) == 'not enough memory for 1099511627776 sections', str(e)\n"
        "    print('refused')\n"
    )
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert child.returncode == 0, f"exit {child.returncode}\n{child.stdout}\n{child.stderr}"
    assert child.stdout.strip() == "refused"
