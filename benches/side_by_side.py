"""ferrograd beside torch: time per step (ratio from interleaved rounds in one
process) and peak memory (each workload alone in a fresh process): the peak
resident set during three steps, and how much of it the steps added on top
of the workload's inputs (torch's library alone is a few hundred MB more).

usage: python3 benches/side_by_side.py [WORKLOAD ...]

The workloads are the shared ones (../shared/bench/workloads.py), written
once against a torch-like module.
"""

from __future__ import annotations

import os
import pathlib
import statistics
import subprocess
import sys
import time

SHARED = pathlib.Path(__file__).resolve().parents[2] / "shared" / "bench"
sys.path.insert(0, str(SHARED))

from workloads import WORKLOADS  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))
ROUND_TIME = 0.2

PEAK_SCRIPT = """
import importlib, sys
sys.path.insert(0, {shared!r})
from workloads import WORKLOADS
T = importlib.import_module({module!r})
T.manual_seed(0)
step, _ = WORKLOADS[{name!r}](T)


def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key))


with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # restart the peak (VmHWM) from here: setup is not counted
before = status("VmRSS:")
for _ in range(3):
    step()
print(before, status("VmHWM:"))
"""


def timed(step, inner: int) -> float:
    t0 = time.perf_counter()
    for _ in range(inner):
        step()
    return (time.perf_counter() - t0) / inner


def peak_mb(module: str, name: str) -> tuple[float, float]:
    """RSS after setup and peak RSS during three steps, in MB."""
    code = PEAK_SCRIPT.format(shared=str(SHARED), module=module, name=name)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    return int(out[0]) / 1024, int(out[1]) / 1024


def main() -> None:
    import importlib

    names = sys.argv[1:] or list(WORKLOADS)
    mods = [importlib.import_module("ferrograd"), importlib.import_module("torch")]
    print(
        f"{'workload':16s} {'ratio':>7s} {'rounds':>15s} {'fg peak MB':>11s} {'torch peak MB':>14s}"
        f" {'fg step +MB':>12s} {'torch step +MB':>15s}"
    )
    for name in names:
        steps = []
        for T in mods:
            T.manual_seed(0)
            step, _ = WORKLOADS[name](T)
            step()
            t0 = time.perf_counter()
            step()
            inner = max(1, int(ROUND_TIME / max(time.perf_counter() - t0, 1e-9)))
            steps.append((step, inner))
        ratios = []
        for _ in range(ROUNDS):
            a, b = (timed(s, n) for s, n in steps)
            ratios.append(a / b)
        fg_before, fg_peak = peak_mb("ferrograd", name)
        torch_before, torch_peak = peak_mb("torch", name)
        print(
            f"{name:16s} {statistics.median(ratios):7.3f} {min(ratios):7.3f}..{max(ratios):<7.3f}"
            f" {fg_peak:11.0f} {torch_peak:14.0f} {fg_peak - fg_before:12.0f} {torch_peak - torch_before:15.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
