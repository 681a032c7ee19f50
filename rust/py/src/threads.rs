//! Thread pool size, deterministic mode and engine state queried from
//! Python.

use crate::errors::IntoPyResult;
use ferrograd_core::autograd::engine;
use ferrograd_core::parallel;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// `warn_only` has no effect on results: ferrograd has no op without a
/// deterministic implementation. It is kept to report it back.
static WARN_ONLY: AtomicBool = AtomicBool::new(false);

#[pyfunction]
fn set_num_threads(py: Python<'_>, n: i64) -> PyResult<()> {
    let n = usize::try_from(n).unwrap_or(0);
    crate::gil::detach(py, || parallel::set_num_threads(n)).py()
}

#[pyfunction]
fn get_num_threads(py: Python<'_>) -> usize {
    crate::gil::detach(py, parallel::num_threads)
}

#[pyfunction]
#[pyo3(signature = (mode, *, warn_only=false))]
fn use_deterministic_algorithms(mode: bool, warn_only: bool) {
    parallel::set_deterministic(mode);
    WARN_ONLY.store(mode && warn_only, Ordering::Relaxed);
}

#[pyfunction]
fn are_deterministic_algorithms_enabled() -> bool {
    parallel::deterministic()
}

#[pyfunction]
fn is_deterministic_algorithms_warn_only_enabled() -> bool {
    WARN_ONLY.load(Ordering::Relaxed)
}

#[pyfunction]
fn _is_checkpoint_valid() -> bool {
    engine::checkpoint_valid()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    parallel::set_blocking_wait(crate::gil::release_while_waiting);
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(use_deterministic_algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(are_deterministic_algorithms_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(
        is_deterministic_algorithms_warn_only_enabled,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(_is_checkpoint_valid, m)?)?;
    Ok(())
}
