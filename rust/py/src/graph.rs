//! `ferrograd.autograd.graph` support: saved-tensor hooks written in
//! Python, anomaly detection's forward tracebacks, and the garbage
//! collector's view of the Python objects a graph holds.

use crate::errors::external;
use crate::tensor::PyTensor;
use ferrograd_core::autograd::{anomaly, saved, PackedSaved, SavedTensorsHooks};
use ferrograd_core::{Result, Tensor};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::{PyTraverseError, PyVisit};
use std::sync::Arc;

/// A Python `(pack, unpack)` pair.
struct PyHooks {
    pack: Py<PyAny>,
    unpack: Py<PyAny>,
}

/// What `pack` returned, with the `unpack` to apply to it. Dropped without
/// the GIL, its references are released the next time Python runs.
struct PyPacked {
    packed: Py<PyAny>,
    unpack: Py<PyAny>,
}

impl SavedTensorsHooks for PyHooks {
    fn pack(&self, t: &Tensor) -> Result<Arc<dyn PackedSaved>> {
        crate::gil::attach(|py| {
            let packed = self.pack.bind(py).call1((PyTensor::from(t.clone()),))?;
            Ok(Arc::new(PyPacked {
                packed: packed.unbind(),
                unpack: self.unpack.clone_ref(py),
            }) as Arc<dyn PackedSaved>)
        })
        .map_err(external)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl PackedSaved for PyPacked {
    fn unpack(&self) -> Result<Tensor> {
        crate::gil::attach(|py| unpack_hook_result(&self.unpack.bind(py).call1((&self.packed,))?))
            .map_err(external)
    }
}

/// The tensor an unpack hook returned, or torch's error.
fn unpack_hook_result(r: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    match r.downcast::<PyTensor>() {
        Ok(t) => Ok(t.get().tensor()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "Output of saved tensor unpack_hook expected to be a Tensor but got result of type {}",
            r.get_type().name()?
        ))),
    }
}

/// Enters a `saved_tensors_hooks(pack, unpack)` block on this thread.
#[pyfunction]
fn _push_saved_tensors_hooks(pack: Py<PyAny>, unpack: Py<PyAny>) {
    saved::push_saved_tensors_hooks(Arc::new(PyHooks { pack, unpack }));
}

/// Leaves the innermost `saved_tensors_hooks` block on this thread.
#[pyfunction]
fn _pop_saved_tensors_hooks() -> PyResult<()> {
    if saved::pop_saved_tensors_hooks() {
        Ok(())
    } else {
        Err(PyRuntimeError::new_err("no saved tensors hooks to pop"))
    }
}

/// The innermost `(pack, unpack)` pair in force on this thread, if any.
#[pyfunction]
fn _current_saved_tensors_hooks(py: Python<'_>) -> Option<(Py<PyAny>, Py<PyAny>)> {
    let hooks = saved::current_saved_tensors_hooks()?;
    let h = hooks.as_any().downcast_ref::<PyHooks>()?;
    Some((h.pack.clone_ref(py), h.unpack.clone_ref(py)))
}

/// `pack(t)` as built-in ops run it (without hooks on what it saves, and
/// checking that it leaves its input alone), for custom Functions.
#[pyfunction]
fn _run_pack_hook(pack: &Bound<'_, PyAny>, t: &Bound<'_, PyTensor>) -> PyResult<Py<PyAny>> {
    let version = t.get().tensor().version();
    let packed = saved::with_hooks_suspended(|| pack.call1((t,)))?;
    if t.get().tensor().version() != version {
        return Err(PyRuntimeError::new_err(saved::PACK_IN_PLACE));
    }
    Ok(packed.unbind())
}

/// `unpack(packed)` with the check that it returned a tensor.
#[pyfunction]
fn _run_unpack_hook(unpack: &Bound<'_, PyAny>, packed: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    unpack_hook_result(&unpack.call1((packed,))?).map(PyTensor::from)
}

/// `set_detect_anomaly(mode, check_nan)`.
#[pyfunction]
fn _set_detect_anomaly(enabled: bool, check_nan: bool) {
    anomaly::set_enabled(enabled, check_nan);
}

#[pyfunction]
fn is_anomaly_enabled() -> bool {
    anomaly::is_enabled()
}

#[pyfunction]
fn is_anomaly_check_nan_enabled() -> bool {
    anomaly::check_nan_enabled()
}

/// The Python stack of the code creating a node, as `traceback` prints it.
fn capture_trace() -> Option<Arc<str>> {
    crate::gil::attach(|py| {
        let frames = py.import("traceback")?.call_method0("format_stack")?;
        let text: String = ""
            .into_pyobject(py)?
            .call_method1("join", (frames,))?
            .extract()?;
        Ok::<_, PyErr>(Arc::from(text))
    })
    .ok()
}

/// Shows an anomaly report as a `UserWarning`, as torch does.
fn report_anomaly(message: &str) {
    crate::gil::attach(|py| {
        let pending = PyErr::take(py);
        let warned = py.import("warnings").and_then(|w| {
            w.call_method1(
                "warn",
                (message, py.get_type::<pyo3::exceptions::PyUserWarning>()),
            )
        });
        if let Err(e) = warned {
            // A warning filter turned it into an error: show it instead.
            e.print(py);
        }
        if let Some(e) = pending {
            e.restore(py);
        }
    });
}

/// Reports to the garbage collector the Python objects held by the part of
/// the graph only `t` keeps alive (a custom Function's ctx, hook functions),
/// so that cycles through the graph (`ctx.out = out`) can be collected.
pub fn traverse_graph(t: &Tensor, visit: &PyVisit<'_>) -> std::result::Result<(), PyTraverseError> {
    let mut result = Ok(());
    let mut hook_ids = Vec::new();
    ferrograd_core::autograd::node::for_each_owned(
        t,
        &mut |node| {
            if result.is_ok() {
                result = crate::function::traverse_node(node, visit);
            }
        },
        &mut |id| hook_ids.push(id),
    );
    result?;
    crate::hooks::traverse_hooks(&hook_ids, visit)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    anomaly::install(Box::new(capture_trace), Box::new(report_anomaly));
    m.add_function(wrap_pyfunction!(_push_saved_tensors_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(_pop_saved_tensors_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(_current_saved_tensors_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(_run_pack_hook, m)?)?;
    m.add_function(wrap_pyfunction!(_run_unpack_hook, m)?)?;
    m.add_function(wrap_pyfunction!(_set_detect_anomaly, m)?)?;
    m.add_function(wrap_pyfunction!(is_anomaly_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(is_anomaly_check_nan_enabled, m)?)?;
    Ok(())
}

#[pymethods]
impl PyTensor {
    fn __traverse__(&self, visit: PyVisit<'_>) -> std::result::Result<(), PyTraverseError> {
        match self.try_lock_tensor() {
            Some(t) => traverse_graph(&t, &visit),
            None => Ok(()),
        }
    }
}
