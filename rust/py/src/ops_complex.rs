//! Complex tensors: the `real`/`imag` views (readable and writable),
//! `angle`, and the functions `view_as_real`, `view_as_complex`, `complex`
//! and `polar`.

use crate::convert::{scalar, tensor_arg};
use crate::errors::IntoPyResult;
use crate::tensor::{maybe_detach, PyTensor};
use ferrograd_core::ops::{complex, inplace, unary};
use ferrograd_core::{Result, Tensor};
use pyo3::prelude::*;

/// Writes `value` (a tensor, broadcast, or a number) into the view `part`.
fn assign(part: &Tensor, value: &Bound<'_, PyAny>) -> PyResult<()> {
    match value.downcast::<PyTensor>() {
        Ok(v) => inplace::copy_(part, &v.get().tensor()).py(),
        Err(_) => inplace::fill_(part, scalar(value)?).py(),
    }
}

fn pair(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    names: [&str; 2],
    op: fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> PyResult<PyTensor> {
    let (a, b) = (tensor_arg(a, names[0])?, tensor_arg(b, names[1])?);
    Ok(maybe_detach(py, a.numel().max(b.numel()), || op(&a, &b))
        .py()?
        .into())
}

#[pymethods]
impl PyTensor {
    /// The real parts, a view sharing this tensor's memory (a real tensor
    /// is its own real part).
    #[getter]
    fn real<'py>(slf: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyAny>> {
        let t = &slf.get().tensor();
        if !t.dtype().is_complex() {
            return Ok(slf.clone().into_any());
        }
        Ok(Bound::new(slf.py(), PyTensor::from(complex::real(t).py()?))?.into_any())
    }
    #[setter]
    fn set_real(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        assign(&complex::real(&self.tensor()).py()?, value)
    }
    /// The imaginary parts, a view sharing this tensor's memory.
    #[getter]
    fn imag(&self) -> PyResult<PyTensor> {
        Ok(complex::imag(&self.tensor()).py()?.into())
    }
    #[setter]
    fn set_imag(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        assign(&complex::imag(&self.tensor()).py()?, value)
    }
    fn angle(&self, py: Python<'_>) -> PyResult<PyTensor> {
        Ok(
            maybe_detach(py, self.tensor().numel(), || complex::angle(&self.tensor()))
                .py()?
                .into(),
        )
    }
    /// The conjugate as a new tensor (`conj` is never lazy in ferrograd).
    fn conj_physical(&self, py: Python<'_>) -> PyResult<PyTensor> {
        Ok(maybe_detach(py, self.tensor().numel(), || {
            unary::conj_physical(&self.tensor())
        })
        .py()?
        .into())
    }
    /// This tensor: ferrograd's `conj` always materialises.
    fn resolve_conj(slf: Bound<'_, PyTensor>) -> Bound<'_, PyTensor> {
        slf
    }
    /// Always `False`: ferrograd's `conj` always materialises.
    fn is_conj(&self) -> bool {
        false
    }
}

/// `ferrograd.view_as_real(input)`: a real view with a trailing dimension of 2.
#[pyfunction]
fn view_as_real(input: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
    Ok(complex::view_as_real(&input.tensor()).py()?.into())
}

/// `ferrograd.view_as_complex(input)`: a complex view of pairs in the last dimension.
#[pyfunction]
fn view_as_complex(input: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
    Ok(complex::view_as_complex(&input.tensor()).py()?.into())
}

/// `ferrograd.complex(real, imag)`: `real + i imag`.
#[pyfunction(name = "complex")]
fn complex_(
    py: Python<'_>,
    real: &Bound<'_, PyAny>,
    imag: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    pair(
        py,
        real,
        imag,
        [
            "complex(): argument 'real' (position 1)",
            "complex(): argument 'imag' (position 2)",
        ],
        complex::complex,
    )
}

/// `ferrograd.polar(abs, angle)`: `abs * (cos(angle) + i sin(angle))`.
#[pyfunction]
fn polar(py: Python<'_>, abs: &Bound<'_, PyAny>, angle: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    pair(
        py,
        abs,
        angle,
        [
            "polar(): argument 'abs' (position 1)",
            "polar(): argument 'angle' (position 2)",
        ],
        complex::polar,
    )
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(view_as_real, m)?)?;
    m.add_function(wrap_pyfunction!(view_as_complex, m)?)?;
    m.add_function(wrap_pyfunction!(complex_, m)?)?;
    m.add_function(wrap_pyfunction!(polar, m)?)?;
    Ok(())
}
