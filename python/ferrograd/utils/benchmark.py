"""``ferrograd.utils.benchmark``: timing statements (``Timer``), the statistics of the timings
(``Measurement``) and a table comparing many of them (``Compare``), as PyTorch's module of the
same name provides. Statements are Python, run with ``timeit`` in the given ``globals`` (where
``torch`` names ferrograd unless given), after a warm-up."""

from __future__ import annotations

import enum
import math
import textwrap
import timeit as _timeit
from collections import defaultdict
from typing import Any, Callable, Iterable

import numpy as np

__all__ = ["Compare", "Language", "Measurement", "TaskSpec", "Timer", "select_unit"]

_UNITS = (
    (1e-9, "ns", "nanoseconds"),
    (1e-6, "us", "microseconds"),
    (1e-3, "ms", "milliseconds"),
    (1.0, "s", "seconds"),
)
# A measurement whose interquartile range exceeds this share of its median is flagged.
_NOISY_IQR_SHARE = 0.1


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def select_unit(seconds: float) -> tuple[str, float]:
    """The unit (``"ns"``, ``"us"``, ``"ms"`` or ``"s"``) that shows ``seconds`` best, and its size."""
    for scale, unit, _ in reversed(_UNITS):
        if seconds >= scale:
            return unit, scale
    return _UNITS[0][1], _UNITS[0][0]


def _english(unit: str) -> str:
    return next(name for _, short, name in _UNITS if short == unit)


def _digits_after_point(value: float, significant: int) -> int:
    """How many decimals show ``value`` with ``significant`` significant figures."""
    if value == 0 or not math.isfinite(value):
        return 1
    return max(significant - 1 - int(math.floor(math.log10(abs(value)))), 0)


class TaskSpec:
    """What was timed: the statement, its setup and the labels that group it in a ``Compare``."""

    def __init__(
        self,
        stmt: str,
        setup: str,
        global_setup: str = "",
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
    ) -> None:
        self.stmt, self.setup, self.global_setup = stmt, setup, global_setup
        self.label, self.sub_label, self.description = label, sub_label, description
        self.env, self.num_threads = env, num_threads

    @property
    def title(self) -> str:
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return (
            "stmt:"
            + (f" ({self.sub_label})" if self.sub_label else "")
            + "\n"
            + textwrap.indent(self.stmt, "  ")
        )

    def summarize(self) -> str:
        lines = [self.title, self.description or ""]
        if self.env:
            lines.append(f"Env: {self.env}")
        return "\n".join(line for line in lines if line)


class Measurement:
    """The timings of one statement: ``raw_times`` are of blocks of ``number_per_run`` runs;
    ``times`` are per run, and ``median``, ``mean`` and ``iqr`` summarise them."""

    def __init__(
        self, number_per_run: int, raw_times: list[float], task_spec: TaskSpec, metadata=None
    ) -> None:
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        return float(np.median(self.times))

    @property
    def mean(self) -> float:
        return float(np.mean(self.times))

    @property
    def iqr(self) -> float:
        q1, q3 = np.percentile(self.times, [25, 75])
        return float(q3 - q1)

    @property
    def significant_figures(self) -> int:
        """How many figures of the median the spread of the times supports (1 to 4)."""
        if len(self.times) < 2 or self.median == 0:
            return 2 if len(self.times) < 2 else 4
        spread = self.iqr / self.median
        return int(min(max(-math.floor(math.log10(max(spread, 1e-12))), 1), 4))

    @property
    def has_warnings(self) -> bool:
        return len(self.times) >= 4 and self.iqr > _NOISY_IQR_SHARE * self.median

    def __repr__(self) -> str:
        unit, scale = select_unit(self.median)
        digits = _digits_after_point(self.median / scale, 3)
        show = lambda seconds: f"{seconds / scale:.{digits}f}"  # noqa: E731
        lines = [super().__repr__(), self.task_spec.summarize()]
        count = len(self.times)
        if count > 1:
            q1, q3 = np.percentile(self.times, [25, 75])
            lines += [
                f"  Median: {show(self.median)} {unit}",
                f"  IQR:    {show(self.iqr)} {unit} ({show(q1)} to {show(q3)})",
                f"  {count} measurements, {self.number_per_run} runs per measurement, "
                f"{self.task_spec.num_threads} thread{'s' if self.task_spec.num_threads > 1 else ''}",
            ]
        else:
            lines += [
                f"  {show(self.median)} {unit}",
                f"  1 measurement, {self.number_per_run} runs , {self.task_spec.num_threads} "
                f"thread{'s' if self.task_spec.num_threads > 1 else ''}",
            ]
        if self.has_warnings:
            lines += [
                f"  WARNING: Interquartile range is {100 * self.iqr / self.median:.1f}% of the median measurement.",
                "           This suggests significant environmental influence.",
            ]
        return "\n".join(lines)

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """One measurement per task, pooling the per-run times of repeated ones."""
        pooled: dict[tuple, list[Measurement]] = defaultdict(list)
        for m in measurements:
            spec = m.task_spec
            pooled[
                (
                    spec.stmt,
                    spec.setup,
                    spec.label,
                    spec.sub_label,
                    spec.description,
                    spec.env,
                    spec.num_threads,
                )
            ].append(m)
        return [
            Measurement(1, [t for m in group for t in m.times], group[0].task_spec)
            for group in pooled.values()
        ]


