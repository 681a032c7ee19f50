//! Sliding-window ops: `conv2d`, `conv_transpose2d`, `max_pool2d`,
//! `unfold`, `fold`. Sizes arrive as (rows, columns) pairs; the functional
//! layer expands ints.

use crate::errors::IntoPyResult;
use crate::tensor::{maybe_detach, PyTensor};
use ferrograd_core::ops::conv::{self, Transposed, Window};
use ferrograd_core::{Result, Tensor};
use pyo3::prelude::*;

type Pair = (usize, usize);

/// About the multiply-adds of a convolution of `x` by `w`, to decide whether
/// to release the GIL.
fn convolution_work(x: &Tensor, w: &Tensor) -> usize {
    x.numel().saturating_mul(w.numel()) / w.shape().first().copied().unwrap_or(1).max(1)
}

/// `conv2d(input, weight, bias, stride, padding, dilation, groups)`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _conv2d(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    weight: PyRef<'_, PyTensor>,
    bias: Option<PyRef<'_, PyTensor>>,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    groups: usize,
) -> PyResult<PyTensor> {
    let (x, w, b) = (
        &input.tensor(),
        &weight.tensor(),
        bias.as_ref().map(|b| b.tensor()),
    );
    let b = b.as_ref();
    let work = convolution_work(x, w);
    Ok(maybe_detach(py, work, || {
        conv::conv2d(x, w, b, stride, padding, dilation, groups)
    })
    .py()?
    .into())
}

/// `conv_transpose2d(input, weight, bias, stride, padding, output_padding,
/// groups, dilation)`, in `F.conv_transpose2d`'s order.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _conv_transpose2d(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    weight: PyRef<'_, PyTensor>,
    bias: Option<PyRef<'_, PyTensor>>,
    stride: Pair,
    padding: Pair,
    output_padding: Pair,
    groups: usize,
    dilation: Pair,
) -> PyResult<PyTensor> {
    let (x, w, b) = (
        &input.tensor(),
        &weight.tensor(),
        bias.as_ref().map(|b| b.tensor()),
    );
    let b = b.as_ref();
    let shape = Transposed {
        stride,
        padding,
        output_padding,
        dilation,
    };
    let work = convolution_work(x, w);
    Ok(
        maybe_detach(py, work, || conv::conv_transpose2d(x, w, b, shape, groups))
            .py()?
            .into(),
    )
}

/// Runs `op` on `input`, with the GIL released when it is large.
fn windowed(
    py: Python<'_>,
    input: &PyTensor,
    op: impl FnOnce(&Tensor) -> Result<Tensor> + Send,
) -> PyResult<PyTensor> {
    let x = &input.tensor();
    Ok(maybe_detach(py, x.numel(), || op(x)).py()?.into())
}

/// `max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)`:
/// the maxima and their flat positions in the input plane.
#[pyfunction]
fn _max_pool2d(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    kernel: Pair,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    ceil_mode: bool,
) -> PyResult<(PyTensor, PyTensor)> {
    let win = Window {
        kernel,
        dilation,
        padding,
        stride,
    };
    let x = &input.tensor();
    let (out, at) = maybe_detach(py, x.numel(), || conv::max_pool2d(x, win, ceil_mode)).py()?;
    Ok((out.into(), at.into()))
}

/// `unfold(input, kernel_size, dilation, padding, stride)`.
#[pyfunction]
fn _unfold(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    kernel: Pair,
    dilation: Pair,
    padding: Pair,
    stride: Pair,
) -> PyResult<PyTensor> {
    let win = Window {
        kernel,
        dilation,
        padding,
        stride,
    };
    windowed(py, &input, |x| conv::unfold(x, win))
}

/// `fold(input, output_size, kernel_size, dilation, padding, stride)`.
#[pyfunction]
fn _fold(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    output_size: Pair,
    kernel: Pair,
    dilation: Pair,
    padding: Pair,
    stride: Pair,
) -> PyResult<PyTensor> {
    let win = Window {
        kernel,
        dilation,
        padding,
        stride,
    };
    windowed(py, &input, |x| conv::fold(x, output_size, win))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_conv2d, m)?)?;
    m.add_function(wrap_pyfunction!(_conv_transpose2d, m)?)?;
    m.add_function(wrap_pyfunction!(_max_pool2d, m)?)?;
    m.add_function(wrap_pyfunction!(_unfold, m)?)?;
    m.add_function(wrap_pyfunction!(_fold, m)?)
}
