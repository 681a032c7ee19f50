//! Matrix products and reductions as tensor methods.

use crate::convert::{operand, scalar};
use crate::errors::IntoPyResult;
use crate::tensor::{maybe_detach, PyTensor};
use ferrograd_core::ops::matmul;
use ferrograd_core::{Result, Scalar, Tensor};
use pyo3::prelude::*;

type Product = fn(&Tensor, &Tensor) -> Result<Tensor>;

/// Runs a product with the GIL released when the work is large.
fn product(py: Python<'_>, a: &Tensor, b: &Tensor, op: Product) -> PyResult<PyTensor> {
    let work = a.numel().max(b.numel());
    Ok(maybe_detach(py, work, || op(a, b)).py()?.into())
}

#[pymethods]
impl PyTensor {
    fn __matmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let Ok(b) = other.downcast::<PyTensor>() else {
            return Ok(py.NotImplemented());
        };
        let out = product(py, &self.t, &b.get().t, matmul::matmul)?;
        Ok(Bound::new(py, out)?.into_any().unbind())
    }
    fn __rmatmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let Ok(a) = other.downcast::<PyTensor>() else {
            return Ok(py.NotImplemented());
        };
        let out = product(py, &a.get().t, &self.t, matmul::matmul)?;
        Ok(Bound::new(py, out)?.into_any().unbind())
    }
    fn matmul(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        product(py, &self.t, &other.t, matmul::matmul)
    }
    fn mm(&self, py: Python<'_>, mat2: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        product(py, &self.t, &mat2.t, matmul::mm)
    }
    fn bmm(&self, py: Python<'_>, mat2: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        product(py, &self.t, &mat2.t, matmul::bmm)
    }
    fn dot(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        product(py, &self.t, &other.t, matmul::dot)
    }
    fn mv(&self, py: Python<'_>, vec: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        product(py, &self.t, &vec.t, matmul::mv)
    }
    fn outer(&self, py: Python<'_>, vec2: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        product(py, &self.t, &vec2.t, matmul::outer)
    }
    fn ger(&self, py: Python<'_>, vec2: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        product(py, &self.t, &vec2.t, matmul::outer)
    }
    #[pyo3(signature = (mat1, mat2, *, beta=None, alpha=None))]
    fn addmm(
        &self,
        py: Python<'_>,
        mat1: PyRef<'_, PyTensor>,
        mat2: PyRef<'_, PyTensor>,
        beta: Option<&Bound<'_, PyAny>>,
        alpha: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let beta = beta.map(scalar).transpose()?.unwrap_or(Scalar::Int(1));
        let alpha = alpha.map(scalar).transpose()?.unwrap_or(Scalar::Int(1));
        let (m1, m2) = (&mat1.t, &mat2.t);
        Ok(maybe_detach(py, m1.numel().max(m2.numel()), || {
            matmul::addmm(&self.t, m1, m2, beta, alpha)
        })
        .py()?
        .into())
    }
}

/// `ferrograd.addmm(input, mat1, mat2, *, beta=1, alpha=1)`; `input` may be a number.
#[pyfunction]
#[pyo3(signature = (input, mat1, mat2, *, beta=None, alpha=None))]
fn addmm(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    mat1: PyRef<'_, PyTensor>,
    mat2: PyRef<'_, PyTensor>,
    beta: Option<&Bound<'_, PyAny>>,
    alpha: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    PyTensor::from(operand(input)?).addmm(py, mat1, mat2, beta, alpha)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(addmm, m)?)?;
    Ok(())
}
