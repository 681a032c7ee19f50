//! Fused optimizer steps.

use crate::errors::IntoPyResult;
use crate::tensor::{maybe_detach, PyTensor};
use ferrograd_core::ops::optim::{self, Sgd};
use pyo3::prelude::*;

/// One fused SGD-with-momentum step; False when the tensors do not qualify
/// and the caller must run the unfused ops.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _sgd_momentum_(
    py: Python<'_>,
    param: PyRef<'_, PyTensor>,
    grad: PyRef<'_, PyTensor>,
    buf: PyRef<'_, PyTensor>,
    lr: f64,
    momentum: f64,
    dampening: f64,
    weight_decay: f64,
    nesterov: bool,
    maximize: bool,
) -> PyResult<bool> {
    let h = Sgd {
        lr,
        momentum,
        dampening,
        weight_decay,
        nesterov,
        maximize,
    };
    let (p, g, b) = (&param.tensor(), &grad.tensor(), &buf.tensor());
    maybe_detach(py, p.numel(), || optim::sgd_momentum_(p, g, b, h)).py()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_sgd_momentum_, m)?)
}
