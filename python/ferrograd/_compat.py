"""Smaller pieces of PyTorch's API: legacy and alias methods, constant attributes of CPU tensors,
sampling functions and the top-level forms of ``nn.functional`` losses.

``FUNCTIONS`` are installed at the top level, ``METHODS`` on ``Tensor`` (as ``_aliases`` does).
"""

from __future__ import annotations

import builtins
import math
import operator
import warnings
from typing import Any, Callable

import numpy as np

from . import _C
from ._aliases import empty_strided, split_with_sizes
from ._C import Tensor
from ._functions import _dtype_name, _from_np
from ._size import Size
from .autograd import forward_ad
from .autograd.function import Function, _no_derivative
from .autograd.grad_mode import no_grad

_FLOATING = (_C.float32, _C.float64)


def _numpy_rng(generator) -> np.random.Generator:
    """A NumPy generator seeded from ``generator`` (or the default generator), so samples follow
    ``ferrograd.manual_seed`` and advance ferrograd's random state."""
    kwargs = {} if generator is None else {"generator": generator}
    return np.random.default_rng(_C.randint(0, 2**62, (1,), **kwargs).item())


def _require_tensor(name: str, arg: str, position: int, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(
            f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {type(value).__name__}"
        )


# --------------------------------------------------------------------------- sampling


class _ZeroGradSample(Function):
    """A random sample whose gradient with respect to its parameters is zero."""

    _jvp_from_backward = True

    @staticmethod
    def forward(ctx, param, sample):
        # A new tensor, as a sampling op's result is (an input returned as-is would be a view).
        return sample.detach()

    @staticmethod
    def backward(ctx, grad):
        return grad.new_zeros(tuple(grad.shape)), None


_BinomialNoDerivative = _no_derivative("Binomial", "derivative for aten::binomial is not implemented")


def _tracks(*tensors: Tensor) -> builtins.bool:
    return _C.is_grad_enabled() and builtins.any(t.requires_grad for t in tensors)


def _bernoulli(self: Tensor, p=None, *, generator=None) -> Tensor:
    """0/1 samples: with probability ``self`` (each element), or ``p`` for every element when given."""
    if isinstance(p, Tensor):
        raise TypeError(
            "bernoulli() received an invalid combination of arguments - got (Tensor), but expected one of:\n"
            " * (*, ferrograd.Generator generator = None)\n"
            " * (float p, *, ferrograd.Generator generator = None)\n"
        )
    if self.dtype not in _FLOATING:
        kernel = "bernoulli_tensor_cpu_p_" if p is None else "bernoulli_scalar_cpu_"
        if p is None and self.dtype.is_complex:
            kernel = "bernoulli_tensor_cpu_self_"
        if p is None or self.dtype.is_complex:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype_name(self.dtype)}'")
    return _C.bernoulli(self, p, generator=generator)


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson samples with the rates in ``input`` (non-negative). The result carries a zero
    gradient back to ``input``."""
    _require_tensor("poisson", "input", 1, input)
    if input.dtype not in _FLOATING:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_dtype_name(input.dtype)}'")
    rates = input.detach().numpy().astype(np.float64)
    if not (rates >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    # Rates past the int64 range (inf included) give int64's minimum, as PyTorch's kernel does.
    too_large = rates >= 9.2e18
    counts = _numpy_rng(generator).poisson(np.where(too_large, 0.0, rates)).astype(np.float64)
    counts[too_large] = -(2.0**63)
    sample = _from_np(counts).to(input.dtype)
    # A dual input gives its sample a zero tangent, as PyTorch does.
    return (
        _ZeroGradSample.apply(input, sample) if _tracks(input) or forward_ad._current_level >= 0 else sample
    )


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """Binomial samples: successes among ``count`` trials of probability ``prob`` (broadcast
    together). Not differentiable: backward through the result raises."""
    _require_tensor("binomial", "count", 1, count)
    _require_tensor("binomial", "prob", 2, prob)
    for name, t in (("count", count), ("prob", prob)):
        if t.dtype not in _FLOATING:
            raise ValueError(
                f"binomial only supports floating-point dtypes for {name}, got: {_dtype_name(t.dtype)}"
            )
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {_dtype_name(prob.dtype)} but expected {_dtype_name(count.dtype)}")
    n, p = np.broadcast_arrays(
        count.detach().numpy().astype(np.float64), prob.detach().numpy().astype(np.float64)
    )
    undefined = np.isnan(n) | np.isnan(p)
    p_safe = np.clip(np.where(undefined, 0.0, p), 0.0, 1.0)
    trials = np.where(undefined | ~np.isfinite(n) | (n <= 0), 0.0, np.floor(n))
    exact = trials < 2.0**62
    draws = _numpy_rng(generator).binomial(np.where(exact, trials, 0.0).astype(np.int64), p_safe)
    out = np.where(exact, draws, np.round(trials * p_safe)).astype(np.float64)
    out = np.where(np.isposinf(n) & (p_safe > 0), np.inf, out)
    out[undefined] = np.nan
    sample = _from_np(np.ascontiguousarray(out)).to(count.dtype)
    return _BinomialNoDerivative.apply(count, prob, sample) if _tracks(count, prob) else sample


# --------------------------------------------------------------------------- splits and copies


def _unsafe_split(self: Tensor, split_size, dim: int = 0) -> tuple[Tensor, ...]:
    """``split`` into pieces of ``split_size`` (an int); the pieces are views as with ``split``."""
    if isinstance(split_size, builtins.bool) or not isinstance(split_size, int):
        raise TypeError(
            f"unsafe_split(): argument 'split_size' (position 1) must be int, not {type(split_size).__name__}"
        )
    return tuple(self.split(split_size, dim))


def _unsafe_chunk(self: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``chunk``: ``chunks`` pieces of ``self`` along ``dim``."""
    return tuple(self.chunk(chunks, dim))


