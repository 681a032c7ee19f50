//! Python callables as gradient hooks; they run inside the engine holding
//! the GIL only while they execute.

use crate::errors::{external, IntoPyResult};
use crate::tensor::PyTensor;
use ferrograd_core::autograd;
use ferrograd_core::Tensor;
use pyo3::prelude::*;
use std::sync::Arc;

/// Handle returned by `register_hook`; `remove()` unregisters the hook.
#[pyclass(name = "RemovableHandle", module = "ferrograd.utils.hooks", frozen)]
pub struct HookHandle {
    tensor: Tensor,
    id: u64,
}

#[pymethods]
impl HookHandle {
    fn remove(&self) {
        autograd::remove_hook(&self.tensor, self.id);
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
        Python::attach(|py| {
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
            tensor: self.t.clone(),
            id,
        })
    }

    /// `hook(tensor)` runs after this leaf's `.grad` was updated.
    fn register_post_accumulate_grad_hook(&self, hook: Py<PyAny>) -> PyResult<HookHandle> {
        let py_hook = Arc::new(move |t: &Tensor| {
            Python::attach(|py| {
                hook.bind(py)
                    .call1((PyTensor::from(t.clone()),))
                    .map(|_| ())
            })
            .map_err(external)
        });
        let id = autograd::register_post_accumulate_grad_hook(&self.t, py_hook).py()?;
        Ok(HookHandle {
            tensor: self.t.clone(),
            id,
        })
    }
}
