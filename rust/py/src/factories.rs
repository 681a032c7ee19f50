//! Tensor creation: from NumPy memory and by shape.

use crate::convert::{dtype_arg, operand, scalar, sizes};
use crate::dtype::dtype_from_typestr;
use crate::errors::IntoPyResult;
use crate::memory_format::PyMemoryFormat;
use crate::tensor::{maybe_detach, PyTensor};
use ferrograd_core::ops::{creation, random};
use ferrograd_core::tensor::{layout, Layout, MemoryFormat, Storage};
use ferrograd_core::{DType, Scalar, Tensor};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyUserWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Holds the NumPy array whose memory a tensor shares.
struct NumpyOwner(#[allow(dead_code)] Py<PyAny>);

/// Set once `from_numpy` has warned about a non-writable array: like
/// PyTorch, it warns once per program.
static WARNED_READ_ONLY_ARRAY: AtomicBool = AtomicBool::new(false);

/// `from_numpy(array)`: a tensor sharing the array's memory. A non-writable
/// array gives a read-only tensor: in-place writes to it raise.
#[pyfunction]
fn from_numpy(array: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    share_array(array, true)
}

/// `from_numpy` without its warning about non-writable arrays, for
/// `frombuffer` and `from_dlpack`, whose arrays stand for another source.
#[pyfunction]
fn _share_array(array: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    share_array(array, false)
}

fn share_array(array: &Bound<'_, PyAny>, warn_read_only: bool) -> PyResult<PyTensor> {
    let iface = array.getattr("__array_interface__").map_err(|_| {
        PyTypeError::new_err(format!(
            "expected np.ndarray (got {})",
            array
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let iface = iface.downcast::<PyDict>()?;
    let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        iface
            .get_item(k)?
            .ok_or_else(|| PyValueError::new_err(format!("array interface lacks {k}")))
    };
    let typestr: String = get("typestr")?.extract()?;
    let dtype = dtype_from_typestr(&typestr).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "can't convert np.ndarray of type {}. The only supported types are: float64, float32, complex64, complex128, int64, int32, int16, int8, uint8, and bool.",
            array.getattr("dtype").and_then(|d| d.str()).map(|s| s.to_string()).unwrap_or(typestr.clone())
        ))
    })?;
    let (ptr, read_only): (usize, bool) = get("data")?.extract()?;
    let shape: Vec<usize> = get("shape")?.extract()?;
    let item = dtype.itemsize() as isize;
    let strides: Vec<isize> = match iface.get_item("strides")? {
        Some(s) if !s.is_none() => {
            let bytes: Vec<isize> = s.extract()?;
            if bytes.iter().any(|&b| b < 0) {
                return Err(PyValueError::new_err(
                    "At least one stride in the given numpy array is negative, and tensors with negative strides are not currently supported. (You can probably work around this by making a copy of your array  with array.copy().) ",
                ));
            }
            if bytes.iter().any(|&b| b % item != 0) {
                return Err(PyValueError::new_err("given numpy array strides not a multiple of the element byte size. Copy the numpy array to reallocate the memory."));
            }
            bytes.iter().map(|b| b / item).collect()
        }
        _ => ferrograd_core::tensor::layout::contiguous_strides(&shape).to_vec(),
    };
    let numel: usize = shape.iter().product();
    if numel == 0 {
        // Nothing to share; an empty exporter's data pointer need not be aligned.
        return Ok(Tensor::zeros(&shape, dtype).into());
    }
    let len = 1 + shape
        .iter()
        .zip(&strides)
        .map(|(&d, &s)| (d - 1) * s as usize)
        .sum::<usize>();
    if ptr % dtype.itemsize().min(8) != 0 {
        return Err(PyValueError::new_err(
            "from_numpy needs an array aligned to its element size; pass array.copy()",
        ));
    }
    if read_only && warn_read_only && !WARNED_READ_ONLY_ARRAY.swap(true, Ordering::Relaxed) {
        PyErr::warn(
            array.py(),
            &array.py().get_type::<PyUserWarning>(),
            c"The given NumPy array is not writable, and ferrograd does not support writing to it: in-place operations on this tensor raise an error. You may want to copy the array to protect its data or make it writable before converting it to a tensor. This type of warning will be suppressed for the rest of this program.",
            1,
        )?;
    }
    let owner = NumpyOwner(array.clone().unbind());
    // SAFETY: the array interface describes `len` elements of `dtype` at
    // `ptr`, aligned (checked above); the NumPy array kept in `owner` owns
    // that memory and NumPy never moves an array's data. The storage is
    // written through only when the array is writable.
    let storage =
        unsafe { Storage::from_foreign(ptr as *mut u8, len, dtype, Box::new(owner), !read_only) };
    let layout = Layout {
        shape: shape.into(),
        strides: strides.into(),
        offset: 0,
    };
    Ok(Tensor::from_parts(Arc::new(storage), layout).into())
}

