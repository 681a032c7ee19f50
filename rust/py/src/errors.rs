//! The one place where core errors become Python exceptions.

use ferrograd_core::Error;
use pyo3::exceptions::{
    PyIndexError, PyNotImplementedError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::PyErr;

pyo3::create_exception!(
    ferrograd,
    LinAlgError,
    PyRuntimeError,
    "A matrix a decomposition cannot handle (singular, not positive-definite)."
);

pub fn to_py(e: Error) -> PyErr {
    match e {
        Error::Runtime(m) => PyRuntimeError::new_err(m),
        Error::Index(m) => PyIndexError::new_err(m),
        Error::Type(m) => PyTypeError::new_err(m),
        Error::Value(m) => PyValueError::new_err(m),
        Error::NotImplemented(m) => PyNotImplementedError::new_err(m),
        Error::LinAlg(m) => LinAlgError::new_err(m),
        Error::External { message, payload } => match payload.downcast_ref::<PyErrPayload>() {
            Some(p) => pyo3::Python::attach(|py| p.0.clone_ref(py)),
            None => PyRuntimeError::new_err(message),
        },
    }
}

/// A Python exception raised inside the engine (by a hook or a custom
/// Function), carried through the core unchanged.
pub struct PyErrPayload(pub PyErr);

/// Wraps a Python exception so the engine can carry it back to the caller.
pub fn external(err: PyErr) -> Error {
    let message = err.to_string();
    Error::External {
        message,
        payload: std::sync::Arc::new(PyErrPayload(err)),
    }
}

/// `.py()?` turns a core `Result` into a `PyResult`.
pub trait IntoPyResult<T> {
    fn py(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPyResult<T> for ferrograd_core::Result<T> {
    fn py(self) -> pyo3::PyResult<T> {
        match self {
            // A saved-tensor pack hook that failed while the op recorded
            // its node is raised as the op's error.
            Ok(v) => match ferrograd_core::autograd::saved::take_pack_error() {
                Some(e) => Err(to_py(e)),
                None => Ok(v),
            },
            Err(e) => Err(to_py(e)),
        }
    }
}
