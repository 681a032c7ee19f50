//! Custom Python `autograd.Function`s as graph nodes: the Rust engine calls
//! the Python `backward`, taking the GIL only for that node.

use crate::errors::{external, IntoPyResult};
use crate::tensor::PyTensor;
use ferrograd_core::autograd::node::OutputMeta;
use ferrograd_core::autograd::{
    any_requires_grad, grad_mode, saved, views, BackwardCtx, BackwardFn, Grads, Node, NodeWith,
};
use ferrograd_core::{bail, Result, Scalar, Tensor};
use pyo3::exceptions::PyRuntimeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};
use pyo3::{PyTraverseError, PyVisit};
use std::sync::Arc;

pub(crate) struct PyFunctionBackward {
    name: String,
    class: Py<PyType>,
    ctx: Py<PyAny>,
    /// For each forward argument: whether it was a tensor (and so has an edge).
    tensor_args: Vec<bool>,
}

impl PyFunctionBackward {
    /// The `ctx` of the `forward` call that made this node.
    pub(crate) fn ctx(&self) -> &Py<PyAny> {
        &self.ctx
    }
}

impl BackwardFn for PyFunctionBackward {
    fn apply(&self, ctx: &BackwardCtx<'_>, grads: Grads) -> Result<Grads> {
        crate::gil::attach(|py| self.call_backward(py, ctx, grads).map_err(external))?
    }

