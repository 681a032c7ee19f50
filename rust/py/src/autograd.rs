//! Module-level autograd functions: grad mode, `backward`, `grad`, and the
//! state of the backward call a hook runs in.

use crate::errors::IntoPyResult;
use crate::node::PyNode;
use crate::tensor::PyTensor;
use ferrograd_core::autograd::{self, engine, forward, grad_mode};
use ferrograd_core::Tensor;
use pyo3::exceptions::PyUserWarning;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// A tensor or a sequence of tensors as a list.
pub fn tensor_list(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<Tensor>>> {
    let Some(obj) = obj else { return Ok(None) };
    if obj.is_none() {
        return Ok(None);
    }
    if let Ok(t) = obj.downcast::<PyTensor>() {
        return Ok(Some(vec![t.get().tensor()]));
    }
    let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
    items
        .iter()
        .map(|i| crate::convert::tensor_arg(i, "inputs"))
        .collect::<PyResult<Vec<_>>>()
        .map(Some)
}

/// Gradients given per output, `None` allowed.
fn optional_tensors(obj: Option<&Bound<'_, PyAny>>, n: usize) -> PyResult<Vec<Option<Tensor>>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(vec![None; n]);
    };
    if let Ok(t) = obj.downcast::<PyTensor>() {
        return Ok(vec![Some(t.get().tensor())]);
    }
    obj.try_iter()?
        .map(|i| {
            let i = i?;
            if i.is_none() {
                Ok(None)
            } else {
                crate::convert::operand(&i).map(Some)
            }
        })
        .collect()
}

/// Set once the warning of [`warn_of_grad_cycle`] has been given.
static WARNED_OF_GRAD_CYCLE: AtomicBool = AtomicBool::new(false);

/// `backward(create_graph=True)` stores gradients with a graph of their
/// own, which can hold the very leaves whose `.grad` they are: a cycle
/// that keeps both alive. PyTorch warns of it once a process, before the
/// backward runs and only for roots that can run one; so does ferrograd.
pub(crate) fn warn_of_grad_cycle(
    py: Python<'_>,
    roots: &[Tensor],
    create_graph: bool,
) -> PyResult<()> {
    if create_graph
        && roots.iter().all(Tensor::requires_grad)
        && !WARNED_OF_GRAD_CYCLE.swap(true, Ordering::Relaxed)
    {
        PyErr::warn(
            py,
            &py.get_type::<PyUserWarning>(),
            c"Using backward() with create_graph=True will create a reference cycle between the parameter and its gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters to None after use to break the cycle and avoid the leak.",
            1,
        )?;
    }
    Ok(())
}

#[pyfunction]
fn _set_grad_enabled(enabled: bool) {
    grad_mode::set_grad_enabled(enabled);
}

#[pyfunction]
fn is_grad_enabled() -> bool {
    grad_mode::is_grad_enabled()
}

#[pyfunction]
fn _set_inference_mode(enabled: bool) {
    grad_mode::set_inference_mode(enabled);
}

#[pyfunction]
fn is_inference_mode_enabled() -> bool {
    grad_mode::is_inference_mode_enabled()
}

#[pyfunction]
#[pyo3(signature = (tensors, grad_tensors=None, retain_graph=None, create_graph=false, inputs=None))]
fn _backward(
    py: Python<'_>,
    tensors: &Bound<'_, PyAny>,
    grad_tensors: Option<&Bound<'_, PyAny>>,
    retain_graph: Option<bool>,
    create_graph: bool,
    inputs: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let tensors = tensor_list(Some(tensors))?.unwrap_or_default();
    let grads = optional_tensors(grad_tensors, tensors.len())?;
    let inputs = tensor_list(inputs)?;
    warn_of_grad_cycle(py, &tensors, create_graph)?;
    crate::gil::detach(py, || {
        engine::backward(
            &tensors,
            &grads,
            retain_graph,
            create_graph,
            inputs.as_deref(),
        )
    })
    .py()
}

#[pyfunction]
#[pyo3(signature = (outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=false, allow_unused=false))]
fn _grad(
    py: Python<'_>,
    outputs: &Bound<'_, PyAny>,
    inputs: &Bound<'_, PyAny>,
    grad_outputs: Option<&Bound<'_, PyAny>>,
    retain_graph: Option<bool>,
    create_graph: bool,
    allow_unused: bool,
) -> PyResult<Vec<Option<PyTensor>>> {
    let outputs = tensor_list(Some(outputs))?.unwrap_or_default();
    let inputs = tensor_list(Some(inputs))?.unwrap_or_default();
    let grads = optional_tensors(grad_outputs, outputs.len())?;
    let result = crate::gil::detach(py, || {
        engine::grad(
            &outputs,
            &inputs,
            &grads,
            retain_graph,
            create_graph,
            allow_unused,
        )
    })
    .py()?;
    Ok(result.into_iter().map(|g| g.map(PyTensor::from)).collect())
}

/// Where this thread's graph stands: every node it makes from now on comes
/// after the mark (see `_grad_since`).
#[pyclass(name = "NodeMark", module = "ferrograd._C", frozen)]
pub struct PyNodeMark(autograd::NodeMark);