fn finish(t: Tensor, requires_grad: bool) -> PyResult<PyTensor> {
    if requires_grad && !t.dtype().is_differentiable() {
        // A factory's check, worded as PyTorch's factories word it.
        return Err(PyRuntimeError::new_err(
            "Only Tensors of floating point and complex dtype can require gradients",
        ));
    }
    t.set_requires_grad(requires_grad).py()?;
    Ok(t.into())
}

fn dtype_or(dtype: Option<&Bound<'_, PyAny>>, default: DType) -> PyResult<DType> {
    match dtype {
        Some(d) if !d.is_none() => dtype_arg(d),
        _ => Ok(default),
    }
}

fn shape_of(size: &Bound<'_, PyTuple>) -> PyResult<Vec<usize>> {
    let shape = sizes(size)?
        .into_iter()
        .map(|d| {
            usize::try_from(d).map_err(|_| {
                PyRuntimeError::new_err(format!(
                    "Trying to create tensor with negative dimension {d}: {:?}",
                    sizes(size).unwrap_or_default()
                ))
            })
        })
        .collect::<PyResult<Vec<usize>>>()?;
    layout::check_numel(&shape).py()?;
    Ok(shape)
}

#[pyfunction]
#[pyo3(signature = (*size, dtype=None, requires_grad=false, device=None))]
fn zeros(
    size: &Bound<'_, PyTuple>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = device;
    finish(
        Tensor::full(
            &shape_of(size)?,
            Scalar::Int(0),
            dtype_or(dtype, DType::default_float())?,
        )
        .py()?,
        requires_grad,
    )
}

#[pyfunction]
#[pyo3(signature = (*size, dtype=None, requires_grad=false, device=None))]
fn ones(
    size: &Bound<'_, PyTuple>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = device;
    finish(
        Tensor::full(
            &shape_of(size)?,
            Scalar::Int(1),
            dtype_or(dtype, DType::default_float())?,
        )
        .py()?,
        requires_grad,
    )
}

/// `empty` gives zeroed memory: reading it is defined, if meaningless.
#[pyfunction]
#[pyo3(signature = (*size, dtype=None, requires_grad=false, device=None))]
fn empty(
    size: &Bound<'_, PyTuple>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    zeros(size, dtype, requires_grad, device)
}

#[pyfunction]
#[pyo3(signature = (size, fill_value, *, dtype=None, requires_grad=false, device=None))]
fn full(
    size: &Bound<'_, PyAny>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = device;
    let value = scalar(fill_value)?;
    let shape = shape_of(&PyTuple::new(size.py(), [size])?)?;
    finish(
        Tensor::full(&shape, value, dtype_or(dtype, value.default_dtype())?).py()?,
        requires_grad,
    )
}

fn dtype_opt(dtype: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
    dtype.filter(|d| !d.is_none()).map(dtype_arg).transpose()
}

/// `arange(end)` or `arange(start, end, step=1)`.
#[pyfunction]
#[pyo3(signature = (start, end=None, step=None, *, dtype=None, requires_grad=false, device=None, layout=None))]
#[allow(clippy::too_many_arguments)]
fn arange(
    start: &Bound<'_, PyAny>,
    end: Option<&Bound<'_, PyAny>>,
    step: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = (device, layout);
    let (s, e) = match end.filter(|e| !e.is_none()) {
        Some(e) => (scalar(start)?, scalar(e)?),
        None => (Scalar::Int(0), scalar(start)?),
    };
    let st = step.map(scalar).transpose()?.unwrap_or(Scalar::Int(1));
    finish(
        creation::arange(s, e, st, dtype_opt(dtype)?).py()?,
        requires_grad,
    )
}

