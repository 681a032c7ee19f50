"""utils.benchmark: Timer's measurements (their statistics follow from their raw times, blocks
run for the time asked), their printed summaries, and Compare's table."""

import numpy as np
import pytest

import ferrograd as fg
from ferrograd.utils import benchmark


def test_timeit_and_measurement_statistics():
    x = fg.randn(64)
    timer = benchmark.Timer("x * 2", globals={"x": x}, label="mul", sub_label="64", description="float32")
    m = timer.timeit(200)
    assert m.number_per_run == 200 and len(m.raw_times) == 1 and m.times == [m.raw_times[0] / 200]
    assert m.median == m.mean == m.times[0] > 0 and m.iqr == 0.0
    assert (m.title, m.label, m.sub_label, m.description) == ("mul: 64", "mul", "64", "float32")
    lines = repr(m).splitlines()
    assert lines[1:3] == ["mul: 64", "float32"] and lines[4] == "  1 measurement, 200 runs , 1 thread"


def test_blocked_and_adaptive_autorange():
    blocks = []
    m = benchmark.Timer("sum(range(50))").blocked_autorange(
        callback=lambda n, t: blocks.append((n, t)), min_run_time=0.02
    )
    assert len(m.raw_times) == len(blocks) >= 1 and sum(m.raw_times) >= 0.02
    assert all(n == m.number_per_run for n, _ in blocks)
    np.testing.assert_allclose(m.median, np.median(np.array(m.raw_times) / m.number_per_run))
    q1, q3 = np.percentile(m.times, [25, 75])
    np.testing.assert_allclose(m.iqr, q3 - q1)
    if len(m.times) > 1:
        assert "Median:" in repr(m) and "measurements," in repr(m)
    adaptive = benchmark.Timer("torch.ones(4).sum()").adaptive_autorange(min_run_time=0.01, max_run_time=0.3)
    assert len(adaptive.times) >= 1 and sum(adaptive.raw_times) < 2.0  # stops near max_run_time


def test_setup_globals_and_errors():
    m = benchmark.Timer("y.sum()", setup="y = torch.ones(8)").timeit(10)  # `torch` names ferrograd
    assert m.median > 0
    with pytest.raises(ValueError, match="Python statements only"):
        benchmark.Timer("x", language="c++")
    for call in (lambda t: t.autorange(), lambda t: t.repeat()):
        with pytest.raises(NotImplementedError, match="blocked_autorange"):
            call(benchmark.Timer("pass"))
    assert benchmark.select_unit(2e-6) == ("us", 1e-6) and benchmark.select_unit(3.0) == ("s", 1.0)


def test_compare_table():
    results = []
    for n in (4, 64):
        y = fg.randn(n)
        for description, stmt in (("mul", "y * 2"), ("add", "y + 2")):
            timer = benchmark.Timer(
                stmt, globals={"y": y}, label="ops", sub_label=str(n), description=description
            )
            results.append(timer.timeit(50))
    compare = benchmark.Compare(results)
    table = str(compare).splitlines()
    assert table[0].startswith("[") and " ops " in table[0] and table[0].endswith("]")
    assert "mul" in table[1] and "add" in table[1] and table[2].startswith("1 threads: ")
    assert table[3].strip().startswith("4") and table[4].strip().startswith("64")
    assert any(line.startswith("Times are in ") for line in table)
    compare.colorize()
    assert "\033[92m" in str(compare)
    with pytest.raises(ValueError, match="Measurement"):
        benchmark.Compare(["not a measurement"])
    merged = benchmark.Measurement.merge(results + results)
    assert len(merged) == 4 and all(len(m.times) == 2 for m in merged)
