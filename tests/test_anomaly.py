"""Anomaly detection: nodes remember their forward traceback; a failing or
NaN-producing backward names the node and shows where it was created."""

import warnings

import pytest

import ferrograd as fg
from ferrograd.autograd import Function

from helpers import has_torch
from helpers import torch as ref_torch


def recorded_warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - the caller inspects it
            return e, [str(w.message) for w in caught]
    return None, [str(w.message) for w in caught]


def test_nan_in_backward_names_the_node_and_shows_the_forward():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = fg.autograd.detect_anomaly()
    with ctx:
        assert fg.is_anomaly_enabled() and fg.is_anomaly_check_nan_enabled()
        a = fg.zeros(1, requires_grad=True)
        b = a / a  # the forward line the report must show
        err, messages = recorded_warnings(b.backward)
    assert not fg.is_anomaly_enabled()
    assert isinstance(err, RuntimeError)
    assert str(err) == "Function 'DivBackward0' returned nan values in its 1th output."
    (report,) = [m for m in messages if m.startswith("Error detected in")]
    assert report.startswith(
        "Error detected in DivBackward0. Traceback of forward call that caused the error:"
    )
    assert "b = a / a  # the forward line the report must show" in report
    assert "test_anomaly.py" in report


def test_nan_is_not_checked_without_anomaly_mode_or_with_check_nan_off():
    a = fg.zeros(1, requires_grad=True)
    (a / a).backward()
    assert a.grad.isnan().all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with fg.autograd.detect_anomaly(check_nan=False):
            assert not fg.is_anomaly_check_nan_enabled()
            b = fg.zeros(1, requires_grad=True)
            (b / b).backward()
    assert b.grad.isnan().all()


def test_exception_in_custom_backward_keeps_its_type_and_is_reported():
    class Broken(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise KeyError("boom")

    fg.autograd.set_detect_anomaly(True)
    try:
        x = fg.ones(2, requires_grad=True)
        y = Broken.apply(x).sum()  # created here
        err, messages = recorded_warnings(y.backward)
    finally:
        fg.autograd.set_detect_anomaly(False)
    assert isinstance(err, KeyError) and err.args == ("boom",)
    (report,) = [m for m in messages if m.startswith("Error detected in")]
    assert report.startswith("Error detected in BrokenBackward.")
    assert "y = Broken.apply(x).sum()  # created here" in report
    # The engine is still usable.
    x.exp().sum().backward()
    assert x.grad is not None


def test_nodes_created_before_enabling_have_no_trace():
    a = fg.zeros(1, requires_grad=True)
    b = a / a
    with fg.autograd.set_detect_anomaly(True):
        err, messages = recorded_warnings(b.backward)
    assert not fg.is_anomaly_enabled()
    assert "returned nan values in its 1th output" in str(err)
    (report,) = [m for m in messages if m.startswith("Error detected in")]
    assert "No forward pass information available" in report


def test_detect_anomaly_as_decorator():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):

        @fg.autograd.detect_anomaly()
        def run():
            assert fg.is_anomaly_enabled()
            x = fg.tensor([-1.0], requires_grad=True)
            x.sqrt().backward()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(
            RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output."
        ):
            run()
    assert not fg.is_anomaly_enabled()


@pytest.mark.skipif(not has_torch, reason="torch is not installed")
def test_messages_match_torch():
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                a = lib.zeros(1, requires_grad=True)
                b = (a / a) * 2
                err, messages = recorded_warnings(b.backward)
        report = [m for m in messages if m.startswith("Error detected in")][0]
        return str(err), report.split("\n")[0]

    assert run(fg) == run(ref_torch)
