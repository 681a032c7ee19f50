//! Matrix decompositions and solvers (`ferrograd.linalg`), one binding per
//! op; `python/ferrograd/linalg.py` gives them PyTorch's signatures.

use crate::errors::IntoPyResult;
use crate::tensor::{maybe_detach, PyTensor};
use ferrograd_core::ops::linalg;
use ferrograd_core::{Result, Tensor};
use pyo3::prelude::*;

type Pair = (PyTensor, PyTensor);
type Arg<'py> = PyRef<'py, PyTensor>;

/// Runs a decomposition of `a`, with the GIL released when the work is
/// large: about n^3 multiply-adds per n-by-n matrix, four of which cost
/// what one element of a simple elementwise op does.
fn cubic<R: Send>(
    py: Python<'_>,
    a: &Tensor,
    op: impl FnOnce() -> Result<R> + Send,
) -> PyResult<R> {
    let n = a.shape().last().copied().unwrap_or(1);
    maybe_detach(py, a.numel().saturating_mul(n) / 4, op).py()
}

/// `op(a)`, sized by `a`.
fn unary<R: Send>(
    py: Python<'_>,
    a: &PyTensor,
    op: impl FnOnce(&Tensor) -> Result<R> + Send,
) -> PyResult<R> {
    let a = &a.tensor();
    cubic(py, a, || op(a))
}

/// `op(a, b)`, sized by the larger operand.
fn binary(
    py: Python<'_>,
    a: &PyTensor,
    b: &PyTensor,
    op: impl FnOnce(&Tensor, &Tensor) -> Result<Tensor> + Send,
) -> PyResult<PyTensor> {
    let (a, b) = (&a.tensor(), &b.tensor());
    let larger = if a.numel() >= b.numel() { a } else { b };
    Ok(cubic(py, larger, || op(a, b))?.into())
}

fn pair((a, b): (Tensor, Tensor)) -> Pair {
    (a.into(), b.into())
}

#[pyfunction]
fn linalg_inv(py: Python<'_>, a: Arg<'_>) -> PyResult<PyTensor> {
    Ok(unary(py, &a, linalg::inv)?.into())
}

#[pyfunction]
fn linalg_det(py: Python<'_>, a: Arg<'_>) -> PyResult<PyTensor> {
    Ok(unary(py, &a, linalg::det)?.into())
}

#[pyfunction]
fn linalg_slogdet(py: Python<'_>, a: Arg<'_>) -> PyResult<Pair> {
    Ok(pair(unary(py, &a, linalg::slogdet)?))
}

#[pyfunction]
fn logdet(py: Python<'_>, a: Arg<'_>) -> PyResult<PyTensor> {
    Ok(unary(py, &a, linalg::logdet)?.into())
}

#[pyfunction]
fn linalg_solve(py: Python<'_>, a: Arg<'_>, b: Arg<'_>, left: bool) -> PyResult<PyTensor> {
    binary(py, &a, &b, |a, b| linalg::solve(a, b, left))
}

#[pyfunction]
fn linalg_cholesky(py: Python<'_>, a: Arg<'_>, upper: bool) -> PyResult<PyTensor> {
    Ok(unary(py, &a, |a| linalg::cholesky(a, upper))?.into())
}

/// `(upper, left, unitriangular)`.
type Triangle = (bool, bool, bool);

#[pyfunction]
fn linalg_solve_triangular(
    py: Python<'_>,
    a: Arg<'_>,
    b: Arg<'_>,
    how: Triangle,
) -> PyResult<PyTensor> {
    let (upper, left, unit) = how;
    binary(py, &a, &b, |a, b| {
        linalg::solve_triangular(a, b, upper, left, unit)
    })
}

#[pyfunction]
fn linalg_eigh(py: Python<'_>, a: Arg<'_>, upper: bool) -> PyResult<Pair> {
    Ok(pair(unary(py, &a, |a| linalg::eigh(a, upper))?))
}

#[pyfunction]
fn linalg_eig(py: Python<'_>, a: Arg<'_>) -> PyResult<Pair> {
    Ok(pair(unary(py, &a, linalg::eig)?))
}

#[pyfunction]
fn linalg_svd(
    py: Python<'_>,
    a: Arg<'_>,
    full_matrices: bool,
) -> PyResult<(PyTensor, PyTensor, PyTensor)> {
    let (u, s, vh) = unary(py, &a, |a| linalg::svd(a, full_matrices))?;
    Ok((u.into(), s.into(), vh.into()))
}

/// An op on the singular values above a tolerance (`pinv`, `matrix_rank`).
type Cutoff = fn(&Tensor, Option<f64>, Option<f64>) -> Result<Tensor>;

/// `(atol, rtol)`, each optional.
type Tolerance = (Option<f64>, Option<f64>);

fn cutoff(py: Python<'_>, a: &PyTensor, (atol, rtol): Tolerance, op: Cutoff) -> PyResult<PyTensor> {
    Ok(unary(py, a, |a| op(a, atol, rtol))?.into())
}

#[pyfunction]
fn linalg_pinv(py: Python<'_>, a: Arg<'_>, tol: Tolerance) -> PyResult<PyTensor> {
    cutoff(py, &a, tol, linalg::pinv)
}

#[pyfunction]
fn linalg_matrix_rank(py: Python<'_>, a: Arg<'_>, tol: Tolerance) -> PyResult<PyTensor> {
    cutoff(py, &a, tol, linalg::matrix_rank)
}

#[pyfunction]
fn linalg_qr(py: Python<'_>, a: Arg<'_>, mode: &str) -> PyResult<Pair> {
    let mode = linalg::QrMode::parse(mode).py()?;
    Ok(pair(unary(py, &a, |a| linalg::qr(a, mode))?))
}

#[pyfunction]
fn linalg_matrix_power(py: Python<'_>, a: Arg<'_>, n: i64) -> PyResult<PyTensor> {
    Ok(unary(py, &a, |a| linalg::matrix_power(a, n))?.into())
}

#[pyfunction]
fn linalg_multi_dot(py: Python<'_>, tensors: Vec<Arg<'_>>) -> PyResult<PyTensor> {
    let ts: Vec<Tensor> = tensors.iter().map(|t| t.tensor()).collect();
    let work = ts.iter().map(|t| t.numel()).max().unwrap_or(0);
    Ok(maybe_detach(py, work, || linalg::multi_dot(&ts))
        .py()?
        .into())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add(
        "LinAlgError",
        m.py().get_type::<crate::errors::LinAlgError>(),
    )?;
    m.add_function(wrap_pyfunction!(linalg_inv, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_det, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_slogdet, m)?)?;
    m.add_function(wrap_pyfunction!(logdet, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_solve, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_cholesky, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_solve_triangular, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_eigh, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_eig, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_svd, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_pinv, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_matrix_rank, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_qr, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_matrix_power, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_multi_dot, m)?)?;
    Ok(())
}