#[pyfunction]
#[pyo3(signature = (start, end, steps, *, dtype=None, requires_grad=false, device=None))]
fn linspace(
    start: &Bound<'_, PyAny>,
    end: &Bound<'_, PyAny>,
    steps: i64,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = device;
    let (s, e) = (scalar(start)?, scalar(end)?);
    let complex = matches!(s, Scalar::Complex(_)) || matches!(e, Scalar::Complex(_));
    let default = if complex {
        DType::default_complex()
    } else {
        DType::default_float()
    };
    finish(
        creation::linspace(s, e, steps, dtype_or(dtype, default)?).py()?,
        requires_grad,
    )
}

#[pyfunction]
#[pyo3(signature = (n, m=None, *, dtype=None, requires_grad=false, device=None))]
fn eye(
    n: i64,
    m: Option<i64>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = device;
    finish(
        creation::eye(n, m, dtype_or(dtype, DType::default_float())?).py()?,
        requires_grad,
    )
}

macro_rules! like_factories {
    ($($name:ident => $value:expr;)*) => {$(
        #[pyfunction]
        #[pyo3(signature = (input, *, dtype=None, requires_grad=false, device=None, memory_format=None))]
        fn $name(
            input: PyRef<'_, PyTensor>,
            dtype: Option<&Bound<'_, PyAny>>,
            requires_grad: bool,
            device: Option<&Bound<'_, PyAny>>,
            memory_format: Option<PyMemoryFormat>,
        ) -> PyResult<PyTensor> {
            let _ = device;
            let like = creation::full_like(&input.tensor(), $value, dtype_opt(dtype)?, format_or_preserve(memory_format));
            finish(like.py()?, requires_grad)
        }
    )*};
}

like_factories! {
    zeros_like => Scalar::Int(0);
    ones_like => Scalar::Int(1);
    empty_like => Scalar::Int(0);
}

#[pyfunction]
#[pyo3(signature = (input, fill_value, *, dtype=None, requires_grad=false, device=None, memory_format=None))]
fn full_like(
    input: PyRef<'_, PyTensor>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
    memory_format: Option<PyMemoryFormat>,
) -> PyResult<PyTensor> {
    let _ = device;
    let value = scalar(fill_value)?;
    let format = format_or_preserve(memory_format);
    finish(
        creation::full_like(&input.tensor(), value, dtype_opt(dtype)?, format).py()?,
        requires_grad,
    )
}

/// A random number generator: `ferrograd.Generator()` makes one of the
/// user's own; `default_generator` (which `manual_seed` returns) is the
/// global one.
#[pyclass(name = "Generator", module = "ferrograd", frozen)]
pub struct PyGenerator(random::Generator);

#[pymethods]
impl PyGenerator {
    #[new]
    #[pyo3(signature = (device=None))]
    fn new(device: Option<&Bound<'_, PyAny>>) -> PyGenerator {
        let _ = device;
        PyGenerator(random::Generator::default())
    }
    fn manual_seed<'py>(
        slf: PyRef<'py, Self>,
        seed: &Bound<'_, PyAny>,
    ) -> PyResult<PyRef<'py, Self>> {
        slf.0.manual_seed(seed_arg(seed)?);
        Ok(slf)
    }
    fn seed(&self) -> u64 {
        self.0.seed()
    }
    fn initial_seed(&self) -> u64 {
        self.0.initial_seed()
    }
    fn get_state(&self) -> PyResult<PyTensor> {
        let state = self.0.state();
        Ok(Tensor::from_vec(state.to_vec(), &[state.len()])
            .py()?
            .into())
    }
    fn set_state<'py>(
        slf: PyRef<'py, Self>,
        new_state: PyRef<'_, PyTensor>,
    ) -> PyResult<PyRef<'py, Self>> {
        slf.0.set_state(&state_arg(&new_state)?).py()?;
        Ok(slf)
    }
    #[getter]
    fn device(&self) -> &'static str {
        "cpu"
    }
}

/// Runs `f` drawing from `generator` (a `ferrograd.Generator`) when one is
/// given, else from the global generator.
pub fn drawing_from<R>(
    generator: Option<&Bound<'_, PyAny>>,
    f: impl FnOnce() -> PyResult<R>,
) -> PyResult<R> {
    match generator.filter(|g| !g.is_none()) {
        Some(g) => {
            let g = g.downcast::<PyGenerator>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "expected a ferrograd.Generator as generator, but got {}",
                    g.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })?;
            g.get().0.in_force(f)
        }
        None => f(),
    }
}

/// A seed as PyTorch takes it: any int that fits in 64 bits, signed or not.
fn seed_arg(seed: &Bound<'_, PyAny>) -> PyResult<u64> {
    let s: i128 = seed.extract()?;
    if !(-(1i128 << 63)..(1i128 << 64)).contains(&s) {
        return Err(PyRuntimeError::new_err("Overflow when unpacking long long"));
    }
    Ok(s as u64)
}

