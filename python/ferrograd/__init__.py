"""ferrograd: a Rust-accelerated eager autograd engine with PyTorch's semantics.

Code written for ``torch.autograd`` runs unchanged with ``import ferrograd as torch``.
"""

from __future__ import annotations

import builtins as _builtins
import functools as _functools
import math as _math
import numbers as _numbers
import types as _types

import numpy as _np

from . import _C
from ._C import (
    Generator,
    Tensor,
    addmm,
    arange,
    are_deterministic_algorithms_enabled,
    bernoulli,
    bool,  # noqa: A004 - PyTorch exposes the dtype under this name too
    cat,
    cdouble,
    cfloat,
    channels_last,
    channels_last_3d,
    complex,  # noqa: A004 - PyTorch's name
    complex64,
    complex128,
    contiguous_format,
    default_generator,
    double,
    dtype,
    empty,
    empty_like,
    eye,
    float,  # noqa: A004
    float32,
    float64,
    from_numpy,
    full,
    full_like,
    get_default_dtype,
    get_num_threads,
    get_rng_state,
    initial_seed,
    int,  # noqa: A004
    int8,
    int16,
    int32,
    int64,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_deterministic_algorithms_warn_only_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    linspace,
    long,
    manual_seed,
    memory_format,
    multinomial,
    normal,
    ones,
    ones_like,
    polar,
    preserve_format,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_default_dtype,
    set_num_threads,
    set_rng_state,
    short,
    stack,
    uint8,
    use_deterministic_algorithms,
    view_as_complex,
    view_as_real,
    zeros,
    zeros_like,
)
from ._size import Size
from .autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .version import __version__

# PyTorch's constants, for code such as ``2 * torch.pi`` or ``x[:, torch.newaxis]``.
pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
newaxis = None


class OutOfMemoryError(RuntimeError):
    """An accelerator running out of memory. ferrograd has none, so nothing raises it: an
    allocation that fails on the CPU raises ``RuntimeError``, as in PyTorch."""


class AcceleratorError(RuntimeError):
    """An error an accelerator reports. ferrograd has none, so nothing raises it."""


_NUMPY_DTYPES = {
    float32: _np.float32,
    float64: _np.float64,
    int64: _np.int64,
    int32: _np.int32,
    int16: _np.int16,
    int8: _np.int8,
    uint8: _np.uint8,
    bool: _np.bool_,
    complex64: _np.complex64,
    complex128: _np.complex128,
}


_FROM_NUMPY = {_np.dtype(n): d for d, n in _NUMPY_DTYPES.items()}


def _python_scalar_dtype(kind) -> dtype | None:
    """The dtype a Python number of type ``kind`` takes in a tensor, or None for other types."""
    if kind is _builtins.bool:
        return bool
    if kind is _builtins.int:
        return int64
    if kind is _builtins.float:
        return get_default_dtype()
    if kind is _builtins.complex:
        return complex128 if get_default_dtype() == float64 else complex64
    return None


def _numpy_dtype(arr) -> dtype:
    """The dtype of NumPy data: its own, or for widths ferrograd lacks the nearest wider one
    (int64 for other integers, float32 for float16)."""
    kind = arr.dtype.kind
    if kind not in "biufc":
        raise RuntimeError(f"Could not infer dtype of {type(arr).__name__}")
    if arr.dtype in _FROM_NUMPY:
        return _FROM_NUMPY[arr.dtype]
    if kind in "iu":
        return int64
    if kind == "f":
        return float32 if arr.dtype.itemsize <= 4 else float64
    return complex64 if arr.dtype.itemsize <= 8 else complex128


_PYTHON_NUMBERS = {_builtins.bool, _builtins.int, _builtins.float, _builtins.complex}