    fn release_saved(&self) {
        crate::gil::attach(|py| {
            // This also runs while a graph is freed, possibly while an
            // exception is being raised: keep that exception intact.
            let pending = PyErr::take(py);
            // Best effort: a failure to clear only keeps memory a little longer.
            let _ = self.ctx.bind(py).call_method0("_release_saved");
            if let Some(e) = pending {
                e.restore(py);
            }
        });
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl PyFunctionBackward {
    fn call_backward(
        &self,
        py: Python<'_>,
        ctx: &BackwardCtx<'_>,
        grads: Grads,
    ) -> PyResult<Result<Grads>> {
        let pyctx = self.ctx.bind(py);
        let materialize: bool = pyctx.getattr("materialize_grads")?.extract()?;
        let args = grads
            .into_iter()
            .zip(ctx.node.outputs())
            .map(|(g, meta)| match g {
                Some(g) => Ok(Bound::new(py, PyTensor::from(g))?.into_any()),
                None if materialize => Ok(Bound::new(
                    py,
                    PyTensor::from(Tensor::full(&meta.shape, Scalar::Int(0), meta.dtype).py()?),
                )?
                .into_any()),
                None => Ok(py.None().into_bound(py)),
            })
            .collect::<PyResult<Vec<_>>>()?;
        let mut call_args = vec![pyctx.clone()];
        call_args.extend(args);
        let _current = CurrentNode::enter(ctx.create_graph.then(|| ctx.node.clone()));
        let result = self
            .class
            .bind(py)
            .getattr("backward")?
            .call1(PyTuple::new(py, call_args)?)?;
        let results: Vec<Bound<'_, PyAny>> = match result.downcast::<PyTuple>() {
            Ok(t) => t.iter().collect(),
            Err(_) => vec![result],
        };
        let expected = self.tensor_args.len();
        // Trailing Nones beyond the inputs are allowed, as in PyTorch.
        let significant = results
            .iter()
            .rposition(|r| !r.is_none())
            .map_or(0, |i| i + 1);
        if results.len() < expected || significant > expected {
            return Ok(Err(ferrograd_core::Error::Runtime(format!(
                "function {} returned an incorrect number of gradients (expected {}, got {})",
                self.name,
                expected,
                results.len()
            ))));
        }
        let mut out = Grads::new();
        for (i, (r, is_tensor)) in results.iter().zip(&self.tensor_args).enumerate() {
            if !is_tensor {
                if !r.is_none() {
                    return Ok(Err(ferrograd_core::Error::Runtime(format!(
                        "function {} returned a gradient different than None at position {}, but the corresponding forward input was not a Variable",
                        self.name,
                        i + 1
                    ))));
                }
                continue;
            }
            match r.downcast::<PyTensor>() {
                Ok(t) => out.push(Some(t.get().tensor())),
                Err(_) if r.is_none() => out.push(None),
                Err(_) => {
                    return Err(PyRuntimeError::new_err(format!(
                        "expected Variable or None (got {})",
                        r.get_type().fully_qualified_name()?
                    )))
                }
            }
        }
        Ok(Ok(out))
    }
}

thread_local! {
    /// The custom Function node whose backward runs on this thread, when
    /// that backward is differentiable.
    static CURRENT_NODE: std::cell::RefCell<Option<Arc<Node>>> = const { std::cell::RefCell::new(None) };
}

/// Sets [`CURRENT_NODE`] for one backward call, restoring the outer one.
struct CurrentNode(Option<Arc<Node>>);

impl CurrentNode {
    fn enter(node: Option<Arc<Node>>) -> CurrentNode {
        CurrentNode(CURRENT_NODE.replace(node))
    }
}

impl Drop for CurrentNode {
    fn drop(&mut self) {
        CURRENT_NODE.set(self.0.take());
    }
}

/// A saved output of a custom Function as its backward sees it: in a
/// differentiable backward, output `output_nr` of the running node again
/// (so double backward flows through it); otherwise unchanged.
#[pyfunction]
fn _saved_output(t: Bound<'_, PyTensor>, output_nr: u32) -> PyResult<Bound<'_, PyTensor>> {
    match CURRENT_NODE.with_borrow(|n| n.clone()) {
        Some(node) => Bound::new(
            t.py(),
            PyTensor::from(t.get().tensor().with_grad_fn(node, output_nr)),
        ),
        None => Ok(t),
    }
}

/// Reports a custom Function node's Python objects to the garbage collector.
pub fn traverse_node(node: &Node, visit: &PyVisit<'_>) -> std::result::Result<(), PyTraverseError> {
    if let Some(f) = node
        .backward_fn()
        .as_any()
        .downcast_ref::<PyFunctionBackward>()
    {
        visit.call(&f.class)?;
        visit.call(&f.ctx)?;
    }
    Ok(())
}

const VIEW_INPLACE_MULTIPLE_OUTPUTS: &str = "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot return more than one Tensor. This is not supported by the current autograd engine. You should either make sure the input is not a view (using .clone() for example) or make your Function only return one Tensor (potentially splitting it into two Functions: one doing the inplace that returns a single Tensor and a second one that does the other operations). You can ask on the forum https://discuss.pytorch.org/ if you need help to do this change.";

/// Wires the outputs of a custom Function's forward into the graph.
/// `args` are the forward arguments; returns the outputs to give the user.
#[pyfunction]
#[pyo3(signature = (cls, ctx, args, outputs, dirty, non_differentiable))]
fn _function_record<'py>(
    py: Python<'py>,
    cls: &Bound<'py, PyType>,
    ctx: &Bound<'py, PyAny>,
    args: &Bound<'py, PyTuple>,
    outputs: &Bound<'py, PyTuple>,
    dirty: Vec<Bound<'py, PyAny>>,
    non_differentiable: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let inputs: Vec<Option<Tensor>> = args
        .iter()
        .map(|a| a.downcast::<PyTensor>().ok().map(|t| t.get().tensor()))
        .collect();
    let input_refs: Vec<&Tensor> = inputs.iter().flatten().collect();
    let recording = any_requires_grad(&input_refs);
    // Taken before the versions of dirty outputs are bumped, so that a view
    // written in place regenerates its history from its base's new one.
    let edges: smallvec::SmallVec<_> = match recording {
        true => inputs.iter().flatten().map(|t| t.gradient_edge()).collect(),
        false => smallvec::SmallVec::new(),
    };
    let is_in = |obj: &Bound<'py, PyAny>, set: &[Bound<'py, PyAny>]| set.iter().any(|d| d.is(obj));
    // (tensor, returned input, dirty, differentiable) per tensor output.
    let mut kinds = Vec::with_capacity(outputs.len());
    for out in outputs.iter() {
        let Ok(t) = out.downcast::<PyTensor>() else {
            kinds.push(None);
            continue;
        };
        let tensor = t.get().tensor();
        let differentiable =
            recording && !is_in(&out, &non_differentiable) && tensor.dtype().is_differentiable();
        let dirty = is_in(&out, &dirty);
        if differentiable && dirty && tensor.view_base().is_some() {
            if outputs.len() > 1 {
                return Err(PyRuntimeError::new_err(VIEW_INPLACE_MULTIPLE_OUTPUTS));
            }
            views::check_inplace(&tensor).py()?;
        }
        let returned_input = args.iter().any(|a| a.is(&out));
        kinds.push(Some((tensor, returned_input, dirty, differentiable)));
    }
    let multiple = kinds.iter().flatten().filter(|k| k.3).count() > 1;
    let mut result = Vec::with_capacity(outputs.len());
    // (tensor, output number, written in place)
    let mut wired: Vec<(Tensor, u32, bool)> = Vec::new();
    let mut metas = smallvec::SmallVec::new();
    for (nr, (out, kind)) in outputs.iter().zip(kinds).enumerate() {
        let Some((tensor, returned_input, dirty, differentiable)) = kind else {
            result.push(out);
            continue;
        };
        metas.push(OutputMeta {
            shape: tensor.shape().into(),
            dtype: tensor.dtype(),
        });
        if dirty {
            tensor.bump_version();
        }
        let input_is_view = tensor.view_base().is_some();
        let nr = nr as u32;
        let new = if dirty {
            // In place: the input itself becomes an output of this node.
            if differentiable {
                wired.push((tensor, nr, true));
            }
            None
        } else if differentiable {
            // An input returned unchanged is returned as a new view of it.
            let target = match returned_input {
                true => views::view_as_self(&tensor),
                false => tensor,
            };
            views::mark_custom_function_output(&target, nr, multiple);
            wired.push((target.clone(), nr, false));
            returned_input.then_some(target)
        } else if returned_input {
            // As in PyTorch: an input that requires grad comes back detached
            // (a view of it would require grad), one that does not as a view.
            Some(match tensor.requires_grad() {
                true => tensor.detach(),
                false => views::view_as_self(&tensor),
            })
        } else {
            None
        };
        result.push(match new {
            Some(t) => {
                let viewed = t.view_base().is_some();
                let obj = Bound::new(py, PyTensor::from(t))?;
                if viewed {
                    // Its `_base` is the input (or the input's base) object.
                    let base = match input_is_view {
                        true => out.getattr(intern!(py, "_base"))?,
                        false => out,
                    };
                    obj.get().remember_base(&base)?;
                }
                obj.into_any()
            }
            None => out,
        });
    }
    if recording && !wired.is_empty() {
        let name = match cls.getattr_opt(intern!(py, "_backward_node_name"))? {
            Some(name) => name.extract()?,
            None => format!("{}Backward", cls.name()?),
        };
        let backward = PyFunctionBackward {
            name: name.clone(),
            class: cls.clone().unbind(),
            ctx: ctx.clone().unbind(),
            tensor_args: inputs.iter().map(|i| i.is_some()).collect(),
        };
        let node: Arc<Node> = Arc::new(NodeWith::new(name, edges, metas, backward));
        for (t, nr, dirty) in wired {
            match dirty {
                true => views::rebase_history(&t, node.clone(), nr).py()?,
                false => t.set_grad_fn(node.clone(), nr),
            }
        }
        // The node holds the ctx: the ctx keeps only the name, never the node.
        ctx.setattr("_node_name", node.name())?;
    }
    PyTuple::new(py, result)
}

