//! Anomaly detection: while enabled, every node records where its forward
//! ran, and a backward node that fails or returns NaN is reported with it.
//!
//! The core cannot see the caller's stack: the bindings install a
//! [`TraceCapture`] that returns a printable traceback and a
//! [`AnomalyReport`] that shows the message to the user.

use super::node::{Grads, Node};
use crate::tensor::{DType, Tensor};
use crate::{bail, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static ENABLED: AtomicBool = AtomicBool::new(false);
static CHECK_NAN: AtomicBool = AtomicBool::new(true);

/// Returns the traceback of the code creating a node, if it can.
pub type TraceCapture = Box<dyn Fn() -> Option<Arc<str>> + Send + Sync>;
/// Shows an anomaly report (e.g. as a warning).
pub type AnomalyReport = Box<dyn Fn(&str) + Send + Sync>;

static CAPTURE: OnceLock<TraceCapture> = OnceLock::new();
static REPORT: OnceLock<AnomalyReport> = OnceLock::new();

/// Installs the traceback capture and the report; the first call wins.
pub fn install(capture: TraceCapture, report: AnomalyReport) {
    let _ = CAPTURE.set(capture);
    let _ = REPORT.set(report);
}

/// `set_detect_anomaly(enabled, check_nan)`.
pub fn set_enabled(enabled: bool, check_nan: bool) {
    CHECK_NAN.store(check_nan, Ordering::Relaxed);
    ENABLED.store(enabled, Ordering::Release);
}

pub fn is_enabled() -> bool {
    ENABLED.load(Ordering::Acquire)
}

pub fn check_nan_enabled() -> bool {
    CHECK_NAN.load(Ordering::Relaxed)
}

/// The traceback of the forward call creating a node, when enabled.
pub(crate) fn capture() -> Option<Arc<str>> {
    if !is_enabled() {
        return None;
    }
    CAPTURE.get().and_then(|c| c())
}

fn report(node: &Node) {
    let Some(report) = REPORT.get() else { return };
    let trace = match node.forward_trace() {
        Some(t) => t.to_string(),
        None => "No forward pass information available. Enable detect anomaly during forward pass for more information.".to_string(),
    };
    report(&format!(
        "Error detected in {}. Traceback of forward call that caused the error:\n{}",
        node.name(),
        trace
    ));
}

/// Whether a gradient holds a NaN (floating and complex dtypes only).
fn has_nan(g: &Tensor) -> Result<bool> {
    let dtype = g.dtype();
    if !dtype.is_floating_point() && !dtype.is_complex() {
        return Ok(false);
    }
    let g = if dtype.is_complex() {
        crate::ops::copy::to_dtype(&g.detach(), DType::Complex128)?
    } else {
        crate::ops::copy::to_dtype(&g.detach(), DType::Float64)?
    };
    Ok(match dtype.is_complex() {
        true => g
            .to_vec::<num_complex::Complex64>()
            .iter()
            .any(|z| z.re.is_nan() || z.im.is_nan()),
        false => g.to_vec::<f64>().iter().any(|x| x.is_nan()),
    })
}

/// Checks what a node's backward produced while anomaly detection is on:
/// a failure or a NaN gradient is reported with the node's forward trace.
pub(crate) fn check(node: &Node, result: Result<Grads>) -> Result<Grads> {
    let grads = match result {
        Ok(g) => g,
        Err(e) => {
            report(node);
            return Err(e);
        }
    };
    if check_nan_enabled() {
        for (k, g) in grads.iter().enumerate() {
            let Some(g) = g else { continue };
            if has_nan(g)? {
                report(node);
                bail!(
                    Runtime,
                    "Function '{}' returned nan values in its {}th output.",
                    node.name(),
                    k
                );
            }
        }
    }
    Ok(grads)
}