def _shape_and_dtype(data, dim: _builtins.int = 0):
    """``(shape, dtype, holds_tensors)`` of nested sequence ``data``: its elements' dtypes
    promoted together as PyTorch does (Python numbers count as the default dtypes, NumPy and
    tensor elements as their own), with PyTorch's errors for ragged or non-numeric data."""
    if isinstance(data, Tensor):
        return tuple(data.shape), data.dtype, True
    if isinstance(data, (_np.ndarray, _np.generic)):
        return data.shape, _numpy_dtype(data), False
    scalar = _python_scalar_dtype(type(data))
    if scalar is not None:
        return (), scalar, False
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if not isinstance(data, (list, tuple, _builtins.range)):
        raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")
    kinds = set(map(type, data))
    if kinds and kinds <= _PYTHON_NUMBERS:
        # A flat list of Python numbers (the common case) needs no walk per element.
        dtypes = {_python_scalar_dtype(k) for k in kinds}
        return (len(data),), _functools.reduce(_C.promote_types, dtypes), False
    if not data:
        return (0,), get_default_dtype(), False
    items = [_shape_and_dtype(item, dim + 1) for item in data]
    result = _functools.reduce(_C.promote_types, {d for _, d, _ in items})
    inner = items[0][0]
    for item, (shape, _, _) in zip(data, items):
        if shape == inner:
            continue
        if not inner:
            kind = type(item).__name__
            if result.is_floating_point or result.is_complex:
                raise TypeError(f"must be real number, not {kind}")
            raise TypeError(f"'{kind}' object cannot be interpreted as an integer")
        if not shape:
            raise TypeError("not a sequence")
        k = next(
            (k for k, (a, b) in enumerate(zip(inner, shape)) if a != b), _builtins.min(len(inner), len(shape))
        )
        expected = inner[k] if k < len(inner) else 0
        got = shape[k] if k < len(shape) else 0
        raise ValueError(f"expected sequence of length {expected} at dim {dim + 1 + k} (got {got})")
    return (len(data), *inner), result, _builtins.any(t for _, _, t in items)


def _detached(data):
    """``data`` with each tensor in it replaced by its values (detached from autograd)."""
    if isinstance(data, Tensor):
        return data.detach().numpy()
    if isinstance(data, (list, tuple)):
        return [_detached(item) for item in data]
    return data


_PYTHON_DTYPES = {
    _builtins.float: float64,
    _builtins.int: int64,
    _builtins.bool: bool,
    _builtins.complex: complex128,
}


def _dtype_arg(function: str, value) -> dtype:
    """A ``dtype=`` argument: a dtype, or a Python number type standing for its dtype."""
    if isinstance(value, dtype):
        return value
    if value in _PYTHON_DTYPES:
        return _PYTHON_DTYPES[value]
    raise TypeError(f"{function}(): argument 'dtype' must be torch.dtype, not {type(value).__name__}")


def _out_of_range_integers(data, target: dtype):
    """Python integers that do not fit ``target``: negative ones wrap around into uint8 and
    others raise, as in PyTorch."""
    try:
        wide = _np.array(data, dtype=_np.int64)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    limits = _np.iinfo(_NUMPY_DTYPES[target])
    low = -(2**63) if target == uint8 else limits.min
    if ((wide > limits.max) | (wide < low)).any():
        raise RuntimeError(f"value cannot be converted to type {_dtype_info._name(target)} without overflow")
    return wide.astype(_NUMPY_DTYPES[target])