def _slice(input: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    """``input[..., start:end:step, ...]`` along ``dim``."""
    dim = dim + input.dim() if dim < 0 else dim
    return input[(slice(None),) * dim + (slice(start, end, step),)]


def _fresh(view) -> Callable[..., Any]:
    """A ``*_copy`` function: what the method named ``view`` (or the function ``view``) returns,
    as new contiguous tensors rather than views of the input."""

    def copy(input: Tensor, *args, **kwargs):
        result = (
            getattr(input, view)(*args, **kwargs) if isinstance(view, str) else view(input, *args, **kwargs)
        )
        if isinstance(result, (tuple, list)):
            return tuple(part.clone(memory_format=_C.contiguous_format) for part in result)
        return result.clone(memory_format=_C.contiguous_format)

    copy.__doc__ = (
        f"Does what ``{getattr(view, '__name__', view)}`` does, returning new tensors rather than views."
    )
    return copy


_COPIES_OF_VIEWS = {
    "alias_copy": _fresh(lambda input: input.view_as(input)),
    "as_strided_copy": _fresh("as_strided"),
    "detach_copy": _fresh("detach"),
    "diagonal_copy": _fresh("diagonal"),
    "expand_copy": _fresh("expand"),
    "permute_copy": _fresh("permute"),
    "select_copy": _fresh("select"),
    "slice_copy": _fresh(_slice),
    "split_copy": _fresh("split"),
    "split_with_sizes_copy": _fresh("split_with_sizes"),
    "squeeze_copy": _fresh("squeeze"),
    "t_copy": _fresh("t"),
    "transpose_copy": _fresh("transpose"),
    "unbind_copy": _fresh("unbind"),
    "unfold_copy": _fresh("unfold"),
    "unsqueeze_copy": _fresh("unsqueeze"),
    "view_as_complex_copy": _fresh(lambda input: _C.view_as_complex(input)),
    "view_as_real_copy": _fresh(lambda input: _C.view_as_real(input)),
    "view_copy": _fresh("view"),
}


# --------------------------------------------------------------------------- legacy constructors


def _options(dtype) -> str:
    return (
        f"TensorOptions(dtype={dtype._cpp_name}, device=cpu, layout=Strided, requires_grad=false (default), "
        "pinned_memory=false (default), memory_format=(nullopt))"
    )


def _is_int(value) -> builtins.bool:
    return isinstance(value, int) and not isinstance(value, builtins.bool)


def _new(self: Tensor, *args, device=None, **kwargs) -> Tensor:
    """The legacy constructor: ``x.new()`` is an empty 1-D tensor, ``x.new(2, 3)`` (or a shape
    tuple) an uninitialised one of that size, ``x.new(data)`` a copy of a sequence, and
    ``x.new(t)`` a view of tensor ``t``, which must have ``x``'s dtype. All take ``x``'s dtype.
    A ``Size`` (``y.shape``) gives a size, any other tuple or list the data."""
    if kwargs:
        got = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
        raise TypeError(
            f"new() received an invalid combination of arguments - got ({', '.join(got)}), but expected one of:\n"
            " * (*, ferrograd.device device = None)\n"
            " * (Tensor other)\n"
            " * (tuple of ints size, *, ferrograd.device device = None)\n"
            " * (object data, *, ferrograd.device device = None)\n"
        )
    dtype = self.dtype
    if not args:
        return _C.empty((0,), dtype=dtype)
    if len(args) == 1:
        arg = args[0]
        if isinstance(arg, Tensor):
            if arg.dtype != dtype:
                raise TypeError(f"expected {_options(dtype)} (got {_options(arg.dtype)})")
            return arg.view_as(arg)
        if isinstance(arg, Size):
            args = arg
        elif isinstance(arg, str):
            raise TypeError(f"new(): invalid data type '{type(arg).__name__}'")
        elif isinstance(arg, (float, complex, builtins.bool)):
            raise TypeError(f"new(): data must be a sequence (got {type(arg).__name__})")
        elif not _is_int(arg):
            from . import tensor

            return tensor(arg, dtype=dtype)
    for i, size in enumerate(args):
        if not _is_int(size):
            raise TypeError(
                f"new(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                f'"type must be tuple of ints,but got {type(size).__name__}"'
            )
    for size in args:
        if size < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {list(args)}")
    return _C.empty(tuple(args), dtype=dtype)


def _new_empty_strided(
    self: Tensor, size, stride, *, dtype=None, device=None, requires_grad: builtins.bool = False, **_
) -> Tensor:
    """``empty_strided`` with ``self``'s dtype unless one is given (the result is contiguous)."""
    return empty_strided(size, stride, dtype=dtype or self.dtype, requires_grad=requires_grad)


# --------------------------------------------------------------------------- element-wise Python callables


def _real(value) -> float:
    kind = type(value)
    if not (hasattr(kind, "__float__") or hasattr(kind, "__index__")):
        raise TypeError(f"must be real number, not {kind.__name__}")
    return float(value)


def _integer(value) -> int:
    kind = type(value)
    if hasattr(kind, "__index__"):
        number = operator.index(value)
    elif hasattr(kind, "__float__"):
        number = int(float(value))
    else:
        raise TypeError(f"'{kind.__name__}' object cannot be interpreted as an integer")
    if not -(2**63) <= number < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return number


def _complex(value) -> complex:
    kind = type(value)
    if hasattr(kind, "__complex__"):
        return complex(value)
    return complex(_real(value))


def _converter(dtype):
    if dtype in _FLOATING:
        return _real
    if dtype == _C.int64:
        return _integer
    if dtype == _C.bool:
        return lambda value: _integer(value) != 0
    return _complex


def _write_values(self: Tensor, values: list) -> Tensor:
    convert = _converter(self.dtype)
    from . import _NUMPY_DTYPES

    data = np.array([convert(v) for v in values], dtype=_NUMPY_DTYPES[self.dtype]).reshape(tuple(self.shape))
    with no_grad():
        self.copy_(_from_np(data))  # an in-place write: bumps the version counter
    return self


def _check_no_grad(name: str, *tensors: Tensor) -> None:
    if builtins.any(t.requires_grad for t in tensors):
        raise RuntimeError(
            f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead."
        )


def _apply_(self: Tensor, callable) -> Tensor:
    """Replaces every element ``v`` of ``self`` by ``callable(v)`` (a Python number of the
    element's kind), in place. Slow: for small tensors and tests."""
    _check_no_grad("apply_", self)
    return _write_values(self, [callable(v) for v in self.reshape(-1).tolist()])


def _map_elements(name: str, self: Tensor, operands: list[tuple[str, str, Tensor]], callable) -> Tensor:
    """Replaces every element ``v`` of ``self`` by ``callable(v, *w)``, ``w`` the matching elements
    of the operands (each of ``self``'s dtype, broadcast to its shape), in place. Each operand is
    ``(argument name, how PyTorch's dtype error names it, tensor)``."""
    for position, (arg, _, tensor) in enumerate(operands, 1):
        _require_tensor(name, arg, position, tensor)
    _check_no_grad(name, self, *(tensor for *_, tensor in operands))
    for _, label, tensor in operands:
        if tensor.dtype != self.dtype:
            raise TypeError(f"{name}: expected {self.type()} for {label} (got {tensor.type()})")
    columns = [tensor.expand(*self.shape).reshape(-1).tolist() for *_, tensor in operands]
    return _write_values(self, [callable(v, *w) for v, *w in zip(self.reshape(-1).tolist(), *columns)])


def _map_(self: Tensor, tensor: Tensor, callable) -> Tensor:
    """``callable(v, w)`` in place of each element ``v``, ``w`` the matching element of ``tensor``."""
    return _map_elements("map_", self, [("other", "'other'", tensor)], callable)


def _map2_(self: Tensor, x: Tensor, y: Tensor, callable) -> Tensor:
    """``callable(v, a, b)`` in place of each element ``v``, ``a`` and ``b`` the matching elements
    of ``x`` and ``y``."""
    return _map_elements("map2_", self, [("x", "argument 'x'", x), ("y", "argument 'y'", y)], callable)


# --------------------------------------------------------------------------- top-level utilities


def _range(
    start=None, end=None, step=1, *, dtype=None, device=None, requires_grad: builtins.bool = False, **_
) -> Tensor:
    """Deprecated: the values from ``start`` to ``end`` *inclusive* in steps of ``step``, of the
    default floating dtype unless one is given. Prefer ``arange``, which excludes ``end``."""
    if start is None or end is None:
        missing = ['"start"', '"end"'] if start is None else ['"end"']
        raise TypeError(f"range() missing {len(missing)} required positional arguments: {', '.join(missing)}")
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its behavior is "
        "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
        "[start, end).",
        UserWarning,
        stacklevel=2,
    )
    dtype = dtype or _C.get_default_dtype()
    if dtype not in (*_FLOATING, _C.int64):
        raise NotImplementedError(f"\"range_cpu\" not implemented for '{_dtype_name(dtype)}'")
    if dtype == _C.int64:
        start, end, step = int(start), int(end), int(step)
    if not (math.isfinite(start) and math.isfinite(end)):
        shown = [int(v) if math.isfinite(v) and float(v).is_integer() else v for v in (start, end)]
        raise RuntimeError(f"unsupported range: {shown[0]} -> {shown[1]}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    size = int(math.floor((end - start) / step)) + 1
    work = _C.int64 if dtype == _C.int64 else _C.float64
    out = (_C.arange(size, dtype=work) * step + start).to(dtype)
    return out.requires_grad_(requires_grad)


def set_flush_denormal(mode: builtins.bool) -> builtins.bool:
    """Whether denormal floats could be flushed to zero: ferrograd does not change the CPU's
    floating-point mode, so this always returns False (unsupported) and changes nothing."""
    return False


def typename(obj) -> str:
    """The type name of ``obj``: ``obj.type()`` for a tensor (``'ferrograd.FloatTensor'``), else
    the qualified name of ``obj`` (a class or function) or of its class, without ``builtins.``."""
    if isinstance(obj, Tensor):
        return obj.type()
    named = obj if hasattr(obj, "__qualname__") else type(obj)
    module = getattr(named, "__module__", "") or ""
    qualname = getattr(named, "__qualname__", None) or getattr(named, "__name__", "")
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def set_default_tensor_type(t) -> None:
    """Deprecated: makes the dtype of ``t`` (``DoubleTensor`` or ``"torch.DoubleTensor"``, a
    floating type) the default dtype; prefer ``set_default_dtype``."""
    warnings.warn(
        "set_default_tensor_type() is deprecated (as in PyTorch 2.1 and later); use set_default_dtype() instead.",
        UserWarning,
        stacklevel=2,
    )
    if isinstance(t, str):
        name = t.rsplit(".", 1)[-1]
        if name not in _LEGACY_TYPES:
            raise AttributeError(f"module 'ferrograd' has no attribute '{name}'")
        t = _LEGACY_TYPES[name]
    if not isinstance(t, _LegacyTensorType):
        raise TypeError(f"invalid type object: only floating-point types are supported, not {t!r}")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _C.set_default_dtype(t.dtype)


def is_storage(obj) -> builtins.bool:
    """False: ferrograd has no storage objects apart from its tensors."""
    return False


_warned_unwritable_buffer = False


def frombuffer(
    buffer, *, dtype, count: int = -1, offset: int = 0, requires_grad: builtins.bool = False
) -> Tensor:
    """A 1-d tensor over the memory of an object with the buffer protocol (``bytearray``,
    ``array.array``, ``memoryview``, ``mmap``), sharing it: writes through either are seen by
    the other. ``count`` elements (all when -1) of ``dtype`` are read from byte ``offset`` on."""
    global _warned_unwritable_buffer
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    probe = _C.empty((0,), dtype=dtype)
    length, itemsize = view.nbytes, probe.element_size()
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({length} bytes) minus 1"
        )
    if count < 0 and (length - offset) % itemsize:
        raise ValueError(
            f"buffer length ({length - offset} bytes) after offset ({offset} bytes) "
            f"must be a multiple of element size ({itemsize})"
        )
    if count > 0 and count * itemsize > length - offset:
        raise ValueError(
            f"requested buffer length ({count} * {itemsize} bytes) after offset ({offset} bytes) "
            f"must not be greater than actual buffer length ({length} bytes)"
        )
    if view.readonly and not _warned_unwritable_buffer:
        _warned_unwritable_buffer = True
        warnings.warn(
            "The given buffer is not writable, and ferrograd does not support writing to it: "
            "in-place operations on this tensor raise an error. "
            "You may want to copy the buffer to protect its data or make it writable before converting "
            "it to a tensor. This type of warning will be suppressed for the rest of this program.",
            UserWarning,
            stacklevel=2,
        )
    array = np.frombuffer(view.cast("B"), dtype=probe.numpy().dtype, count=count, offset=offset)
    return _C._share_array(array).requires_grad_(requires_grad)


