//! Discrete Fourier transforms (`ferrograd.fft`), one binding per
//! transform; `python/ferrograd/fft.py` gives them PyTorch's signatures.

use crate::convert::{dims, tensor_arg};
use crate::errors::IntoPyResult;
use crate::tensor::{maybe_detach, PyTensor};
use ferrograd_core::ops::fft;
use ferrograd_core::{Result, Tensor};
use pyo3::prelude::*;

type OneDim = fn(&Tensor, Option<i64>, i64, Option<&str>) -> Result<Tensor>;
type ManyDims = fn(&Tensor, Option<&[i64]>, Option<&[i64]>, Option<&str>) -> Result<Tensor>;

/// The input tensor, or PyTorch's `TypeError` naming the function.
fn input_arg(input: &Bound<'_, PyAny>, name: &str) -> PyResult<Tensor> {
    tensor_arg(input, &format!("{name}(): argument 'input' (position 1)"))
}

/// Runs a transform of `x`, with the GIL released when the work is large
/// (a transform costs a few passes over its input per dimension).
fn run(
    py: Python<'_>,
    x: &Tensor,
    op: impl FnOnce() -> Result<Tensor> + Send,
) -> PyResult<PyTensor> {
    Ok(maybe_detach(py, x.numel().saturating_mul(4), op)
        .py()?
        .into())
}

fn one_dim(
    py: Python<'_>,
    name: &str,
    input: &Bound<'_, PyAny>,
    (n, dim, norm): (Option<i64>, i64, Option<String>),
    op: OneDim,
) -> PyResult<PyTensor> {
    let x = input_arg(input, name)?;
    run(py, &x, || op(&x, n, dim, norm.as_deref()))
}

fn many_dims(
    py: Python<'_>,
    name: &str,
    input: &Bound<'_, PyAny>,
    (s, dim, norm): (
        Option<&Bound<'_, PyAny>>,
        Option<&Bound<'_, PyAny>>,
        Option<String>,
    ),
    op: ManyDims,
) -> PyResult<PyTensor> {
    let x = input_arg(input, name)?;
    let (s, dim) = (dims(s)?, dims(dim)?);
    run(py, &x, || {
        op(&x, s.as_deref(), dim.as_deref(), norm.as_deref())
    })
}

/// `ferrograd.fft.fft(input, n, dim, norm)`.
#[pyfunction]
#[pyo3(signature = (input, n=None, dim=-1, norm=None))]
fn fft_fft(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    n: Option<i64>,
    dim: i64,
    norm: Option<String>,
) -> PyResult<PyTensor> {
    one_dim(py, "fft_fft", input, (n, dim, norm), fft::fft)
}

/// `ferrograd.fft.ifft(input, n, dim, norm)`.
#[pyfunction]
#[pyo3(signature = (input, n=None, dim=-1, norm=None))]
fn fft_ifft(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    n: Option<i64>,
    dim: i64,
    norm: Option<String>,
) -> PyResult<PyTensor> {
    one_dim(py, "fft_ifft", input, (n, dim, norm), fft::ifft)
}

/// `ferrograd.fft.rfft(input, n, dim, norm)`.
#[pyfunction]
#[pyo3(signature = (input, n=None, dim=-1, norm=None))]
fn fft_rfft(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    n: Option<i64>,
    dim: i64,
    norm: Option<String>,
) -> PyResult<PyTensor> {
    one_dim(py, "fft_rfft", input, (n, dim, norm), fft::rfft)
}

/// `ferrograd.fft.irfft(input, n, dim, norm)`.
#[pyfunction]
#[pyo3(signature = (input, n=None, dim=-1, norm=None))]
fn fft_irfft(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    n: Option<i64>,
    dim: i64,
    norm: Option<String>,
) -> PyResult<PyTensor> {
    one_dim(py, "fft_irfft", input, (n, dim, norm), fft::irfft)
}

/// `ferrograd.fft.fftn(input, s, dim, norm)` (and `fft2`).
#[pyfunction]
#[pyo3(signature = (input, s=None, dim=None, norm=None))]
fn fft_fftn(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    s: Option<&Bound<'_, PyAny>>,
    dim: Option<&Bound<'_, PyAny>>,
    norm: Option<String>,
) -> PyResult<PyTensor> {
    many_dims(py, "fft_fftn", input, (s, dim, norm), fft::fftn)
}

/// `ferrograd.fft.ifftn(input, s, dim, norm)` (and `ifft2`).
#[pyfunction]
#[pyo3(signature = (input, s=None, dim=None, norm=None))]
fn fft_ifftn(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    s: Option<&Bound<'_, PyAny>>,
    dim: Option<&Bound<'_, PyAny>>,
    norm: Option<String>,
) -> PyResult<PyTensor> {
    many_dims(py, "fft_ifftn", input, (s, dim, norm), fft::ifftn)
}

/// `ferrograd.fft.rfftn(input, s, dim, norm)` (and `rfft2`).
#[pyfunction]
#[pyo3(signature = (input, s=None, dim=None, norm=None))]
fn fft_rfftn(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    s: Option<&Bound<'_, PyAny>>,
    dim: Option<&Bound<'_, PyAny>>,
    norm: Option<String>,
) -> PyResult<PyTensor> {
    many_dims(py, "fft_rfftn", input, (s, dim, norm), fft::rfftn)
}

/// `ferrograd.fft.irfftn(input, s, dim, norm)` (and `irfft2`).
#[pyfunction]
#[pyo3(signature = (input, s=None, dim=None, norm=None))]
fn fft_irfftn(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    s: Option<&Bound<'_, PyAny>>,
    dim: Option<&Bound<'_, PyAny>>,
    norm: Option<String>,
) -> PyResult<PyTensor> {
    many_dims(py, "fft_irfftn", input, (s, dim, norm), fft::irfftn)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fft_fft, m)?)?;
    m.add_function(wrap_pyfunction!(fft_ifft, m)?)?;
    m.add_function(wrap_pyfunction!(fft_rfft, m)?)?;
    m.add_function(wrap_pyfunction!(fft_irfft, m)?)?;
    m.add_function(wrap_pyfunction!(fft_fftn, m)?)?;
    m.add_function(wrap_pyfunction!(fft_ifftn, m)?)?;
    m.add_function(wrap_pyfunction!(fft_rfftn, m)?)?;
    m.add_function(wrap_pyfunction!(fft_irfftn, m)?)?;
    Ok(())
}