def tensor(
    data, dtype: dtype | None = None, device=None, requires_grad: bool = False, pin_memory: bool = False
) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested sequence, array or tensor)."""
    _, inferred, holds_tensors = _shape_and_dtype(data)
    target = inferred if dtype is None else _dtype_arg("tensor", dtype)
    if holds_tensors:
        data = _detached(data)
    if requires_grad and not (target.is_floating_point or target.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    try:
        arr = _np.array(data, dtype=_NUMPY_DTYPES[target], copy=True, order="C")
    except OverflowError:
        arr = _out_of_range_integers(data, target)
    out = from_numpy(arr)
    if requires_grad:
        out.requires_grad_(True)
    return out


def as_tensor(data, dtype: dtype | None = None, device=None) -> Tensor:
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, _np.ndarray) and (dtype is None or _NUMPY_DTYPES[dtype] == data.dtype):
        try:
            return from_numpy(data)
        except (TypeError, ValueError):
            pass
    return tensor(data, dtype=dtype)


def asarray(
    obj, *, dtype: dtype | None = None, device=None, copy=None, requires_grad: bool = False
) -> Tensor:
    """``obj`` (a tensor, array, number or nested sequence) as a tensor, sharing memory with a
    tensor or NumPy array when the dtype allows and ``copy`` is not True; ``copy=False`` raises
    when sharing is impossible."""
    if isinstance(obj, Tensor):
        if dtype is not None and dtype != obj.dtype:
            if copy is False:
                raise ValueError(
                    f"can't alias tensor with dtype '{_dtype_name(obj.dtype)}' into dtype '{_dtype_name(dtype)}'."
                )
            out = obj.to(dtype)
        else:
            out = obj.clone() if copy else obj
    elif isinstance(obj, _np.ndarray):
        if copy is False and obj.dtype not in _NUMPY_DTYPES.values():
            raise ValueError(f"can't alias a NumPy array of dtype {obj.dtype}: ferrograd has no such dtype.")
        target = dtype if dtype is not None else _shape_and_dtype(obj)[1]
        shares = _NUMPY_DTYPES[target] == obj.dtype and not copy
        if copy is False and not shares:
            raise ValueError(
                f"can't alias tensor with dtype '{_dtype_name(_shape_and_dtype(obj)[1])}' into dtype '{_dtype_name(target)}'."
            )
        out = from_numpy(obj) if shares else tensor(obj, dtype=target)
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        out = tensor(obj, dtype=dtype)
    if requires_grad:
        out.requires_grad_(True)
    return out


def compile(model=None, **_options):  # noqa: A001 - PyTorch's name
    """ferrograd runs eagerly, so compiling returns ``model`` unchanged; without ``model`` (as
    ``@compile(...)``) a decorator that does the same."""
    if model is None:
        return lambda fn: fn
    return model


_matmul_precision = "highest"


def set_float32_matmul_precision(precision: str) -> None:
    """Records the float32 matmul precision; ferrograd always computes at full precision. Other
    values than ``'highest'``, ``'high'`` and ``'medium'`` warn and are ignored, as in PyTorch."""
    global _matmul_precision
    if precision not in ("highest", "high", "medium"):
        import warnings

        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
            "setFloat32MatmulPrecision call has no effect.",
            stacklevel=2,
        )
        return
    _matmul_precision = precision


def get_float32_matmul_precision() -> str:
    """The precision last set by :func:`set_float32_matmul_precision` (``'highest'`` by default)."""
    return _matmul_precision


def get_default_device():
    """The device tensors are created on: always the CPU."""
    return device("cpu")


def set_default_device(device_) -> None:
    """Accepts only the CPU (or None), the one device ferrograd has."""
    if device_ is not None and str(device_).split(":")[0] != "cpu":
        raise RuntimeError(f"ferrograd only supports the CPU device, got {device_!r}")


_interop_threads = 1
_warn_always = False


def set_num_interop_threads(num: int) -> None:
    """Records the number of inter-op threads (ferrograd runs operators one at a time)."""
    global _interop_threads
    if num <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _interop_threads = num


def get_num_interop_threads() -> int:
    """The number recorded by :func:`set_num_interop_threads` (1 by default)."""
    return _interop_threads


def set_warn_always(b: bool) -> None:
    """Whether warnings PyTorch gives once should be given every time (recorded only)."""
    global _warn_always
    _warn_always = builtins_bool(b)


def is_warn_always_enabled() -> bool:
    """The flag set by :func:`set_warn_always`."""
    return _warn_always


def is_tensor(obj) -> builtins_bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


# Functional forms PyTorch also offers with a Number first (``sub(1, x)`` is ``1 - x``).
_NUMBER_FIRST = frozenset(
    "add sub mul multiply true_divide remainder floor_divide "
    "bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift".split()
)
# Those PyTorch offers with a Number second only, whose refusal of a Number first lists both forms.
_NUMBER_SECOND = frozenset("eq ne lt le gt ge fmod copysign".split())


def _number_first(name: str, input, args: tuple, kwargs: dict):
    """``ferrograd.name(input, *args, **kwargs)`` for an ``input`` without the method ``name``:
    for a Python number where PyTorch takes one, the method of the 0-d tensor PyTorch makes of
    it (ranking lowest in type promotion); otherwise PyTorch's TypeError."""
    if name in _NUMBER_FIRST and isinstance(input, _numbers.Number):
        other = args[0] if args else kwargs.get("other")
        return getattr(_functions._number_as_tensor(input, other), name)(*args, **kwargs)
    if name in _NUMBER_SECOND:
        got = [type(a).__name__ for a in (input, *args)]
        got += [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), but expected one of:\n"
            " * (Tensor input, Tensor other, *, Tensor out = None)\n"
            " * (Tensor input, Number other, *, Tensor out = None)\n"
        )
    raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def _method_function(name: str):
    # Arguments other than tensors are looked at only once the call has failed, so calls on
    # tensors cost no more than the method call.
    def function(input, *args, out=None, **kwargs):
        if out is not None:
            return _out.call(name, function, (input, *args), kwargs, out)
        try:
            return getattr(input, name)(*args, **kwargs)
        except AttributeError:
            if hasattr(input, name):
                raise
            return _number_first(name, input, args, kwargs)

    function.__name__ = function.__qualname__ = name
    function.takes_out = True
    function.__doc__ = f"``ferrograd.{name}(input, ...)`` is ``input.{name}(...)``."
    return function