def is_inference(input: Tensor) -> builtins.bool:
    """``input.is_inference()``."""
    _require_tensor("is_inference", "input", 1, input)
    return input.is_inference()


def fill(input: Tensor, value) -> Tensor:
    """A new tensor of ``input``'s shape and dtype holding ``value`` (a number or a 0-d tensor,
    through which gradients flow)."""
    return input.clone().fill_(value)


# --------------------------------------------------------------------------- nn.functional losses at top level


def _functional():
    from .nn import functional

    return functional


def _reduction(name: str, reduction, position: int) -> str:
    """PyTorch's integer reduction enum: 1 mean, 2 sum, anything else none."""
    if not _is_int(reduction):
        raise TypeError(
            f"{name}(): argument 'reduction' (position {position}) must be int, not {type(reduction).__name__}"
        )
    return {1: "mean", 2: "sum"}.get(reduction, "none")


# These forms take the reduction as an int; left out it means no reduction, as in PyTorch 2.13.


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction=0):
    """``nn.functional.triplet_margin_loss`` with an integer ``reduction`` (any ``margin``)."""
    F = _functional()
    how = _reduction("triplet_margin_loss", reduction, 8)
    return F._reduce(F._triplet_margin(anchor, positive, negative, margin, p, eps, swap), how)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """``nn.functional.margin_ranking_loss`` with an integer ``reduction``."""
    how = _reduction("margin_ranking_loss", reduction, 5)
    return _functional().margin_ranking_loss(input1, input2, target, margin, reduction=how)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """``nn.functional.hinge_embedding_loss`` with an integer ``reduction``."""
    how = _reduction("hinge_embedding_loss", reduction, 4)
    return _functional().hinge_embedding_loss(input, target, margin, reduction=how)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """``nn.functional.cosine_embedding_loss`` with an integer ``reduction``."""
    how = _reduction("cosine_embedding_loss", reduction, 5)
    return _functional().cosine_embedding_loss(input1, input2, target, margin, reduction=how)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """``nn.functional.poisson_nll_loss`` with every argument given and an integer ``reduction``."""
    how = _reduction("poisson_nll_loss", reduction, 6)
    return _functional().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=how)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    """``nn.functional.ctc_loss`` with an integer ``reduction``."""
    how = _reduction("ctc_loss", reduction, 6)
    return _functional().ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank, reduction=how, zero_infinity=zero_infinity
    )


