//! Python callables as gradient hooks; they run inside the engine holding
//! the GIL only while they execute.

use crate::errors::{external, IntoPyResult};
use crate::node::PyNode;
use crate::tensor::PyTensor;
use ferrograd_core::autograd::{self, Grads, Node};
use ferrograd_core::Tensor;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::sync::Arc;

enum HookTarget {
    Tensor(Tensor),
    Node(Arc<Node>),
}

/// Handle returned by `register_hook`; `remove()` unregisters the hook.
#[pyclass(name = "RemovableHandle", module = "ferrograd.utils.hooks", frozen)]
pub struct HookHandle {
    target: HookTarget,
    id: u64,
}

#[pymethods]
impl HookHandle {
    fn remove(&self) {
        match &self.target {
            HookTarget::Tensor(t) => autograd::remove_hook(t, self.id),
            HookTarget::Node(n) => n.remove_hook(self.id),
        };
    }

    #[getter]
    fn id(&self) -> u64 {
        self.id
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __exit__(
        &self,
        _a: Option<&Bound<'_, PyAny>>,
        _b: Option<&Bound<'_, PyAny>>,
        _c: Option<&Bound<'_, PyAny>>,
    ) {
        self.remove();
    }
}

fn grad_hook(hook: Py<PyAny>) -> autograd::node::GradHook {
    Arc::new(move |g: &Tensor| {
        crate::gil::attach(|py| {
            let result = hook.bind(py).call1((PyTensor::from(g.clone()),))?;
            if result.is_none() {
                return Ok(None);
            }
            crate::convert::tensor_arg(&result, "hook result").map(Some)
        })
        .map_err(external)
    })
}

#[pymethods]
impl PyTensor {
    /// `hook(grad)` runs on this tensor's gradient in every backward and
    /// may return a replacement.
    fn register_hook(&self, hook: Py<PyAny>) -> PyResult<HookHandle> {
        let id = autograd::register_hook(&self.t, grad_hook(hook)).py()?;
        Ok(HookHandle {
            target: HookTarget::Tensor(self.t.clone()),
            id,
        })
    }

    /// `hook(tensor)` runs after this leaf's `.grad` was updated.
    fn register_post_accumulate_grad_hook(&self, hook: Py<PyAny>) -> PyResult<HookHandle> {
        let py_hook = Arc::new(move |t: &Tensor| {
            crate::gil::attach(|py| {
                hook.bind(py)
                    .call1((PyTensor::from(t.clone()),))
                    .map(|_| ())
            })
            .map_err(external)
        });
        let id = autograd::register_post_accumulate_grad_hook(&self.t, py_hook).py()?;
        Ok(HookHandle {
            target: HookTarget::Tensor(self.t.clone()),
            id,
        })
    }
}

/// Gradients as a Python tuple (missing ones as None).
fn grads_tuple<'py>(py: Python<'py>, grads: &Grads) -> PyResult<Bound<'py, PyTuple>> {
    let items = grads
        .iter()
        .map(|g| match g {
            Some(g) => Bound::new(py, PyTensor::from(g.clone())).map(|b| b.into_any()),
            None => Ok(py.None().into_bound(py)),
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, items)
}

/// A hook's replacement gradients: None keeps them, else a sequence of
/// tensors or Nones.
fn replacement(result: &Bound<'_, PyAny>) -> PyResult<Option<Grads>> {
    if result.is_none() {
        return Ok(None);
    }
    result
        .try_iter()?
        .map(|g| {
            let g = g?;
            if g.is_none() {
                Ok(None)
            } else {
                crate::convert::tensor_arg(&g, "hook result").map(Some)
            }
        })
        .collect::<PyResult<Grads>>()
        .map(Some)
}

#[pymethods]
impl PyNode {
    /// `hook(grad_inputs, grad_outputs)` runs after this node; it may
    /// return replacement `grad_inputs`.
    fn register_hook(&self, hook: Py<PyAny>) -> HookHandle {
        let id = autograd::next_hook_id();
        self.node.add_post_hook(
            id,
            Arc::new(move |computed: &Grads, received: &Grads| {
                crate::gil::attach(|py| {
                    let r = hook
                        .bind(py)
                        .call1((grads_tuple(py, computed)?, grads_tuple(py, received)?))?;
                    replacement(&r)
                })
                .map_err(external)
            }),
        );
        HookHandle {
            target: HookTarget::Node(self.node.clone()),
            id,
        }
    }

    /// `hook(grad_outputs)` runs before this node; it may return
    /// replacement `grad_outputs`.
    fn register_prehook(&self, hook: Py<PyAny>) -> HookHandle {
        let id = autograd::next_hook_id();
        self.node.add_pre_hook(
            id,
            Arc::new(move |received: &Grads| {
                crate::gil::attach(|py| {
                    let r = hook.bind(py).call1((grads_tuple(py, received)?,))?;
                    replacement(&r)
                })
                .map_err(external)
            }),
        );
        HookHandle {
            target: HookTarget::Node(self.node.clone()),
            id,
        }
    }
}
