//! Graph nodes as Python sees them through `grad_fn`.

use crate::tensor::PyTensor;
use ferrograd_core::autograd::accumulate::AccumulateGrad;
use ferrograd_core::autograd::Node;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::sync::Arc;

#[pyclass(name = "Node", module = "ferrograd.autograd.graph", frozen, weakref)]
pub struct PyNode {
    pub node: Arc<Node>,
}

#[pymethods]
impl PyNode {
    fn name(&self) -> String {
        self.node.name().to_string()
    }

    #[getter]
    fn __name__(&self) -> String {
        self.node.name().to_string()
    }

    /// `((node, input_nr), ...)`, one pair per input of the forward op.
    #[getter]
    fn next_functions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let items = self
            .node
            .next_edges()
            .iter()
            .map(|e| match e {
                Some(e) => (
                    Some(PyNode {
                        node: e.node.clone(),
                    }),
                    e.input_nr,
                )
                    .into_pyobject(py)
                    .map(|t| t.into_any()),
                None => (None::<PyNode>, 0u32)
                    .into_pyobject(py)
                    .map(|t| t.into_any()),
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(py, items)
    }

    /// For `AccumulateGrad` nodes: the leaf tensor they accumulate into.
    #[getter]
    fn variable(&self) -> Option<PyTensor> {
        self.node
            .backward_fn()
            .as_any()
            .downcast_ref::<AccumulateGrad>()
            .map(|a| a.leaf.clone().into())
    }

    fn __repr__(slf: &Bound<'_, Self>) -> String {
        format!(
            "<{} object at {:#x}>",
            slf.get().node.name(),
            Arc::as_ptr(&slf.get().node) as usize
        )
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .downcast::<PyNode>()
            .is_ok_and(|o| Arc::ptr_eq(&self.node, &o.get().node))
    }

    fn __hash__(&self) -> isize {
        Arc::as_ptr(&self.node) as isize
    }
}