/// A generator state tensor from `get_state`/`get_rng_state`.
fn state_arg(state: &PyTensor) -> PyResult<Vec<i64>> {
    if state.tensor().dtype() != DType::Int64 {
        return Err(PyTypeError::new_err(
            "RNG state must be a ferrograd.LongTensor from get_rng_state()",
        ));
    }
    Ok(state.tensor().to_vec::<i64>())
}

#[pyfunction]
fn manual_seed(seed: &Bound<'_, PyAny>) -> PyResult<PyGenerator> {
    random::manual_seed(seed_arg(seed)?);
    Ok(PyGenerator(random::Generator::global()))
}

#[pyfunction]
fn seed() -> u64 {
    random::seed()
}

#[pyfunction]
fn initial_seed() -> u64 {
    random::initial_seed()
}

/// The generator's state as an int64 tensor, for `set_rng_state`.
#[pyfunction]
fn get_rng_state() -> PyResult<PyTensor> {
    let state = random::rng_state();
    Ok(PyTensor::from(
        Tensor::from_vec(state.to_vec(), &[state.len()]).py()?,
    ))
}

#[pyfunction]
fn set_rng_state(new_state: PyRef<'_, PyTensor>) -> PyResult<()> {
    random::set_rng_state(&state_arg(&new_state)?).py()
}

fn sample(
    py: Python<'_>,
    shape: Vec<usize>,
    dtype: DType,
    requires_grad: bool,
    init: impl FnOnce(&Tensor) -> ferrograd_core::Result<()> + Send,
) -> PyResult<PyTensor> {
    let n = shape.iter().product();
    finish(
        maybe_detach(py, n, || random::sampled(&shape, dtype, init)).py()?,
        requires_grad,
    )
}

#[pyfunction]
#[pyo3(signature = (*size, generator=None, dtype=None, requires_grad=false, device=None))]
fn rand(
    py: Python<'_>,
    size: &Bound<'_, PyTuple>,
    generator: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = device;
    drawing_from(generator, || {
        let dtype = dtype_or(dtype, DType::default_float())?;
        sample(py, shape_of(size)?, dtype, requires_grad, |t| {
            random::uniform_(t, 0.0, 1.0)
        })
    })
}

#[pyfunction]
#[pyo3(signature = (*size, generator=None, dtype=None, requires_grad=false, device=None))]
fn randn(
    py: Python<'_>,
    size: &Bound<'_, PyTuple>,
    generator: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = device;
    drawing_from(generator, || {
        let dtype = dtype_or(dtype, DType::default_float())?;
        sample(py, shape_of(size)?, dtype, requires_grad, |t| {
            random::normal_(t, 0.0, 1.0)
        })
    })
}

/// `randint(high, size)` or `randint(low, high, size)`.
#[pyfunction]
#[pyo3(signature = (*args, generator=None, dtype=None, requires_grad=false, device=None))]
fn randint(
    py: Python<'_>,
    args: &Bound<'_, PyTuple>,
    generator: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = device;
    drawing_from(generator, || {
        let (low, high, size) = match args.len() {
            2 => (0, args.get_item(0)?.extract()?, args.get_item(1)?),
            3 => (
                args.get_item(0)?.extract()?,
                args.get_item(1)?.extract()?,
                args.get_item(2)?,
            ),
            n => {
                return Err(PyTypeError::new_err(format!(
                    "randint() takes 2 or 3 positional arguments but {n} were given"
                )))
            }
        };
        let shape = shape_of(&PyTuple::new(py, [size])?)?;
        let dtype = dtype_or(dtype, DType::Int64)?;
        sample(py, shape, dtype, requires_grad, |t| {
            random::random_(t, low, high)
        })
    })
}