def bilinear(input1, input2, weight, bias=None):
    """``nn.functional.bilinear``."""
    return _functional().bilinear(input1, input2, weight, bias)


# --------------------------------------------------------------------------- legacy tensor types


class _LegacyTensorType(type):
    """The metaclass of ``FloatTensor`` and its kin: calling one is the legacy constructor
    (``FloatTensor(2, 3)``, ``LongTensor([1, 2])``) and a tensor is an instance of the one
    naming its dtype."""

    dtype: _C.dtype

    def __call__(cls, *args, **kwargs) -> Tensor:
        return _new(_C.empty((0,), dtype=cls.dtype), *args, **kwargs)

    def __instancecheck__(cls, obj) -> builtins.bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype


def _legacy_tensor_type(dtype) -> type:
    name = _C.empty((0,), dtype=dtype).type().rsplit(".", 1)[-1]
    return _LegacyTensorType(name, (), {"dtype": dtype, "__module__": "ferrograd"})


_LEGACY_TYPES = {
    t.__name__: t
    for t in map(
        _legacy_tensor_type,
        (_C.float32, _C.float64, _C.int64, _C.int32, _C.int16, _C.int8, _C.uint8, _C.bool),
    )
}


def _legacy_tensor(*args) -> Tensor:
    """``Tensor(...)`` with other arguments than one tensor: the legacy constructor with the
    default dtype (``Tensor(2, 3)`` is uninitialised, ``Tensor([1, 2])`` holds the values)."""
    return _new(_C.empty((0,), dtype=_C.get_default_dtype()), *args)