/// The version at which a custom Function saves `t` for its backward;
/// saving an inference tensor for a recorded node fails as in the core.
#[pyfunction]
fn _version_at_saving(t: PyRef<'_, PyTensor>, recording: bool) -> PyResult<u64> {
    if recording && t.tensor().is_inference() && !grad_mode::is_inference_mode_enabled() {
        return Err(PyRuntimeError::new_err(saved::INFERENCE_SAVED));
    }
    Ok(t.tensor().version())
}

/// The version a tensor's storage is at, for saved-tensor checks in Python.
#[pyfunction]
fn _check_saved_version(
    t: PyRef<'_, PyTensor>,
    saved_version: u64,
    node_name: &str,
    output_nr: Option<u32>,
) -> PyResult<()> {
    let current = t.tensor().version();
    if current == saved_version {
        return Ok(());
    }
    let which = match output_nr {
        Some(nr) => format!(", which is output {nr} of {node_name},"),
        None => t
            .tensor()
            .grad_fn()
            .map(|f| {
                format!(
                    ", which is output {} of {},",
                    t.tensor().output_nr(),
                    f.name()
                )
            })
            .unwrap_or_default(),
    };
    let r: Result<()> = (|| {
        bail!(
            Runtime,
            "one of the variables needed for gradient computation has been modified by an inplace operation: [{}]{} is at version {}; expected version {} instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with ferrograd.autograd.set_detect_anomaly(True).",
            t.tensor().type_description(),
            which,
            current,
            saved_version
        )
    })();
    r.py()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_function_record, m)?)?;
    m.add_function(wrap_pyfunction!(_check_saved_version, m)?)?;
    m.add_function(wrap_pyfunction!(_version_at_saving, m)?)?;
    m.add_function(wrap_pyfunction!(_saved_output, m)?)?;
    Ok(())
}