# The functional forms of tensor methods (``ferrograd.exp(x)`` is ``x.exp()``).
for _name in (
    "add sub mul multiply div true_divide maximum minimum eq ne lt le gt ge "
    "logical_and logical_or logical_xor logical_not neg negative abs exp log sqrt sin cos tanh "
    "sigmoid relu sgn conj round clamp clamp_min clamp_max clip isnan isfinite isinf sum mean view_as "
    "transpose swapaxes t unsqueeze squeeze flatten narrow select as_strided clone detach "
    "matmul mm bmm dot mv outer ger "
    "max min amax amin argmax argmin all any softmax log_softmax logsumexp var std norm "
    "split chunk unbind index_select gather scatter scatter_add scatter_reduce masked_fill tril triu movedim moveaxis diag diagonal "
    "exp2 expm1 log2 log10 log1p floor ceil trunc fix frac reciprocal rsqrt square sinh cosh asin arcsin "
    "acos arccos atan arctan sign erf atan2 arctan2 remainder floor_divide fmod hypot lerp addcmul addcdiv "
    "bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift isclose allclose equal nan_to_num "
    "angle conj_physical resolve_conj is_complex is_conj roll cumsum "
    "sort argsort topk prod cumprod erfc asinh arcsinh acosh arccosh atanh arctanh "
    "tan lgamma digamma erfinv i0 igamma igammac logaddexp logaddexp2 fmax fmin copysign nextafter heaviside "
    "signbit index_add index_put"
).split():
    globals()[_name] = _method_function(_name)
del _name


def reshape(input: Tensor, shape) -> Tensor:
    """``input.reshape(shape)``; ``shape`` may be given by keyword, as in PyTorch."""
    return input.reshape(shape)


def permute(input: Tensor, dims) -> Tensor:
    """``input.permute(dims)``; ``dims`` may be given by keyword, as in PyTorch."""
    return input.permute(dims)


def flip(input: Tensor, dims) -> Tensor:
    """``input.flip(dims)``; ``dims`` may be given by keyword, as in PyTorch."""
    return input.flip(dims)


def pow(input, exponent) -> Tensor:  # noqa: A001 - PyTorch's name
    """``input ** exponent``; either may be a number (``pow(2, x)`` is ``2 ** x``)."""
    if isinstance(input, Tensor):
        return input.pow(exponent)
    if not isinstance(exponent, Tensor):
        raise TypeError(
            f"pow() received an invalid combination of arguments - got ({type(input).__name__}, "
            f"{type(exponent).__name__}), but expected one of:\n"
            " * (Tensor input, Tensor exponent, *, Tensor out = None)\n"
            " * (Number self, Tensor exponent, *, Tensor out = None)\n"
            " * (Tensor input, Number exponent, *, Tensor out = None)\n"
        )
    return exponent.__rpow__(input)


def real(input: Tensor) -> Tensor:
    """The real parts of ``input``: a view sharing its memory."""
    return input.real


def imag(input: Tensor) -> Tensor:
    """The imaginary parts of a complex ``input``: a view sharing its memory."""
    return input.imag


