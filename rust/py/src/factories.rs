//! Tensor creation: from NumPy memory and by shape.

use crate::convert::{dtype_arg, sizes};
use crate::errors::IntoPyResult;
use crate::tensor::PyTensor;
use ferrograd_core::tensor::{Layout, Storage};
use ferrograd_core::{DType, Scalar, Tensor};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::sync::Arc;

/// Holds the NumPy array whose memory a tensor shares.
struct NumpyOwner(#[allow(dead_code)] Py<PyAny>);

fn dtype_from_typestr(s: &str) -> Option<DType> {
    Some(match s {
        "|b1" => DType::Bool,
        "<i8" => DType::Int64,
        "<f4" => DType::Float32,
        "<f8" => DType::Float64,
        "<c8" => DType::Complex64,
        "<c16" => DType::Complex128,
        _ => return None,
    })
}

/// `from_numpy(array)`: a tensor sharing the array's memory.
#[pyfunction]
fn from_numpy(array: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
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
            "can't convert np.ndarray of type {}. The only supported types are: float64, float32, int64, bool, complex64 and complex128.",
            array.getattr("dtype").and_then(|d| d.str()).map(|s| s.to_string()).unwrap_or(typestr.clone())
        ))
    })?;
    let (ptr, _readonly): (usize, bool) = get("data")?.extract()?;
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
    let len = if numel == 0 {
        0
    } else {
        1 + shape
            .iter()
            .zip(&strides)
            .map(|(&d, &s)| (d - 1) * s as usize)
            .sum::<usize>()
    };
    if ptr % dtype.itemsize().min(8) != 0 {
        return Err(PyValueError::new_err(
            "from_numpy needs an array aligned to its element size; pass array.copy()",
        ));
    }
    let owner = NumpyOwner(array.clone().unbind());
    // SAFETY: the array interface describes `len` elements of `dtype` at
    // `ptr`, aligned (checked above); the NumPy array kept in `owner` owns
    // that memory and NumPy never moves an array's data.
    let storage = unsafe { Storage::from_foreign(ptr as *mut u8, len, dtype, Box::new(owner)) };
    let layout = Layout {
        shape: shape.into(),
        strides: strides.into(),
        offset: 0,
    };
    Ok(Tensor::from_parts(Arc::new(storage), layout).into())
}

fn finish(t: Tensor, requires_grad: bool) -> PyResult<PyTensor> {
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
    sizes(size)?
        .into_iter()
        .map(|d| {
            usize::try_from(d).map_err(|_| {
                PyRuntimeError::new_err(format!(
                    "Trying to create tensor with negative dimension {d}: {:?}",
                    sizes(size).unwrap_or_default()
                ))
            })
        })
        .collect()
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
        Tensor::zeros(&shape_of(size)?, dtype_or(dtype, DType::Float32)?),
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
            dtype_or(dtype, DType::Float32)?,
        ),
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
    let value = crate::convert::scalar(fill_value)?;
    let shape = shape_of(&PyTuple::new(size.py(), [size])?)?;
    finish(
        Tensor::full(&shape, value, dtype_or(dtype, value.default_dtype())?),
        requires_grad,
    )
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(from_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(zeros, m)?)?;
    m.add_function(wrap_pyfunction!(ones, m)?)?;
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    m.add_function(wrap_pyfunction!(full, m)?)?;
    Ok(())
}
