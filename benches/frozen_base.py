"""Peak memory of fine-tuning a frozen base: a 20-layer MLP whose parameters
do not require grad, with a trainable head. A forward + backward must keep
no activations of the base, so its peak stays close to the same forward
run under no_grad.

usage: python3 benches/frozen_base.py [MODULE ...]   (default: ferrograd torch)

Each measurement runs in a fresh process. The peak resident set size is
reset after the model is built (/proc/self/clear_refs), so the figures are
the memory the step itself adds on top of the model and its input.
"""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import importlib
T = importlib.import_module({module!r})
nn = T.nn
T.manual_seed(0)
layers = []
for _ in range(20):
    layers += [nn.Linear(1024, 1024), nn.ReLU()]
base = nn.Sequential(*layers)
for p in base.parameters():
    p.requires_grad_(False)
head = nn.Linear(1024, 10)
x = T.randn(512, 1024)


def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key))


def step():
    if {mode!r} == "no_grad":
        with T.no_grad():
            head(base(x)).sum()
    else:
        head(base(x)).sum().backward()
        head.weight.grad = head.bias.grad = None


step()
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = status("VmRSS:")
for _ in range(3):
    step()
print(before, status("VmHWM:"))
"""


def peak(module: str, mode: str) -> tuple[float, float]:
    """(RSS before the steps, peak RSS during them), in MB."""
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(module=module, mode=mode)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return int(out[0]) / 1024, int(out[1]) / 1024


def main() -> None:
    modules = sys.argv[1:] or ["ferrograd", "torch"]
    print(
        f"{'module':10s} {'no_grad peak':>13s} {'frozen peak':>12s} {'ratio':>6s} {'no_grad +MB':>12s} {'frozen +MB':>11s}"
    )
    for module in modules:
        base0, no_grad = peak(module, "no_grad")
        base1, frozen = peak(module, "frozen")
        print(
            f"{module:10s} {no_grad:13.0f} {frozen:12.0f} {frozen / no_grad:6.2f}"
            f" {no_grad - base0:12.1f} {frozen - base1:11.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