def where(condition: Tensor, input=None, other=None):
    """Elements of ``input`` where ``condition`` holds, else of ``other``; with ``condition`` alone,
    the indices of its nonzero elements (``condition.nonzero(as_tuple=True)``)."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if input is None or other is None:
        got = ", ".join(type(a).__name__ for a in (condition, input, other) if a is not None)
        raise TypeError(
            f"where() received an invalid combination of arguments - got ({got}), but expected one of:\n"
            " * (Tensor condition)\n"
            " * (Tensor condition, Tensor input, Tensor other, *, Tensor out = None)\n"
            " * (Tensor condition, Number self, Tensor other)\n"
            " * (Tensor condition, Tensor input, Number other)\n"
            " * (Tensor condition, Number self, Number other)\n"
        )
    if not isinstance(input, Tensor):
        input = tensor(input, dtype=other.dtype if isinstance(other, Tensor) else None)
    return input.where(condition, other)


from . import _aliases, _compat, _functions  # noqa: E402
from ._functions import (  # noqa: E402
    argwhere,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    bincount,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    broadcast_to,
    bucketize,
    cartesian_prod,
    cdist,
    column_stack,
    combinations,
    corrcoef,
    count_nonzero,
    cov,
    cross,
    cumulative_trapezoid,
    deg2rad,
    diag_embed,
    diff,
    dist,
    divide,
    dstack,
    einsum,
    fliplr,
    flipud,
    float_power,
    histc,
    hstack,
    kron,
    kthvalue,
    logit,
    masked_select,
    median,
    meshgrid,
    mode,
    nanmean,
    nanmedian,
    nanquantile,
    nansum,
    nonzero,
    quantile,
    rad2deg,
    repeat_interleave,
    rot90,
    row_stack,
    searchsorted,
    sinc,
    subtract,
    tensor_split,
    tensordot,
    tile,
    trace,
    trapezoid,
    trapz,
    tril_indices,
    triu_indices,
    unflatten,
    unique,
    unique_consecutive,
    vstack,
    xlogy,
)

div = divide
from ._functions import _dtype_name  # noqa: E402

# Tensor methods for the functions PyTorch also offers as methods.
_TENSOR_METHODS = {
    "broadcast_to": broadcast_to,
    "corrcoef": corrcoef,
    "count_nonzero": count_nonzero,
    "cov": cov,
    "cross": cross,
    "deg2rad": deg2rad,
    "diag_embed": diag_embed,
    "diff": diff,
    "dist": dist,
    "divide": Tensor.div,
    "float_power": float_power,
    "fliplr": fliplr,
    "flipud": flipud,
    "kron": kron,
    "logit": logit,
    "nanmean": nanmean,
    "nansum": nansum,
    "rad2deg": rad2deg,
    "repeat_interleave": repeat_interleave,
    "rot90": rot90,
    "sinc": sinc,
    "subtract": subtract,
    "tensor_split": tensor_split,
    "tile": tile,
    "trace": trace,
    "unflatten": unflatten,
    "xlogy": xlogy,
    "argwhere": argwhere,
    "bincount": bincount,
    "histc": histc,
    "kthvalue": kthvalue,
    "masked_select": masked_select,
    "median": median,
    "mode": mode,
    "nanmedian": nanmedian,
    "nanquantile": nanquantile,
    "nonzero": nonzero,
    "quantile": quantile,
    "unique": unique,
    "unique_consecutive": unique_consecutive,
}
_TENSOR_METHODS.update(_functions.INPLACE_METHODS)
_TENSOR_METHODS.update(_aliases.METHODS)
_TENSOR_METHODS.update(_compat.METHODS)
globals().update(_aliases.FUNCTIONS)
globals().update(_compat.FUNCTIONS)
# Functions written in Python take NumPy's `axis=`/`keepdims=` as PyTorch's do (the
# compiled ones take them in their signatures).
_with_numpy_names: dict[int, object] = {}
for _name, _fn in [*globals().items(), *_TENSOR_METHODS.items()]:
    if isinstance(_fn, _types.FunctionType) and not _name.startswith("_"):
        _with_numpy_names.setdefault(id(_fn), _functions.numpy_names(_fn))
for _name, _fn in list(globals().items()):
    if not _name.startswith("_") and id(_fn) in _with_numpy_names:
        globals()[_name] = _with_numpy_names[id(_fn)]
for _name, _fn in _TENSOR_METHODS.items():
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _with_numpy_names.get(id(_fn), _fn))
del _name, _fn, _with_numpy_names

builtins_bool = _builtins.bool

from . import (  # noqa: E402,F401
    _dtype_info,
    accelerator,
    amp,
    autograd,
    backends,
    compiler,
    cpu,
    cuda,
    distributed,
    distributions,
    fft,
    func,
    jit,
    linalg,
    nn,
    optim,
    random,
    special,
    storage,
    testing,
    utils,
    version,
)
from .amp import GradScaler, autocast, is_autocast_enabled  # noqa: E402,F401

vmap = func.vmap
from ._dtype_info import (  # noqa: E402,F401
    can_cast,
    finfo,
    get_printoptions,
    iinfo,
    is_floating_point,
    promote_types,
    result_type,
    set_printoptions,
)
from .serialization import _deepcopy_tensor, _reduce_tensor, load, save  # noqa: E402

Tensor.__reduce_ex__ = _reduce_tensor
Tensor.__format__ = _aliases.format_tensor
Tensor.__deepcopy__ = _deepcopy_tensor

inverse = linalg.inv
det = linalg.det
logdet = linalg._logdet
slogdet = linalg._torch_slogdet
from ._spectral import istft, stft  # noqa: E402

Tensor.stft = stft
Tensor.istft = istft
from ._lowrank import pca_lowrank, svd_lowrank  # noqa: E402,F401
from .storage import TypedStorage, UntypedStorage  # noqa: E402,F401
from .utils.dlpack import from_dlpack  # noqa: E402,F401

Tensor.__dlpack__ = utils.dlpack._dlpack
Tensor.__dlpack_device__ = utils.dlpack._dlpack_device
lu = linalg._torch_lu
lu_solve = linalg._torch_lu_solve
lu_unpack = linalg.lu_unpack
geqrf = linalg._torch_geqrf
orgqr = linalg.householder_product
ormqr = linalg._torch_ormqr
for _name, _fn in {
    "geqrf": geqrf,
    "orgqr": orgqr,
    "ormqr": ormqr,
    "inverse": inverse,
    "det": det,
    "logdet": logdet,
    "slogdet": slogdet,
    "lu": lu,
    "lu_solve": lu_solve,
}.items():
    setattr(Tensor, _name, _fn)
del _name, _fn

device = _dtype_info.device
_CPU = device("cpu")
Tensor.device = property(lambda self: _CPU, doc="The device the tensor is on: always the CPU.")
# NumPy then leaves mixed operations to the tensor (``np.float32(2) * x`` is a tensor), as in PyTorch.
Tensor.__array_priority__ = 1000
Tensor.untyped_storage = storage._untyped_storage
Tensor.storage = storage._typed_storage


def _cuda(self, device=None, non_blocking: builtins_bool = False, **_):
    """No CUDA device exists: raises as PyTorch does when built without CUDA."""
    raise AssertionError("Torch not compiled with CUDA enabled")


Tensor.cuda = _cuda

# ``ferrograd.name_(input, ...)`` for PyTorch's top-level in-place functions whose method exists.
for _name in (
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ atanh_ "
    "ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ detach_ erf_ erfc_ exp2_ exp_ expm1_ "
    "fill_ fix_ floor_ frac_ gcd_ index_put_ lcm_ ldexp_ log10_ log1p_ log2_ log_ logit_ nan_to_num_ "
    "neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ "
    "tan_ tanh_ trunc_ xlogy_ addmv_ conj_physical_ zero_ i0_ as_strided_ resize_as_"
).split():
    if hasattr(Tensor, _name) and _name not in globals():
        globals()[_name] = _method_function(_name)
del _name


def selu_(input: Tensor) -> Tensor:
    """In-place ``selu``."""
    return nn.functional.selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``celu``."""
    return nn.functional.celu(input, alpha, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place ``threshold``."""
    return nn.functional.threshold(input, threshold, value, inplace=True)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``dropout(input, p, train)``."""
    return nn.functional.dropout(input, p, train, inplace=True)


from . import _out  # noqa: E402

# ``out=`` for the functions PyTorch gives it, once every name below is bound.
_out.install(vars(linalg), _out.LINALG, exact=True)
_out.install(vars(special), _out.SPECIAL)
_out.install(vars(fft), _out.FFT, factories=_out.FFT_FACTORIES)
_out.install(globals(), _out.TOP_LEVEL)

from . import functional  # noqa: E402,F401  (after every name it re-exports)
from ._aten import (  # noqa: E402,F401
    alpha_dropout_,
    constant_pad_nd,
    convolution,
    empty_permuted,
    feature_alpha_dropout_,
    feature_dropout,
    feature_dropout_,
    gru_cell,
    lstm_cell,
    native_batch_norm,
    native_channel_shuffle,
    native_dropout,
    native_group_norm,
    native_layer_norm,
    rnn_relu_cell,
    rnn_tanh_cell,
    rrelu_,
)
