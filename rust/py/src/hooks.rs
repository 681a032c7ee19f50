//! Python callables as gradient hooks; they run inside the engine holding
//! the GIL only while they execute.

use crate::errors::{external, IntoPyResult};
use crate::node::PyNode;
use crate::tensor::PyTensor;
use ferrograd_core::autograd::{self, Grads, Node};
use ferrograd_core::Tensor;
use parking_lot::Mutex;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3::{PyTraverseError, PyVisit};
use std::collections::BTreeMap;
use std::sync::{Arc, Weak};

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

/// The Python function of each live hook by id, for the garbage collector:
/// each is owned by the hook closure the graph holds, and listed here weakly.
static HOOK_FUNCTIONS: Mutex<BTreeMap<u64, Weak<Py<PyAny>>>> = Mutex::new(BTreeMap::new());

/// Lists `hook` under `id` (dropping the entries of hooks that are gone).
fn remember(id: u64, hook: &Arc<Py<PyAny>>) {
    let mut map = HOOK_FUNCTIONS.lock();
    map.retain(|_, f| f.strong_count() > 0);
    map.insert(id, Arc::downgrade(hook));
}

/// Reports the functions of the hooks `ids` to the garbage collector.
pub fn traverse_hooks(ids: &[u64], visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
    if ids.is_empty() {
        return Ok(());
    }
    let Some(map) = HOOK_FUNCTIONS.try_lock() else {
        return Ok(());
    };
    for id in ids {
        // Reported only while the hook closure is its one owner.
        if let Some(f) = map.get(id).and_then(|f| f.upgrade()) {
            if Arc::strong_count(&f) == 2 {
                visit.call(&*f)?;
            }
        }
    }
    Ok(())
}

/// A hook's name in the errors about what it returned: its `__name__`.
fn hook_name(hook: &Bound<'_, PyAny>) -> String {
    hook.getattr("__name__")
        .and_then(|n| n.extract::<String>())
        .unwrap_or_else(|_| "<unknown>".to_string())
}

/// The tensor a hook returned in place of `original`, which it may not
/// change in dtype or shape (PyTorch's checks, and its messages).
fn checked_result(
    hook: &Bound<'_, PyAny>,
    original: &Tensor,
    result: &Bound<'_, PyAny>,
) -> PyResult<Tensor> {
    let Ok(new) = result.downcast::<PyTensor>() else {
        return Err(PyTypeError::new_err(format!(
            "expected Variable, but hook returned '{}'",
            result.get_type().name()?
        )));
    };
    let new = new.get().tensor();
    if new.dtype() != original.dtype() {
        return Err(PyRuntimeError::new_err(format!(
            "hook '{}' has changed the type of value (was ferrograd.{} got ferrograd.{})",
            hook_name(hook),
            original.dtype().legacy_name(),
            new.dtype().legacy_name()
        )));
    }
    if new.shape() != original.shape() {
        return Err(PyRuntimeError::new_err(format!(
            "hook '{}' has changed the size of value",
            hook_name(hook)
        )));
    }
    Ok(new)
}

fn grad_hook(hook: Arc<Py<PyAny>>) -> autograd::node::GradHook {
    Arc::new(move |g: &Tensor| {
        crate::gil::attach(|py| {
            let hook = hook.bind(py);
            let result = hook.call1((PyTensor::from(g.clone()),))?;
            if result.is_none() {
                return Ok(None);
            }
            checked_result(hook, g, &result).map(Some)
        })
        .map_err(external)
    })
}

#[pymethods]
impl PyTensor {
    /// `hook(grad)` runs on this tensor's gradient in every backward and
    /// may return a replacement.
    fn register_hook(&self, hook: Py<PyAny>) -> PyResult<HookHandle> {
        let hook = Arc::new(hook);
        let id = autograd::register_hook(&self.tensor(), grad_hook(hook.clone())).py()?;
        remember(id, &hook);
        Ok(HookHandle {
            target: HookTarget::Tensor(self.tensor()),
            id,
        })
    }

    /// `hook(tensor)` runs after this leaf's `.grad` was updated.
    fn register_post_accumulate_grad_hook(&self, hook: Py<PyAny>) -> PyResult<HookHandle> {
        let hook = Arc::new(hook);
        let owned = hook.clone();
        let py_hook = Arc::new(move |t: &Tensor| {
            let hook = &owned;
            crate::gil::attach(|py| {
                let result = hook.bind(py).call1((PyTensor::from(t.clone()),))?;
                match result.is_none() {
                    true => Ok(()),
                    false => Err(PyRuntimeError::new_err(
                        "Tensor post accumulate grad hooks should return None.",
                    )),
                }
            })
            .map_err(external)
        });
        let id = autograd::register_post_accumulate_grad_hook(&self.tensor(), py_hook).py()?;
        remember(id, &hook);
        Ok(HookHandle {
            target: HookTarget::Tensor(self.tensor()),
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

/// A node hook's replacement gradients: None keeps `before`, else as many
/// tensors or Nones as `before` holds.
fn replacement(
    hook: &Bound<'_, PyAny>,
    before: &Grads,
    result: &Bound<'_, PyAny>,
) -> PyResult<Option<Grads>> {
    if result.is_none() {
        return Ok(None);
    }
    let grads = result
        .try_iter()?
        .map(|g| {
            let g = g?;
            if g.is_none() {
                Ok(None)
            } else {
                crate::convert::tensor_arg(&g, "hook result").map(Some)
            }
        })
        .collect::<PyResult<Grads>>()?;
    if grads.len() != before.len() {
        return Err(PyRuntimeError::new_err(format!(
            "hook '{}' has returned an incorrect number of values (got {}, but expected {})",
            hook_name(hook),
            grads.len(),
            before.len()
        )));
    }
    Ok(Some(grads))
}

#[pymethods]
impl PyNode {
    /// `hook(grad_inputs, grad_outputs)` runs after this node; it may
    /// return replacement `grad_inputs`.
    fn register_hook(&self, hook: Py<PyAny>) -> HookHandle {
        let id = autograd::next_hook_id();
        let hook = Arc::new(hook);
        remember(id, &hook);
        self.node.add_post_hook(
            id,
            Arc::new(move |computed: &Grads, received: &Grads| {
                crate::gil::attach(|py| {
                    let hook = hook.bind(py);
                    let r = hook.call1((grads_tuple(py, computed)?, grads_tuple(py, received)?))?;
                    replacement(hook, computed, &r)
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
        let hook = Arc::new(hook);
        remember(id, &hook);
        self.node.add_pre_hook(
            id,
            Arc::new(move |received: &Grads| {
                crate::gil::attach(|py| {
                    let hook = hook.bind(py);
                    let r = hook.call1((grads_tuple(py, received)?,))?;
                    replacement(hook, received, &r)
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