#[pyfunction]
fn _node_mark() -> PyNodeMark {
    PyNodeMark(autograd::NodeMark::next())
}

/// The gradients of one-element `outputs` (seeded with ones) with respect to
/// `inputs` made on this thread after `since`, `None` for an unused input:
/// the walk skips the nodes made before the mark, which cannot reach them.
#[pyfunction]
fn _grad_since(
    py: Python<'_>,
    outputs: &Bound<'_, PyAny>,
    inputs: &Bound<'_, PyAny>,
    create_graph: bool,
    since: PyRef<'_, PyNodeMark>,
) -> PyResult<Vec<Option<PyTensor>>> {
    let outputs = tensor_list(Some(outputs))?.unwrap_or_default();
    let inputs = tensor_list(Some(inputs))?.unwrap_or_default();
    let since = since.0;
    let result = crate::gil::detach(py, || {
        autograd::grad_since(&outputs, &inputs, create_graph, since)
    })
    .py()?;
    Ok(result.into_iter().map(|g| g.map(PyTensor::from)).collect())
}

/// `forward_ad.enter_dual_level()`.
#[pyfunction]
fn _enter_dual_level() -> PyResult<u64> {
    forward::enter_dual_level().py()
}

/// `forward_ad.exit_dual_level(level=...)`.
#[pyfunction]
fn _exit_dual_level(level: u64) -> PyResult<()> {
    forward::exit_dual_level(level).py()
}

/// `forward_ad.make_dual(primal, tangent, level=...)`.
#[pyfunction]
fn _make_dual(
    primal: PyRef<'_, PyTensor>,
    tangent: PyRef<'_, PyTensor>,
    level: u64,
) -> PyResult<PyTensor> {
    forward::make_dual(&primal.tensor(), &tangent.tensor(), level)
        .py()
        .map(PyTensor::from)
}

/// Gives an output of a custom Function the tangent its `jvp` returned.
#[pyfunction]
fn _set_fwd_grad(t: PyRef<'_, PyTensor>, tangent: PyRef<'_, PyTensor>, level: u64) -> PyResult<()> {
    forward::set_forward_grad(&t.tensor(), &tangent.tensor(), level).py()
}

#[pyfunction]
fn _set_fwd_grad_enabled(enabled: bool) {
    forward::set_enabled(enabled);
}

#[pyfunction]
fn _is_fwd_grad_enabled() -> bool {
    forward::is_enabled()
}

/// `forward_ad.unpack_dual(tensor, level=...)`: the primal and the tangent.
#[pyfunction]
fn _unpack_dual(t: PyRef<'_, PyTensor>, level: u64) -> PyResult<(PyTensor, Option<PyTensor>)> {
    let (primal, tangent) = forward::unpack_dual(&t.tensor(), level).py()?;
    Ok((PyTensor::from(primal), tangent.map(PyTensor::from)))
}

/// The id of the backward call running the hook that asks, -1 outside one.
#[pyfunction]
fn _current_graph_task_id() -> i64 {
    engine::current_task_id().map_or(-1, |id| id as i64)
}

/// Whether the backward call running the hook that asks will run `node`
/// (or capture the gradient arriving at it).
#[pyfunction]
fn _will_engine_execute_node(node: PyRef<'_, PyNode>) -> PyResult<bool> {
    if engine::current_task_id().is_none() {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "_get_should_execute_nodes should only be called during the backward pass",
        ));
    }
    Ok(engine::will_execute(&node.node))
}

/// Counts a write to each tensor's memory that ferrograd did not see, so
/// that backward refuses saved values it changed. Inference tensors have
/// no version counter and are left alone.
#[pyfunction]
fn _increment_version(tensors: &Bound<'_, PyAny>) -> PyResult<()> {
    for t in tensor_list(Some(tensors))?.unwrap_or_default() {
        if !t.is_inference() {
            t.bump_version();
        }
    }
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_current_graph_task_id, m)?)?;
    m.add_function(wrap_pyfunction!(_will_engine_execute_node, m)?)?;
    m.add_function(wrap_pyfunction!(_increment_version, m)?)?;
    m.add_function(wrap_pyfunction!(_set_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(is_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_set_inference_mode, m)?)?;
    m.add_function(wrap_pyfunction!(is_inference_mode_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_backward, m)?)?;
    m.add_function(wrap_pyfunction!(_grad, m)?)?;
    m.add_class::<PyNodeMark>()?;
    m.add_function(wrap_pyfunction!(_node_mark, m)?)?;
    m.add_function(wrap_pyfunction!(_grad_since, m)?)?;
    m.add_function(wrap_pyfunction!(_enter_dual_level, m)?)?;
    m.add_function(wrap_pyfunction!(_exit_dual_level, m)?)?;
    m.add_function(wrap_pyfunction!(_make_dual, m)?)?;
    m.add_function(wrap_pyfunction!(_unpack_dual, m)?)?;
    m.add_function(wrap_pyfunction!(_set_fwd_grad, m)?)?;
    m.add_function(wrap_pyfunction!(_set_fwd_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_is_fwd_grad_enabled, m)?)?;
    Ok(())
}
