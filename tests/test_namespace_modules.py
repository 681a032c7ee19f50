"""The constants and small modules training scripts touch (pi, backends.cudnn, version, jit,
random.fork_rng, cpu, accelerator, set_default_tensor_type), so that such scripts run unchanged."""

import importlib
import math
import warnings

import pytest

import ferrograd as fg

from helpers import has_torch, torch


def test_constants():
    assert (fg.pi, fg.e, fg.inf) == (math.pi, math.e, math.inf) and math.isnan(fg.nan)
    x = fg.arange(3.0)
    assert x[:, fg.newaxis].shape == (3, 1)
    assert fg.sin(fg.tensor(fg.pi / 2)).item() == 1.0
    if has_torch:
        assert (fg.pi, fg.e, fg.inf, fg.newaxis) == (torch.pi, torch.e, torch.inf, torch.newaxis)


def test_backend_switches_are_kept_and_restored():
    cudnn = importlib.import_module("ferrograd.backends.cudnn")
    assert cudnn is fg.backends.cudnn and not cudnn.is_available() and cudnn.version() is None
    saved = (cudnn.benchmark, cudnn.deterministic)
    try:
        cudnn.benchmark, cudnn.deterministic = True, True
        assert fg.backends.cudnn.benchmark and fg.backends.cudnn.deterministic
        with cudnn.flags(enabled=False, benchmark=False):
            assert not cudnn.enabled and not cudnn.benchmark
        assert cudnn.enabled and cudnn.benchmark
    finally:
        cudnn.benchmark, cudnn.deterministic = saved
    with fg.backends.mkldnn.flags(enabled=False):
        assert not fg.backends.mkldnn.enabled
    assert fg.backends.mkldnn.enabled
    fg.backends.cuda.matmul.allow_tf32 = True
    assert fg.backends.cuda.matmul.allow_tf32
    fg.backends.cuda.matmul.allow_tf32 = False
    fg.backends.cuda.enable_flash_sdp(False)
    assert not fg.backends.cuda.flash_sdp_enabled() and fg.backends.cuda.math_sdp_enabled()
    fg.backends.cuda.enable_flash_sdp(True)
    assert fg.backends.cuda.flash_sdp_enabled()
    for available in (
        fg.backends.mps.is_available,
        fg.backends.mps.is_built,
        fg.backends.cuda.is_built,
        fg.backends.openmp.is_available,
        fg.accelerator.is_available,
    ):
        assert available() is False


def test_devices_and_version():
    assert fg.cpu.is_available() and fg.cpu.device_count() == 1 and fg.cpu.current_device() == "cpu"
    fg.cpu.synchronize()
    assert fg.accelerator.current_accelerator() is None and fg.accelerator.device_count() == 0
    assert fg.version.__version__ == fg.__version__ and fg.version.cuda is None and fg.version.hip is None


def test_jit_passes_functions_and_modules_through():
    def double(x):
        return 2 * x

    layer = fg.nn.Linear(2, 2)
    assert fg.jit.script(double) is double and fg.jit.trace(layer, fg.ones(1, 2)) is layer
    assert not fg.jit.is_scripting() and not fg.jit.is_tracing()
    assert fg.jit.annotate(list, [1]) == [1]

    @fg.jit.ignore
    def helper():
        return 1

    @fg.jit.unused(drop=True)
    def other():
        return 2

    assert helper() == 1 and other() == 2


def test_fork_rng_restores_the_generator():
    fg.manual_seed(3)
    expect = fg.rand(3)
    fg.manual_seed(3)
    with fg.random.fork_rng():
        fg.rand(5)
    assert fg.rand(3).tolist() == expect.tolist()
    fg.manual_seed(3)
    with fg.random.fork_rng(enabled=False):
        fg.rand(3)
    assert fg.rand(3).tolist() != expect.tolist()
    assert fg.random.initial_seed() == 3 and fg.random.manual_seed is fg.manual_seed


def test_set_default_tensor_type():
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            fg.set_default_tensor_type(fg.DoubleTensor)
        assert fg.get_default_dtype() == fg.float64 and fg.ones(1).dtype == fg.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fg.set_default_tensor_type("torch.FloatTensor")
            assert fg.get_default_dtype() == fg.float32
            with pytest.raises(
                TypeError, match="only floating-point types are supported as the default type"
            ):
                fg.set_default_tensor_type(fg.LongTensor)
            with pytest.raises(AttributeError, match="has no attribute 'Foo'"):
                fg.set_default_tensor_type("torch.Foo")
    finally:
        fg.set_default_dtype(fg.float32)


def test_out_of_memory_error_is_a_runtime_error_nothing_raises():
    assert issubclass(fg.OutOfMemoryError, RuntimeError) and issubclass(fg.AcceleratorError, RuntimeError)
    with pytest.raises(RuntimeError, match="not enough memory") as caught:
        fg.empty(2**55)
    assert not isinstance(caught.value, fg.OutOfMemoryError)


def test_compiler_runs_everything_eagerly():
    compiler = importlib.import_module("ferrograd.compiler")
    model = fg.nn.Linear(2, 2)
    assert compiler.compile(model) is model
    assert not compiler.is_compiling() and not compiler.is_dynamo_compiling() and not compiler.is_exporting()

    @compiler.disable
    def double(x):
        return 2 * x

    @compiler.disable(recursive=False)
    def triple(x):
        return 3 * x

    assert double(fg.ones(2)).tolist() == [2.0, 2.0] and triple(1) == 3
    assert compiler.allow_in_graph(len) is len and compiler.assume_constant_result(len) is len
    assert compiler.substitute_in_graph(len)(sorted) is sorted
    assert compiler.list_backends() == [] and compiler.reset() is None

    @compiler.set_stance("force_eager")
    def five():
        return 5

    with compiler.set_stance("eager_on_recompile"):
        assert five() == 5
    with pytest.raises(ValueError, match="Invalid stance 'sometimes'"):
        compiler.set_stance("sometimes")
    if has_torch:
        assert all(hasattr(torch.compiler, name) for name in compiler.__all__)


def test_hook_handles_for_custom_hooks():
    hooks = importlib.import_module("ferrograd.utils.hooks")
    callbacks, extra = {}, {}
    handle = hooks.RemovableHandle(callbacks, extra_dict=extra)
    callbacks[handle.id], extra[handle.id] = print, True
    with handle:
        assert handle.id in callbacks
    assert callbacks == {} and extra == {}
    model = fg.nn.Linear(2, 2)
    assert isinstance(model.register_forward_hook(lambda *a: None), hooks.RemovableHandle)

    @hooks.unserializable_hook
    def hook(grad):
        return grad

    assert hook.__torch_unserializable__ is True


def test_functional_module_reexports_the_tensor_functions():
    # The autograd-mechanics notebook imports it: `import torch.functional as F`.
    functional = importlib.import_module("ferrograd.functional")
    for name in functional.__all__:
        assert getattr(functional, name) is getattr(fg, name)
    x = fg.ones(2, 3, requires_grad=True)
    functional.einsum("ij->j", x).sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 2
    if has_torch:
        assert sorted(functional.__all__) == sorted(torch.functional.__all__)