# The task's fields read as the measurement's own (`m.title`, `m.label`, ...).
for _field in ("title", "stmt", "setup", "label", "sub_label", "description", "env", "num_threads"):
    setattr(Measurement, _field, property(lambda self, field=_field: getattr(self.task_spec, field)))
del _field


class Timer:
    """Times ``stmt`` after running ``setup`` once, in ``globals``."""

    _MIN_BLOCK_SECONDS = 1e-3

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = _timeit.default_timer,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ) -> None:
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`: ferrograd's Timer runs Python statements only.")
        import ferrograd

        namespace = {"torch": ferrograd, **(globals or {})}
        stmt, setup = textwrap.dedent(stmt), textwrap.dedent(setup)
        full_setup = "\n".join(part for part in (textwrap.dedent(global_setup), setup) if part)
        self._timer = _timeit.Timer(stmt=stmt, setup=full_setup or "pass", timer=timer, globals=namespace)
        self._task_spec = TaskSpec(stmt, setup, global_setup, label, sub_label, description, env, num_threads)

    def _run(self, number: int) -> float:
        return self._timer.timeit(number)

    def _measure(self, number: int, times: list[float]) -> Measurement:
        return Measurement(number, times, self._task_spec)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One timing of ``number`` runs, after a warm-up of a hundredth as many."""
        self._run(max(number // 100, 2))
        return self._measure(number, [self._run(number)])

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], Any] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self) -> int:
        """Runs per block: the first power of ten whose block takes at least a millisecond."""
        number = 1
        while self._run(number) < self._MIN_BLOCK_SECONDS and number < 10**9:
            number *= 10
        return number

    def _blocks(self, number: int, keep_going: Callable[[list[float], float], bool], callback) -> list[float]:
        times: list[float] = []
        total = 0.0
        while keep_going(times, total):
            elapsed = self._run(number)
            times.append(elapsed)
            total += elapsed
            if callback is not None:
                callback(number, elapsed)
        return times

    def blocked_autorange(
        self, callback: Callable[[int, float], Any] | None = None, min_run_time: float = 0.2
    ) -> Measurement:
        """Blocks of runs (each at least a millisecond) until ``min_run_time`` seconds have passed."""
        number = self._block_size()
        times = self._blocks(number, lambda times, total: total < min_run_time or not times, callback)
        return self._measure(number, times)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], Any] | None = None,
    ) -> Measurement:
        """Blocks of runs until the interquartile range falls within ``threshold`` of the median
        (after ``min_run_time`` seconds and at least four blocks), or ``max_run_time`` seconds."""
        number = self._block_size()

        def keep_going(times: list[float], total: float) -> bool:
            if total >= max_run_time:
                return False
            if total < min_run_time or len(times) < 4:
                return True
            q1, median, q3 = np.percentile(times, [25, 50, 75])
            return (q3 - q1) / median >= threshold

        return self._measure(number, self._blocks(number, keep_going, callback))

    def collect_callgrind(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("ferrograd's Timer does not run Callgrind; use blocked_autorange")


class Compare:
    """A table of measurements: one per ``label``, a row per ``sub_label`` (grouped by thread
    count), a column per ``description``; each cell is the median in a unit shared by the table."""

    def __init__(self, results: list[Measurement]) -> None:
        self._results: list[Measurement] = []
        self._trim = False
        self._colorize = False
        self._highlight_warnings = False
        self.extend_results(results)

    def extend_results(self, results: Iterable[Measurement]) -> None:
        for result in results:
            if not isinstance(result, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(result)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        """Marks each column's (or, with ``rowwise``, each row's) fastest cell in bold green."""
        self._colorize = "row" if rowwise else "column"

    def highlight_warnings(self) -> None:
        """Marks noisy cells with ``(! XX%)``, their interquartile range as a share of the median."""
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def _cell(self, m: Measurement, scale: float, best: bool) -> str:
        value = m.median / scale
        digits = _digits_after_point(value, m.significant_figures if self._trim else 3)
        text = f"{value:.{digits}f}"
        if self._highlight_warnings and m.has_warnings:
            text += f" (! {100 * m.iqr / m.median:.0f}%)"
        return f"\033[1m\033[92m{text}\033[0m" if best and self._colorize else text

    def _table(self, label: str | None, results: list[Measurement]) -> str:
        merged = Measurement.merge(results)
        unit, scale = select_unit(min(m.median for m in merged))
        columns = list(dict.fromkeys(m.task_spec.description or "" for m in merged))
        rows = list(
            dict.fromkeys(
                (m.task_spec.num_threads, m.task_spec.sub_label or m.task_spec.stmt) for m in merged
            )
        )
        cells = {
            (
                m.task_spec.num_threads,
                m.task_spec.sub_label or m.task_spec.stmt,
                m.task_spec.description or "",
            ): m
            for m in merged
        }

        def best(row, column) -> bool:
            m = cells[(*row, column)]
            if self._colorize == "row":
                peers = [cells[(*row, c)] for c in columns if (*row, c) in cells]
            else:
                peers = [cells[(*r, column)] for r in rows if (*r, column) in cells]
            return len(peers) > 1 and m.median == min(p.median for p in peers)

        text = {
            (row, column): self._cell(cells[(*row, column)], scale, best(row, column))
            if (*row, column) in cells
            else ""
            for row in rows
            for column in columns
        }
        name_width = max(len(str(name)) for _, name in rows) + 2
        widths = [max(len(c), *(len(_visible(text[(row, c)])) for row in rows)) + 2 for c in columns]
        body = [" " * name_width + "|" + "|".join(c.center(w) for c, w in zip(columns, widths))]
        threads = None
        for row in rows:
            if row[0] != threads:
                threads = row[0]
                heading = f"{threads} threads: "
                body.append(heading + "-" * max(len(body[0]) - len(heading), 4))
            cells_text = [_pad(text[(row, c)], w) for c, w in zip(columns, widths)]
            body.append(str(row[1]).rjust(name_width - 2) + "  |" + "|".join(cells_text))
        width = max(len(_visible(line)) for line in body)
        title = f" {label} " if label else ""
        header = "[" + title.center(width - 2, "-") + "]"
        return "\n".join([header, *body, "", f"Times are in {_english(unit)} ({unit}).", ""])

    def __str__(self) -> str:
        by_label: dict[str | None, list[Measurement]] = defaultdict(list)
        for m in self._results:
            by_label[m.task_spec.label].append(m)
        return "\n".join(self._table(label, results) for label, results in by_label.items())


def _visible(text: str) -> str:
    """``text`` without its colour codes, for measuring widths."""
    for code in ("\033[1m", "\033[92m", "\033[0m"):
        text = text.replace(code, "")
    return text


def _pad(text: str, width: int) -> str:
    return " " * (width - len(_visible(text)) - 1) + text + " "