# --------------------------------------------------------------------------- tables

_ALWAYS_FALSE = (
    "is_sparse is_sparse_csr is_quantized is_meta is_nested is_mkldnn is_xpu is_mps is_ipu "
    "is_vulkan is_xla is_mtia is_maia"
).split()

_FUNCTIONS_AND_METHODS = {
    "is_neg": lambda input: False,
    "resolve_neg": lambda input: input,
    "unsafe_chunk": _unsafe_chunk,
    "unsafe_split": _unsafe_split,
    "unsafe_split_with_sizes": split_with_sizes,
    "narrow_copy": _fresh("narrow"),
}

FUNCTIONS = {
    **_FUNCTIONS_AND_METHODS,
    **_COPIES_OF_VIEWS,
    **_LEGACY_TYPES,
    "poisson": poisson,
    "binomial": binomial,
    "range": _range,
    "set_flush_denormal": set_flush_denormal,
    "typename": typename,
    "is_storage": is_storage,
    "set_default_tensor_type": set_default_tensor_type,
    "frombuffer": frombuffer,
    "is_inference": is_inference,
    "fill": fill,
    "triplet_margin_loss": triplet_margin_loss,
    "margin_ranking_loss": margin_ranking_loss,
    "hinge_embedding_loss": hinge_embedding_loss,
    "cosine_embedding_loss": cosine_embedding_loss,
    "poisson_nll_loss": poisson_nll_loss,
    "ctc_loss": ctc_loss,
    "bilinear": bilinear,
}

METHODS = {
    **_FUNCTIONS_AND_METHODS,
    "bernoulli": _bernoulli,
    # No tensor lives in page-locked memory without an accelerator, as with a CPU-only PyTorch.
    "pin_memory": lambda self, device=None: _raise_no_accelerator(),
    "is_pinned": lambda self, device=None: False,
    # ferrograd runs in one process: sharing is a no-op and no tensor reports shared memory.
    "share_memory_": lambda self: self,
    "is_shared": lambda self: False,
    "new": _new,
    "new_empty_strided": _new_empty_strided,
    "apply_": _apply_,
    "map_": _map_,
    "map2_": _map2_,
    **{
        name: property(lambda self: False, doc="Always False for a ferrograd tensor.")
        for name in _ALWAYS_FALSE
    },
}


def _raise_no_accelerator():
    raise RuntimeError("Cannot access accelerator device when none is available.")
