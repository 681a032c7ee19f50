//! Graph nodes as Python sees them through `grad_fn`.

use crate::function::PyFunctionBackward;
use crate::tensor::PyTensor;
use ferrograd_core::autograd::accumulate::AccumulateGrad;
use ferrograd_core::autograd::Node;
use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType, PyWeakrefMethods, PyWeakrefReference};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

#[pyclass(
    name = "Node",
    module = "ferrograd.autograd.graph",
    subclass,
    frozen,
    weakref
)]
pub struct PyNode {
    pub node: Arc<Node>,
}

impl PyNode {
    /// `node` as Python sees it: an instance of the subclass of `Node` named
    /// after it, so that `type(grad_fn).__name__` is `MulBackward0` as in
    /// PyTorch (graph printers name nodes that way). While that object
    /// lives, every way of reaching the node (`grad_fn`, `next_functions`)
    /// gives that same object, as in PyTorch, where graph walkers tell
    /// nodes apart by `is` and `id`.
    pub fn object(py: Python<'_>, node: Arc<Node>) -> PyResult<Bound<'_, PyAny>> {
        let address = Arc::as_ptr(&node).cast::<()>() as usize;
        if let Some(object) = NodeObjects::live(py, address, &node) {
            return Ok(object);
        }
        let object = node_class(py, node.name())?.call1((PyNode { node: node.clone() },))?;
        NodeObjects::remember(py, address, &node, object)
    }
}

/// The Python object made for each graph node, held weakly (it keeps
/// nothing alive) and keyed by the node's address. Only used with the GIL
/// held; nothing that can run Python code runs while it is locked.
static NODE_OBJECTS: LazyLock<parking_lot::Mutex<NodeObjects>> = LazyLock::new(Default::default);

#[derive(Default)]
struct NodeObjects {
    by_address: HashMap<usize, Py<PyWeakrefReference>>,
    /// The entry count at which entries whose object died are swept out.
    sweep_at: usize,
}

/// Fewest entries before a sweep.
const MIN_SWEEP_AT: usize = 1024;

impl NodeObjects {
    /// The object made for `node`, while it lives. An entry at the same
    /// address can only be for another node once the object made for the
    /// first is gone (the object holds its node).
    fn live<'py>(py: Python<'py>, address: usize, node: &Arc<Node>) -> Option<Bound<'py, PyAny>> {
        let weak = NODE_OBJECTS.lock().by_address.get(&address)?.clone_ref(py);
        weak.bind(py).upgrade().filter(|o| {
            o.downcast::<PyNode>()
                .is_ok_and(|o| Arc::ptr_eq(&o.get().node, node))
        })
    }

    /// Records `object` as `node`'s, unless another thread recorded one
    /// while this one was made (that one is returned instead).
    fn remember<'py>(
        py: Python<'py>,
        address: usize,
        node: &Arc<Node>,
        object: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(first) = Self::live(py, address, node) {
            return Ok(first);
        }
        let weak = PyWeakrefReference::new(&object)?.unbind();
        let mut registry = NODE_OBJECTS.lock();
        // Dropped once the lock is released.
        let mut dropped: Vec<Py<PyWeakrefReference>> = registry
            .by_address
            .insert(address, weak)
            .into_iter()
            .collect();
        if registry.by_address.len() >= registry.sweep_at.max(MIN_SWEEP_AT) {
            let (live, dead): (HashMap<_, _>, HashMap<_, _>) =
                std::mem::take(&mut registry.by_address)
                    .into_iter()
                    .partition(|(_, w)| w.bind(py).upgrade().is_some());
            registry.sweep_at = 2 * live.len();
            registry.by_address = live;
            dropped.extend(dead.into_values());
        }
        drop(registry);
        drop(dropped);
        Ok(object)
    }
}

/// The subclass of `Node` called `name`, made on first use.
fn node_class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    static CLASSES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    let classes = CLASSES
        .get_or_init(py, || PyDict::new(py).unbind())
        .bind(py);
    if let Some(class) = classes.get_item(name)? {
        return Ok(class);
    }
    let namespace = PyDict::new(py);
    namespace.set_item("__slots__", PyTuple::empty(py))?;
    namespace.set_item("__module__", "ferrograd.autograd.graph")?;
    let bases = PyTuple::new(py, [py.get_type::<PyNode>()])?;
    let class = py.get_type::<PyType>().call1((name, bases, namespace))?;
    classes.set_item(name, &class)?;
    Ok(class)
}

#[pymethods]
impl PyNode {
    /// An object of a subclass for the graph node `node` stands for.
    #[new]
    fn new(node: PyRef<'_, PyNode>) -> PyNode {
        PyNode {
            node: node.node.clone(),
        }
    }

    /// As PyTorch names them: the nodes it writes by hand in C++ rather than
    /// generating per op (`AccumulateGrad`, `CopySlices`, ...) report their
    /// qualified C++ names, which code written for it may compare against.
    fn name(&self) -> String {
        match self.node.name() {
            name @ ("AccumulateGrad" | "CopyBackwards" | "CopySlices" | "Error"
            | "NotImplemented") => {
                format!("torch::autograd::{name}")
            }
            name => name.to_string(),
        }
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
                Some(e) => (PyNode::object(py, e.node.clone())?, e.input_nr)
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
            .map(|a| a.leaf.latest().into())
    }

    /// In PyTorch a custom Function's node is its `ctx`: what `forward`
    /// set on the ctx (and `saved_tensors`) reads through the node too.
    fn __getattr__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let function = self
            .node
            .backward_fn()
            .as_any()
            .downcast_ref::<PyFunctionBackward>();
        function
            .and_then(|f| f.ctx().bind(py).getattr(name).ok())
            .ok_or_else(|| {
                PyAttributeError::new_err(format!(
                    "'{}' object has no attribute '{name}'",
                    self.node.name()
                ))
            })
    }

    fn __repr__(slf: &Bound<'_, Self>) -> String {
        format!(
            "<{} object at {:#x}>",
            slf.get().node.name(),
            Arc::as_ptr(&slf.get().node).cast::<()>() as usize
        )
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .downcast::<PyNode>()
            .is_ok_and(|o| Arc::ptr_eq(&self.node, &o.get().node))
    }

    fn __hash__(&self) -> isize {
        Arc::as_ptr(&self.node).cast::<()>() as isize
    }
}
