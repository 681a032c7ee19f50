//! `ferrograd.float32` and friends.

use crate::convert::dtype_arg;
use crate::errors::IntoPyResult;
use ferrograd_core::DType;
use pyo3::prelude::*;

#[pyclass(name = "dtype", module = "ferrograd", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyDType(pub DType);

#[pymethods]
impl PyDType {
    fn __repr__(&self) -> String {
        self.0.to_string()
    }

    #[getter]
    fn is_floating_point(&self) -> bool {
        self.0.is_floating_point()
    }

    #[getter]
    fn is_complex(&self) -> bool {
        self.0.is_complex()
    }

    #[getter]
    fn is_signed(&self) -> bool {
        self.0 != DType::Bool
    }

    #[getter]
    fn itemsize(&self) -> usize {
        self.0.itemsize()
    }

    fn __reduce__(&self) -> (String, ()) {
        (self.0.name().to_string(), ())
    }
}

/// `set_default_dtype(d)`: the dtype of new floating tensors and of Python
/// floats in arithmetic with integer tensors (float32 or float64).
#[pyfunction]
fn set_default_dtype(d: &Bound<'_, PyAny>) -> PyResult<()> {
    DType::set_default_float(dtype_arg(d)?).py()
}

#[pyfunction]
fn get_default_dtype() -> PyDType {
    PyDType(DType::default_float())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(set_default_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(get_default_dtype, m)?)?;
    let aliases = [
        ("bool", DType::Bool),
        ("int64", DType::Int64),
        ("long", DType::Int64),
        ("float32", DType::Float32),
        ("float", DType::Float32),
        ("float64", DType::Float64),
        ("double", DType::Float64),
        ("complex64", DType::Complex64),
        ("cfloat", DType::Complex64),
        ("complex128", DType::Complex128),
        ("cdouble", DType::Complex128),
    ];
    for (name, d) in aliases {
        m.add(name, PyDType(d))?;
    }
    Ok(())
}
