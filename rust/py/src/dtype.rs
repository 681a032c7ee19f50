//! `ferrograd.float32` and friends.

use crate::convert::dtype_arg;
use crate::errors::IntoPyResult;
use ferrograd_core::DType;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

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
        !matches!(self.0, DType::Bool | DType::UInt8)
    }

    /// PyTorch's scalar type name ("Long"), for the Python layer's messages.
    #[getter]
    fn _scalar_type_name(&self) -> &'static str {
        self.0.scalar_type_name()
    }

    /// The C++ element type name ("long int"), for the Python layer's messages.
    #[getter]
    fn _cpp_name(&self) -> &'static str {
        self.0.cpp_name()
    }

    #[getter]
    fn itemsize(&self) -> usize {
        self.0.itemsize()
    }

    /// Pickles as a reference to the module attribute of the same name,
    /// which unpickles to the very same object.
    fn __reduce__(&self) -> &'static str {
        self.0.name()
    }
}

/// `set_default_dtype(d)`: the dtype of new floating tensors and of Python
/// floats in arithmetic with integer tensors (float32 or float64).
#[pyfunction]
fn set_default_dtype(d: &Bound<'_, PyAny>) -> PyResult<()> {
    DType::set_default_float(dtype_arg(d)?).py()
}

#[pyfunction]
fn get_default_dtype(py: Python<'_>) -> PyResult<Py<PyDType>> {
    dtype_object(py, DType::default_float())
}

/// NumPy's `__array_interface__` type strings of the dtypes.
const TYPESTRS: [(DType, &str); 10] = [
    (DType::Bool, "|b1"),
    (DType::UInt8, "|u1"),
    (DType::Int8, "|i1"),
    (DType::Int16, "<i2"),
    (DType::Int32, "<i4"),
    (DType::Int64, "<i8"),
    (DType::Float32, "<f4"),
    (DType::Float64, "<f8"),
    (DType::Complex64, "<c8"),
    (DType::Complex128, "<c16"),
];

pub fn typestr(d: DType) -> &'static str {
    TYPESTRS
        .iter()
        .find(|(t, _)| *t == d)
        .map(|(_, s)| *s)
        .expect("every dtype has a type string")
}

pub fn dtype_from_typestr(s: &str) -> Option<DType> {
    TYPESTRS.iter().find(|(_, t)| *t == s).map(|(d, _)| *d)
}

/// `promote_types(type1, type2)`.
#[pyfunction]
fn promote_types(py: Python<'_>, type1: PyDType, type2: PyDType) -> PyResult<Py<PyDType>> {
    dtype_object(py, DType::promote(type1.0, type2.0))
}

/// The one Python object of each dtype, so that `x.dtype is ferrograd.float32`
/// holds as it does in PyTorch.
pub fn dtype_object(py: Python<'_>, d: DType) -> PyResult<Py<PyDType>> {
    static OBJECTS: PyOnceLock<Vec<Py<PyDType>>> = PyOnceLock::new();
    let objects = OBJECTS.get_or_try_init(py, || {
        DType::ALL
            .iter()
            .map(|&d| Py::new(py, PyDType(d)))
            .collect::<PyResult<Vec<_>>>()
    })?;
    // `DType::ALL` lists the dtypes in declaration order.
    Ok(objects[d as usize].clone_ref(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(promote_types, m)?)?;
    m.add_function(wrap_pyfunction!(set_default_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(get_default_dtype, m)?)?;
    let aliases = [
        ("bool", DType::Bool),
        ("uint8", DType::UInt8),
        ("int8", DType::Int8),
        ("int16", DType::Int16),
        ("short", DType::Int16),
        ("int32", DType::Int32),
        ("int", DType::Int32),
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
        m.add(name, dtype_object(m.py(), d)?)?;
    }
    Ok(())
}