/// A tensor of `input`'s shape (and dtype unless given) drawn by `draw`,
/// laid out for the memory format (see `creation::made_like`).
fn sample_like(
    py: Python<'_>,
    input: &PyTensor,
    (dtype, format): (Option<&Bound<'_, PyAny>>, Option<PyMemoryFormat>),
    requires_grad: bool,
    draw: impl FnOnce(&Tensor) -> ferrograd_core::Result<()> + Send,
) -> PyResult<PyTensor> {
    let input = input.tensor();
    let dtype = dtype_or(dtype, input.dtype())?;
    let format = format_or_preserve(format);
    let out = maybe_detach(py, input.numel(), || {
        creation::made_like(&input, format, |shape| random::sampled(shape, dtype, draw))
    });
    finish(out.py()?, requires_grad)
}

/// A `*_like` factory's `memory_format`: `preserve_format` unless given.
fn format_or_preserve(format: Option<PyMemoryFormat>) -> MemoryFormat {
    format.map_or(MemoryFormat::Preserve, |f| f.0)
}

#[pyfunction]
#[pyo3(signature = (input, *, dtype=None, requires_grad=false, device=None, memory_format=None))]
fn rand_like(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
    memory_format: Option<PyMemoryFormat>,
) -> PyResult<PyTensor> {
    let _ = device;
    sample_like(py, &input, (dtype, memory_format), requires_grad, |t| {
        random::uniform_(t, 0.0, 1.0)
    })
}

#[pyfunction]
#[pyo3(signature = (input, *, dtype=None, requires_grad=false, device=None, memory_format=None))]
fn randn_like(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
    memory_format: Option<PyMemoryFormat>,
) -> PyResult<PyTensor> {
    let _ = device;
    sample_like(py, &input, (dtype, memory_format), requires_grad, |t| {
        random::normal_(t, 0.0, 1.0)
    })
}

/// `randint_like(input, high)` or `randint_like(input, low, high)`.
#[pyfunction]
#[pyo3(signature = (input, low_or_high, high=None, *, dtype=None, requires_grad=false, device=None, memory_format=None))]
#[allow(clippy::too_many_arguments)]
fn randint_like(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    low_or_high: i64,
    high: Option<i64>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
    memory_format: Option<PyMemoryFormat>,
) -> PyResult<PyTensor> {
    let _ = device;
    let (low, high) = match high {
        Some(h) => (low_or_high, h),
        None => (0, low_or_high),
    };
    sample_like(py, &input, (dtype, memory_format), requires_grad, |t| {
        random::random_(t, low, high)
    })
}

/// `bernoulli(input)`: 1 with each element's probability.
#[pyfunction]
#[pyo3(signature = (input, p=None, *, generator=None))]
fn bernoulli(
    input: PyRef<'_, PyTensor>,
    p: Option<f64>,
    generator: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    drawing_from(generator, || match p {
        Some(p) => Ok(random::bernoulli_with_probability(&input.tensor(), p)
            .py()?
            .into()),
        None => Ok(random::bernoulli(&input.tensor()).py()?.into()),
    })
}

/// `normal(mean, std)` with tensors, or `normal(mean, std, size)` with numbers.
#[pyfunction]
#[pyo3(signature = (mean, std=None, size=None, *, generator=None, dtype=None, requires_grad=false, device=None))]
#[allow(clippy::too_many_arguments)]
fn normal(
    py: Python<'_>,
    mean: &Bound<'_, PyAny>,
    std: Option<&Bound<'_, PyAny>>,
    size: Option<&Bound<'_, PyAny>>,
    generator: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = device;
    drawing_from(generator, || {
        let std_obj = match std {
            Some(s) => s.clone(),
            None => 1.0f64.into_pyobject(py)?.into_any(),
        };
        if let Some(size) = size.filter(|s| !s.is_none()) {
            let (m, s) = (scalar(mean)?.as_f64(), scalar(&std_obj)?.as_f64());
            let shape = shape_of(&PyTuple::new(py, [size])?)?;
            let dtype = dtype_or(dtype, DType::default_float())?;
            return sample(py, shape, dtype, requires_grad, |t| {
                random::normal_(t, m, s)
            });
        }
        let (m, s) = (operand(mean)?, operand(&std_obj)?);
        if m.is_wrapped_number() && s.is_wrapped_number() {
            return Err(PyTypeError::new_err(
            "normal() received an invalid combination of arguments: with float mean and std, pass size",
        ));
        }
        // The sample is recorded from tensor parameters that require grad.
        let sample = random::normal_tensors(&m, &s).py()?;
        match requires_grad {
            true => finish(sample, true),
            false => Ok(sample.into()),
        }
    })
}

#[pyfunction]
#[pyo3(signature = (input, num_samples, replacement=false, *, generator=None))]
fn multinomial(
    input: PyRef<'_, PyTensor>,
    num_samples: i64,
    replacement: bool,
    generator: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    drawing_from(generator, || {
        Ok(
            random::multinomial(&input.tensor(), num_samples, replacement)
                .py()?
                .into(),
        )
    })
}

#[pyfunction]
#[pyo3(signature = (n, *, generator=None, dtype=None, requires_grad=false, device=None))]
fn randperm(
    n: i64,
    generator: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = device;
    drawing_from(generator, || {
        finish(
            random::randperm(n, dtype_or(dtype, DType::Int64)?).py()?,
            requires_grad,
        )
    })
}

/// `t.new_zeros(size)` and friends: new tensors with `t`'s dtype by default.
#[pymethods]
impl PyTensor {
    #[pyo3(signature = (*size, dtype=None, requires_grad=false, device=None))]
    fn new_zeros(
        &self,
        size: &Bound<'_, PyTuple>,
        dtype: Option<&Bound<'_, PyAny>>,
        requires_grad: bool,
        device: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = device;
        let dtype = dtype_or(dtype, self.tensor().dtype())?;
        finish(
            Tensor::full(&shape_of(size)?, Scalar::Int(0), dtype).py()?,
            requires_grad,
        )
    }
    #[pyo3(signature = (*size, dtype=None, requires_grad=false, device=None))]
    fn new_empty(
        &self,
        size: &Bound<'_, PyTuple>,
        dtype: Option<&Bound<'_, PyAny>>,
        requires_grad: bool,
        device: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        self.new_zeros(size, dtype, requires_grad, device)
    }
    #[pyo3(signature = (*size, dtype=None, requires_grad=false, device=None))]
    fn new_ones(
        &self,
        size: &Bound<'_, PyTuple>,
        dtype: Option<&Bound<'_, PyAny>>,
        requires_grad: bool,
        device: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = device;
        let dtype = dtype_or(dtype, self.tensor().dtype())?;
        finish(
            Tensor::full(&shape_of(size)?, Scalar::Int(1), dtype).py()?,
            requires_grad,
        )
    }
    #[pyo3(signature = (size, fill_value, *, dtype=None, requires_grad=false, device=None))]
    fn new_full(
        &self,
        size: &Bound<'_, PyAny>,
        fill_value: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        requires_grad: bool,
        device: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = device;
        let shape = shape_of(&PyTuple::new(size.py(), [size])?)?;
        let dtype = dtype_or(dtype, self.tensor().dtype())?;
        finish(
            Tensor::full(&shape, scalar(fill_value)?, dtype).py()?,
            requires_grad,
        )
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(from_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(_share_array, m)?)?;
    m.add_function(wrap_pyfunction!(zeros, m)?)?;
    m.add_function(wrap_pyfunction!(get_rng_state, m)?)?;
    m.add_function(wrap_pyfunction!(set_rng_state, m)?)?;
    m.add_function(wrap_pyfunction!(ones, m)?)?;
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    m.add_function(wrap_pyfunction!(full, m)?)?;
    m.add_function(wrap_pyfunction!(arange, m)?)?;
    m.add_function(wrap_pyfunction!(linspace, m)?)?;
    m.add_function(wrap_pyfunction!(eye, m)?)?;
    m.add_function(wrap_pyfunction!(zeros_like, m)?)?;
    m.add_function(wrap_pyfunction!(ones_like, m)?)?;
    m.add_function(wrap_pyfunction!(empty_like, m)?)?;
    m.add_function(wrap_pyfunction!(full_like, m)?)?;
    m.add_function(wrap_pyfunction!(manual_seed, m)?)?;
    m.add_function(wrap_pyfunction!(seed, m)?)?;
    m.add_function(wrap_pyfunction!(initial_seed, m)?)?;
    m.add_function(wrap_pyfunction!(rand, m)?)?;
    m.add_function(wrap_pyfunction!(randn, m)?)?;
    m.add_function(wrap_pyfunction!(randint, m)?)?;
    m.add_function(wrap_pyfunction!(rand_like, m)?)?;
    m.add_function(wrap_pyfunction!(randn_like, m)?)?;
    m.add_function(wrap_pyfunction!(randint_like, m)?)?;
    m.add_function(wrap_pyfunction!(bernoulli, m)?)?;
    m.add_function(wrap_pyfunction!(normal, m)?)?;
    m.add_function(wrap_pyfunction!(multinomial, m)?)?;
    m.add_function(wrap_pyfunction!(randperm, m)?)?;
    m.add_class::<PyGenerator>()?;
    m.add(
        "default_generator",
        PyGenerator(random::Generator::global()),
    )?;
    Ok(())
}
