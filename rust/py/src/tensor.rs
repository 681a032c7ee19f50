//! The `Tensor` class: identity, autograd attributes and conversions.
//! Ops live in `ops.rs`; every method converts, calls the core, maps errors.

use crate::convert::{dtype_arg, shape_size, shape_tuple};
use crate::dtype::{typestr, PyDType};
use crate::errors::IntoPyResult;
use crate::memory_format::PyMemoryFormat;
use crate::node::PyNode;
use ferrograd_core::autograd::engine;
use ferrograd_core::ops::{copy, shape as shape_ops};
use ferrograd_core::tensor::layout::wrap_dim_of_array;
use ferrograd_core::tensor::{MemoryFormat, Storage};
use ferrograd_core::{DType, Scalar, Tensor};
use pyo3::exceptions::{
    PyAssertionError, PyRuntimeError, PyTypeError, PyUserWarning, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyFloat, PyList, PyTuple, PyType, PyWeakrefMethods, PyWeakrefReference};
use pyo3::IntoPyObjectExt;
use std::sync::Arc;

#[pyclass(name = "Tensor", module = "ferrograd", subclass, frozen, weakref, dict)]
pub struct PyTensor {
    /// The tensor this object stands for. Replaced whole by the ops that
    /// change a tensor's storage or layout in place (`x.data = y`,
    /// `x.t_()`, `x.resize_(n)`), which a core tensor never does; readers
    /// take a handle and let go of the lock at once, so none holds it while
    /// the GIL is released.
    tensor: parking_lot::Mutex<Tensor>,
    /// Held while a replacement of the tensor is made (`replace_with`).
    replacing: parking_lot::Mutex<()>,
    /// The Python objects last given out for `.grad`, `.grad_fn` and
    /// `._base`, so that reading one again gives the same object.
    handed_out: HandedOut,
}

impl PyTensor {
    /// Makes `base`, a Python object of this tensor's view base, the one
    /// `._base` gives (a custom Function's input returned as-is comes back
    /// as a view whose `_base` is that input object, as in PyTorch).
    pub(crate) fn remember_base(&self, base: &Bound<'_, PyAny>) -> PyResult<()> {
        self.handed_out.base.remember(Some(base))
    }
}

impl From<Tensor> for PyTensor {
    fn from(t: Tensor) -> Self {
        PyTensor {
            tensor: parking_lot::Mutex::new(t),
            replacing: parking_lot::Mutex::new(()),
            handed_out: HandedOut::default(),
        }
    }
}

impl PyTensor {
    /// The tensor this object currently stands for.
    pub fn tensor(&self) -> Tensor {
        self.tensor.lock().clone()
    }

    /// The tensor without a handle of one's own, for the garbage
    /// collector's traversal, which counts the handles to it; `None` for the
    /// moment another thread holds the lock.
    pub fn try_lock_tensor(&self) -> Option<parking_lot::MutexGuard<'_, Tensor>> {
        self.tensor.try_lock()
    }

    /// Makes this object stand for the tensor `f` makes in the place of the
    /// current one (`x.data = y`, `x.t_()`). Replacements of one object run
    /// one at a time, so two threads' both take effect. `f` may call into
    /// Python (anomaly mode records a traceback), where another thread can
    /// take the GIL: readers therefore never wait for a replacement (the
    /// handle's lock is taken only to store the result), and a second
    /// replacement waits with the GIL released.
    pub fn replace_with(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Tensor) -> ferrograd_core::Result<Tensor>,
    ) -> PyResult<()> {
        let _one_at_a_time = loop {
            if let Some(guard) = self.replacing.try_lock() {
                break guard;
            }
            py.detach(|| drop(self.replacing.lock()));
        };
        let next = f(&self.tensor()).py()?;
        *self.tensor.lock() = next;
        Ok(())
    }
}

#[derive(Default)]
struct HandedOut {
    grad: LastObject,
    grad_fn: LastObject,
    base: LastObject,
}

/// A weak reference to the Python object an attribute last returned. Held
/// weakly so that it keeps nothing alive: a gradient that `zero_grad`
/// dropped is freed, not kept for the next read of `.grad`.
#[derive(Default)]
struct LastObject(parking_lot::Mutex<Option<Py<PyWeakrefReference>>>);

impl LastObject {
    /// The object last remembered, while something still holds it and
    /// `is_current` accepts it; otherwise `make()`'s, remembered.
    fn get_or_make<'py>(
        &self,
        py: Python<'py>,
        is_current: impl Fn(&Bound<'py, PyAny>) -> bool,
        make: impl FnOnce() -> PyResult<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let last = self.0.lock().as_ref().and_then(|w| w.bind(py).upgrade());
        if let Some(obj) = last.filter(|o| is_current(o)) {
            return Ok(obj);
        }
        let obj = make()?;
        self.remember(Some(&obj))?;
        Ok(obj)
    }

    fn remember(&self, obj: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let weak = obj
            .map(|o| PyWeakrefReference::new(o).map(Bound::unbind))
            .transpose()?;
        *self.0.lock() = weak;
        Ok(())
    }
}

/// `t` as a Python tensor: the one `last` gave out before, if it wraps `t`
/// itself and is still held.
fn tensor_object<'py>(
    py: Python<'py>,
    last: &LastObject,
    t: Tensor,
) -> PyResult<Bound<'py, PyAny>> {
    let wraps_t = |o: &Bound<'py, PyAny>| {
        o.downcast::<PyTensor>()
            .is_ok_and(|o| o.get().tensor().same(&t))
    };
    let make = || Ok(Bound::new(py, PyTensor::from(t.clone()))?.into_any());
    last.get_or_make(py, wraps_t, make)
}

const NON_LEAF_GRAD: &std::ffi::CStr = c"The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead.";

/// Work on tensors at least this large runs with the GIL released: about
/// 5 µs of a simple elementwise op, where releasing costs well under 1 µs.
pub const RELEASE_GIL_NUMEL: usize = 1 << 15;

/// An element of `exp`, `tanh` and the like costs about as much as this
/// many elements of a simple op, so their GIL threshold is that much lower.
pub const TRANSCENDENTAL_COST: usize = 16;

/// Runs `f` with the GIL released when `work` (in elements of a simple
/// elementwise op) is large enough to be worth letting other Python
/// threads run.
pub fn maybe_detach<R: Send>(py: Python<'_>, work: usize, f: impl FnOnce() -> R + Send) -> R {
    if work >= RELEASE_GIL_NUMEL {
        crate::gil::detach(py, f)
    } else {
        f()
    }
}

fn python_helper<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let m = MODULE.get_or_try_init(py, || {
        py.import("ferrograd._tensor_str").map(|m| m.unbind())
    })?;
    m.bind(py).getattr(name)
}

/// One element as the Python number PyTorch's `item()` gives.
pub fn scalar_to_py(py: Python<'_>, s: Scalar) -> PyResult<Py<PyAny>> {
    Ok(match s {
        Scalar::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Scalar::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Scalar::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        Scalar::Complex(c) => c.into_pyobject(py)?.into_any().unbind(),
    })
}

/// A tensor that `Tensor.__new__` takes as it is, not as an alias: how
/// `_make_subclass` gives a subclass instance that is no view (a Parameter
/// is a leaf of its own, as in PyTorch).
#[pyclass(frozen)]
struct Unaliased(Tensor);

/// Keeps a storage alive for a NumPy array that shares its memory; NumPy
/// reads the layout from `__array_interface__`.
#[pyclass(frozen)]
pub struct StorageRef {
    _storage: Arc<Storage>,
    interface: Py<PyDict>,
}

#[pymethods]
impl StorageRef {
    #[getter]
    fn __array_interface__(&self, py: Python<'_>) -> Py<PyDict> {
        self.interface.clone_ref(py)
    }
}

/// A dtype given as PyTorch's `type()` takes it: a dtype, a legacy type name such as
/// `'torch.FloatTensor'`, or a class with a `dtype` attribute (`ferrograd.FloatTensor`).
fn legacy_type_dtype(d: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(dtype) = dtype_arg(d) {
        return Ok(dtype);
    }
    if let Ok(name) = d.extract::<String>() {
        let short = name.rsplit('.').next().unwrap_or_default();
        return DType::ALL
            .into_iter()
            .find(|t| t.legacy_name() == short)
            .ok_or_else(|| PyValueError::new_err(format!("invalid type: '{name}'")));
    }
    if let Ok(dtype) = d.getattr("dtype").and_then(|a| a.extract::<PyDType>()) {
        return Ok(dtype.0);
    }
    dtype_arg(d)
}

impl PyTensor {
    /// `slf` converted to `dtype`: itself when it already has it, as PyTorch returns it.
    fn cast<'py>(slf: &Bound<'py, Self>, dtype: DType) -> PyResult<Bound<'py, PyAny>> {
        let t = &slf.get().tensor();
        if t.dtype() == dtype {
            return Ok(slf.clone().into_any());
        }
        let converted = copy::to_dtype(t, dtype).py()?;
        Ok(Bound::new(slf.py(), PyTensor::from(converted))?.into_any())
    }

    /// The one element as a Python number, for `float()`, `int()` and `complex()`.
    fn python_number(&self) -> PyResult<Scalar> {
        if self.tensor().numel() != 1 {
            return Err(PyValueError::new_err(
                "only one element tensors can be converted to Python scalars",
            ));
        }
        self.tensor().item().py()
    }

    /// The value of a one-element tensor as a real number: a complex one
    /// only when its imaginary part is 0, as PyTorch's checked conversion.
    fn real_number(&self, target: &str) -> PyResult<Scalar> {
        match self.python_number()? {
            Scalar::Complex(z) if z.im != 0.0 => Err(PyRuntimeError::new_err(format!(
                "value cannot be converted to type {target} without overflow"
            ))),
            Scalar::Complex(z) => Ok(Scalar::Float(z.re)),
            s => Ok(s),
        }
    }

    /// A NumPy array sharing this tensor's memory.
    pub fn to_numpy<'py>(t: &Tensor, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let d = t.dtype();
        let iface = PyDict::new(py);
        let read_only = !t.storage().is_writable();
        iface.set_item("data", (t.data_ptr(), read_only))?;
        iface.set_item("shape", shape_tuple(py, t.shape())?)?;
        let strides: Vec<isize> = t
            .strides()
            .iter()
            .map(|s| s * d.itemsize() as isize)
            .collect();
        iface.set_item("strides", PyTuple::new(py, strides)?)?;
        iface.set_item("typestr", typestr(d))?;
        iface.set_item("version", 3)?;
        let owner = Bound::new(
            py,
            StorageRef {
                _storage: t.storage().clone(),
                interface: iface.unbind(),
            },
        )?;
        py.import("numpy")?.call_method1("asarray", (owner,))
    }
}

#[pymethods]
impl PyTensor {
    /// `Tensor(t)` is an alias of `t` that keeps its history (`AliasBackward0`;
    /// also how subclass instances are made); other arguments go to the
    /// legacy constructor: `Tensor(2, 3)` is uninitialised, `Tensor([1, 2])`
    /// holds the values, both of the default dtype.
    #[new]
    #[pyo3(signature = (*args))]
    fn new(args: &Bound<'_, PyTuple>) -> PyResult<Self> {
        if args.is_empty() {
            return Ok(Tensor::zeros(&[0], DType::default_float()).into());
        }
        if args.len() == 1 {
            let arg = args.get_item(0)?;
            if let Ok(t) = arg.downcast::<PyTensor>() {
                return Ok(shape_ops::alias(&t.get().tensor()).into());
            }
            if let Ok(t) = arg.downcast::<Unaliased>() {
                return Ok(t.get().0.clone().into());
            }
        }
        let made = args
            .py()
            .import("ferrograd._compat")?
            .getattr("_legacy_tensor")?
            .call1(args)?;
        Ok(made.downcast::<PyTensor>()?.get().tensor().into())
    }

    /// An instance of `cls` (a Tensor subclass) sharing `data`'s storage.
    #[staticmethod]
    #[pyo3(signature = (cls, data, require_grad=false))]
    fn _make_subclass<'py>(
        cls: &Bound<'py, PyType>,
        data: &Bound<'py, PyTensor>,
        require_grad: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = cls.py();
        let detached = Unaliased(data.get().tensor().detach());
        let obj = py
            .get_type::<PyTensor>()
            .call_method1("__new__", (cls, detached))?;
        obj.downcast::<PyTensor>()?
            .get()
            .tensor()
            .set_requires_grad(require_grad)
            .py()?;
        Ok(obj)
    }

    /// An instance of `cls` over this tensor's elements that stays attached
    /// to its history; neither `cls.__new__` nor `cls.__init__` runs.
    fn as_subclass<'py>(
        slf: &Bound<'py, Self>,
        cls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Ok(cls) = cls.downcast::<PyType>() else {
            return Err(PyTypeError::new_err(format!(
                "cls must be a type (got {})",
                cls.get_type().name()?
            )));
        };
        if !cls.is_subclass_of::<PyTensor>()? {
            return Err(PyTypeError::new_err(
                "Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. Make sure your class inherits from Tensor.",
            ));
        }
        slf.py()
            .get_type::<PyTensor>()
            .call_method1("__new__", (cls, slf))
    }

    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        shape_size(py, self.tensor().shape())
    }

    #[pyo3(signature = (dim=None))]
    fn size<'py>(&self, py: Python<'py>, dim: Option<i64>) -> PyResult<Py<PyAny>> {
        match dim {
            None => Ok(shape_size(py, self.tensor().shape())?.unbind()),
            Some(d) => {
                let t = self.tensor();
                let d = wrap_dim_of_array(d, t.ndim()).py()?;
                Ok(t.shape()[d].into_pyobject(py)?.into_any().unbind())
            }
        }
    }

    #[pyo3(signature = (dim=None))]
    fn stride<'py>(&self, py: Python<'py>, dim: Option<i64>) -> PyResult<Py<PyAny>> {
        match dim {
            None => Ok(PyTuple::new(py, self.tensor().strides().iter().copied())?
                .into_any()
                .unbind()),
            Some(d) => {
                let t = self.tensor();
                let d = wrap_dim_of_array(d, t.ndim()).py()?;
                Ok(t.strides()[d].into_pyobject(py)?.into_any().unbind())
            }
        }
    }

    fn storage_offset(&self) -> usize {
        self.tensor().storage_offset()
    }

    fn dim(&self) -> usize {
        self.tensor().ndim()
    }

    #[getter]
    fn ndim(&self) -> usize {
        self.tensor().ndim()
    }

    fn numel(&self) -> usize {
        self.tensor().numel()
    }

    fn nelement(&self) -> usize {
        self.tensor().numel()
    }

    fn element_size(&self) -> usize {
        self.tensor().dtype().itemsize()
    }

    #[getter]
    fn itemsize(&self) -> usize {
        self.tensor().dtype().itemsize()
    }

    #[getter]
    fn nbytes(&self) -> usize {
        self.tensor().dtype().itemsize() * self.tensor().numel()
    }

    /// Size in bytes of the whole storage under this tensor and its views,
    /// for `untyped_storage()`.
    fn _storage_nbytes(&self) -> usize {
        let tensor = self.tensor();
        let storage = tensor.storage();
        storage.len() * storage.dtype().itemsize()
    }

    #[getter]
    fn dtype(&self, py: Python<'_>) -> PyResult<Py<PyDType>> {
        crate::dtype::dtype_object(py, self.tensor().dtype())
    }

    #[getter]
    fn device(&self) -> &'static str {
        "cpu"
    }

    #[getter]
    fn is_cuda(&self) -> bool {
        false
    }

    fn is_floating_point(&self) -> bool {
        self.tensor().dtype().is_floating_point()
    }

    fn is_complex(&self) -> bool {
        self.tensor().dtype().is_complex()
    }

    #[pyo3(signature = (memory_format=None))]
    fn is_contiguous(&self, memory_format: Option<PyMemoryFormat>) -> bool {
        match memory_format {
            None => self.tensor().is_contiguous(),
            // A rank the format does not take is simply not contiguous in it.
            Some(format) => format
                .0
                .dim_order(self.tensor().ndim())
                .is_ok_and(|order| self.tensor().layout().is_contiguous_in(&order)),
        }
    }

    fn data_ptr(&self) -> usize {
        self.tensor().data_ptr()
    }

    #[getter]
    fn _version(&self) -> PyResult<u64> {
        if self.tensor().is_inference() {
            return Err(PyRuntimeError::new_err(
                "Inference tensors do not track version counter.",
            ));
        }
        Ok(self.tensor().version())
    }

    /// Whether the tensor was created in inference mode (or views one).
    fn is_inference(&self) -> bool {
        self.tensor().is_inference()
    }

    #[getter]
    fn get_requires_grad(&self) -> bool {
        self.tensor().requires_grad()
    }

    #[setter]
    fn set_requires_grad(&self, flag: &Bound<'_, PyAny>) -> PyResult<()> {
        let flag = flag
            .downcast::<pyo3::types::PyBool>()
            .map_err(|_| PyRuntimeError::new_err("requires_grad must be a bool"))?;
        self.tensor().set_requires_grad(flag.is_true()).py()
    }

    #[pyo3(signature = (requires_grad=true))]
    fn requires_grad_(slf: PyRef<'_, Self>, requires_grad: bool) -> PyResult<PyRef<'_, Self>> {
        if requires_grad && !slf.tensor().dtype().is_differentiable() {
            // PyTorch words this method's error apart from the setter's.
            return Err(PyRuntimeError::new_err(
                "only Tensors of floating point dtype can require gradients",
            ));
        }
        slf.tensor().set_requires_grad(requires_grad).py()?;
        Ok(slf)
    }

    #[getter]
    fn is_leaf(&self) -> bool {
        self.tensor().is_leaf()
    }

    #[getter]
    fn grad_fn<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(node) = self.tensor().grad_fn() else {
            return Ok(None);
        };
        let is_current = |o: &Bound<'py, PyAny>| {
            o.downcast::<PyNode>()
                .is_ok_and(|o| Arc::ptr_eq(&o.get().node, &node))
        };
        let make = || PyNode::object(py, node.clone());
        self.handed_out
            .grad_fn
            .get_or_make(py, is_current, make)
            .map(Some)
    }

    #[getter]
    fn output_nr(&self) -> u32 {
        self.tensor().output_nr()
    }

    /// Warns, as PyTorch does, when the `.grad` of a non-leaf is read that
    /// backward never fills.
    #[getter]
    fn get_grad<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(grad) = self.tensor().grad() else {
            if !self.tensor().is_leaf() && !self.tensor().retains_grad() {
                PyErr::warn(py, &py.get_type::<PyUserWarning>(), NON_LEAF_GRAD, 1)?;
            }
            return Ok(None);
        };
        tensor_object(py, &self.handed_out.grad, grad).map(Some)
    }

    #[setter]
    fn set_grad(&self, grad: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let grad = match grad {
            None => None,
            Some(grad) => Some(grad.downcast::<PyTensor>().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "assigned grad expected to be a Tensor or None but got grad of type {}",
                    grad.get_type()
                        .name()
                        .map_or_else(|_| "?".into(), |n| n.to_string())
                ))
            })?),
        };
        self.tensor()
            .set_grad(grad.as_ref().map(|g| g.get().tensor()))
            .py()?;
        self.handed_out
            .grad
            .remember(grad.as_ref().map(|g| g.as_any()))
    }

    /// The dtype a leaf's gradients are cast to; `None` lets them keep
    /// the dtype they arrive with.
    #[getter]
    fn get_grad_dtype(&self, py: Python<'_>) -> PyResult<Option<Py<PyDType>>> {
        let dtype = self.tensor().grad_dtype().py()?;
        dtype.map(|d| crate::dtype::dtype_object(py, d)).transpose()
    }

    #[setter]
    fn set_grad_dtype(&self, dtype: &Bound<'_, PyAny>) -> PyResult<()> {
        let dtype = match dtype.extract::<Option<PyDType>>() {
            Ok(d) => d.map(|d| d.0),
            Err(_) => {
                return Err(PyRuntimeError::new_err(format!(
                    "grad_dtype must be a ferrograd.dtype or None, but got {}",
                    dtype.get_type().name()?
                )))
            }
        };
        self.tensor().set_grad_dtype(dtype).py()
    }

    #[getter]
    fn retains_grad(&self) -> bool {
        self.tensor().retains_grad()
    }

    fn retain_grad(&self) -> PyResult<()> {
        ferrograd_core::autograd::retain_grad(&self.tensor()).py()
    }

    #[getter]
    fn get_data(&self) -> PyTensor {
        self.tensor().data().into()
    }

    /// `x.data = y`: `x` keeps its autograd record (`requires_grad`,
    /// `grad_fn`, `.grad`, hooks) and version counter and from now on reads
    /// and writes `y`'s elements, as in PyTorch.
    #[setter]
    fn set_data(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let Ok(value) = value.downcast::<PyTensor>() else {
            return Err(PyTypeError::new_err(format!(
                "Variable data has to be a tensor, but got {}",
                value.get_type().name()?
            )));
        };
        let new = value.get().tensor();
        self.replace_with(value.py(), |t| t.with_data(&new))
    }

    /// The tensor this one is a view of (the root of a chain of views).
    #[getter]
    fn _base<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let base = self.tensor().view_base();
        base.map(|b| tensor_object(py, &self.handed_out.base, b))
            .transpose()
    }

    fn detach(&self) -> PyTensor {
        self.tensor().detach().into()
    }

    #[pyo3(signature = (gradient=None, retain_graph=None, create_graph=false, inputs=None))]
    fn backward(
        &self,
        py: Python<'_>,
        gradient: Option<PyRef<'_, PyTensor>>,
        retain_graph: Option<bool>,
        create_graph: bool,
        inputs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let grads = [gradient.map(|g| g.tensor())];
        let inputs = crate::autograd::tensor_list(inputs)?;
        let roots = [self.tensor()];
        crate::autograd::warn_of_grad_cycle(py, &roots, create_graph)?;
        crate::gil::detach(py, || {
            engine::backward(
                &roots,
                &grads,
                retain_graph,
                create_graph,
                inputs.as_deref(),
            )
        })
        .py()
    }

    fn item(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        scalar_to_py(py, self.tensor().item().py()?)
    }

    fn tolist(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let flat = self.tensor().to_scalars();
        fn build(
            py: Python<'_>,
            shape: &[usize],
            flat: &mut std::slice::Iter<'_, Scalar>,
        ) -> PyResult<Py<PyAny>> {
            match shape.split_first() {
                None => scalar_to_py(py, *flat.next().expect("element count matches shape")),
                Some((&n, rest)) => {
                    let items = (0..n)
                        .map(|_| build(py, rest, flat))
                        .collect::<PyResult<Vec<_>>>()?;
                    Ok(PyList::new(py, items)?.into_any().unbind())
                }
            }
        }
        build(py, self.tensor().shape(), &mut flat.iter())
    }

    #[pyo3(signature = (*, force=false))]
    fn numpy<'py>(&self, py: Python<'py>, force: bool) -> PyResult<Bound<'py, PyAny>> {
        if self.tensor().requires_grad() && !force {
            return Err(PyRuntimeError::new_err(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
            ));
        }
        PyTensor::to_numpy(&self.tensor(), py)
    }

    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arr = self.numpy(py, false)?;
        let arr = match dtype {
            Some(d) if !d.is_none() => arr.call_method1("astype", (d,))?,
            _ => arr,
        };
        if copy == Some(true) {
            return arr.call_method0("copy");
        }
        Ok(arr)
    }

    fn __len__(&self) -> PyResult<usize> {
        match self.tensor().shape().first() {
            Some(&n) => Ok(n),
            None => Err(PyTypeError::new_err("len() of a 0-d tensor")),
        }
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let n = self
            .__len__()
            .map_err(|_| PyTypeError::new_err("iteration over a 0-d tensor"))?;
        let rows = (0..n)
            .map(|i| shape_ops::select(&self.tensor(), 0, i as i64).map(PyTensor::from))
            .collect::<Result<Vec<_>, _>>()
            .py()?;
        Ok(PyList::new(py, rows)?.call_method0("__iter__")?.unbind())
    }

    fn __bool__(&self) -> PyResult<bool> {
        if self.tensor().numel() != 1 {
            return Err(PyRuntimeError::new_err(format!(
                "Boolean value of Tensor with {} is ambiguous",
                if self.tensor().numel() == 0 {
                    "no values"
                } else {
                    "more than one value"
                }
            )));
        }
        Ok(self.tensor().item().py()?.as_bool())
    }

    fn __float__(&self) -> PyResult<f64> {
        Ok(self.real_number("double")?.as_f64())
    }

    /// A float goes through Python's `int`: exact however large, and
    /// its errors for infinity and NaN.
    fn __int__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.real_number("int64_t")? {
            Scalar::Float(f) => PyFloat::new(py, f).call_method0("__int__"),
            s => s.as_i64().into_bound_py_any(py),
        }
    }

    fn __index__(&self) -> PyResult<i64> {
        if !self.tensor().dtype().is_integral(true) || self.tensor().numel() != 1 {
            return Err(PyTypeError::new_err(
                "only integer tensors of a single element can be converted to an index",
            ));
        }
        Ok(self.tensor().item().py()?.as_i64())
    }

    fn __complex__(&self) -> PyResult<num_complex::Complex64> {
        Ok(self.python_number()?.as_complex())
    }

    fn __hash__(slf: &Bound<'_, Self>) -> isize {
        slf.as_ptr() as isize
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        python_helper(slf.py(), "tensor_repr")?
            .call1((slf,))?
            .extract()
    }

    fn __format__(slf: &Bound<'_, Self>, spec: &str) -> PyResult<String> {
        let t = &slf.get().tensor();
        if t.ndim() == 0 && !spec.is_empty() {
            let item = scalar_to_py(slf.py(), t.item().py()?)?;
            return item
                .bind(slf.py())
                .call_method1("__format__", (spec,))?
                .extract();
        }
        if !spec.is_empty() {
            // As `object.__format__` does for a format spec it cannot apply.
            return Err(PyTypeError::new_err(
                "unsupported format string passed to Tensor.__format__",
            ));
        }
        PyTensor::__repr__(slf)
    }

    /// `to(dtype)`, `to(other)` and device strings (only "cpu" exists). Without
    /// `copy=True`, a tensor that already has the dtype is returned itself.
    #[pyo3(signature = (*args, **kwargs))]
    fn to<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut dtype = None;
        let mut copy = false;
        let mut memory_format = None;
        let mut candidates: Vec<Bound<'_, PyAny>> = args.iter().collect();
        if let Some(kw) = kwargs {
            if let Some(d) = kw.get_item("dtype")? {
                candidates.push(d);
            }
            if let Some(c) = kw.get_item("copy")? {
                copy = c.is_truthy()?;
            }
            if let Some(f) = kw.get_item("memory_format")? {
                memory_format = f.extract::<Option<PyMemoryFormat>>()?;
            }
        }
        for a in candidates {
            if let Ok(t) = a.downcast::<PyTensor>() {
                dtype = Some(t.get().tensor().dtype());
            } else if let Ok(d) = dtype_arg(&a) {
                dtype = Some(d);
            } else if a.str()?.to_string().starts_with("cuda") {
                return Err(PyAssertionError::new_err(
                    "Torch not compiled with CUDA enabled",
                ));
            } else if !(a.is_none()
                || a.extract::<bool>().is_ok()
                || a.extract::<String>().is_ok_and(|s| s.starts_with("cpu")))
            {
                // Devices (only the CPU exists) and the `non_blocking` flag change nothing;
                // anything else is a mistake.
                return Err(PyTypeError::new_err(format!(
                    "to() received an invalid combination of arguments: {}",
                    a.repr()?
                )));
            }
        }
        let t = &slf.get().tensor();
        let out = match dtype {
            Some(d) if d != t.dtype() => PyTensor::cast(slf, d)?,
            _ if copy => Bound::new(
                slf.py(),
                PyTensor::from(copy::clone_as(t, MemoryFormat::Preserve).py()?),
            )?
            .into_any(),
            _ => slf.clone().into_any(),
        };
        match memory_format {
            Some(format) if format.0 != MemoryFormat::Preserve => {
                PyTensor::contiguous(out.downcast::<PyTensor>()?, Some(format))
            }
            _ => Ok(out),
        }
    }

    /// The legacy type name (`'ferrograd.FloatTensor'`), or with an argument, the tensor
    /// converted to that dtype, given as a dtype, a legacy type name or a legacy type class.
    #[pyo3(signature = (dtype=None))]
    fn r#type<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match dtype {
            None => Ok(
                format!("ferrograd.{}", slf.get().tensor().dtype().legacy_name())
                    .into_pyobject(slf.py())?
                    .into_any(),
            ),
            Some(d) => PyTensor::cast(slf, legacy_type_dtype(d)?),
        }
    }

    fn type_as<'py>(
        slf: &Bound<'py, Self>,
        other: PyRef<'_, PyTensor>,
    ) -> PyResult<Bound<'py, PyAny>> {
        PyTensor::cast(slf, other.tensor().dtype())
    }

    fn float<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        PyTensor::cast(slf, DType::Float32)
    }

    fn double<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        PyTensor::cast(slf, DType::Float64)
    }

    fn long<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        PyTensor::cast(slf, DType::Int64)
    }

    fn int<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        PyTensor::cast(slf, DType::Int32)
    }

    fn short<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        PyTensor::cast(slf, DType::Int16)
    }

    fn char<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        PyTensor::cast(slf, DType::Int8)
    }

    fn byte<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        PyTensor::cast(slf, DType::UInt8)
    }

    fn bool<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        PyTensor::cast(slf, DType::Bool)
    }

    fn cfloat<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        PyTensor::cast(slf, DType::Complex64)
    }

    fn cdouble<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        PyTensor::cast(slf, DType::Complex128)
    }

    fn cpu(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*, memory_format=None))]
    fn clone(&self, py: Python<'_>, memory_format: Option<PyMemoryFormat>) -> PyResult<PyTensor> {
        let format = memory_format.map_or(MemoryFormat::Preserve, |f| f.0);
        Ok(maybe_detach(py, self.tensor().numel(), || {
            copy::clone_as(&self.tensor(), format)
        })
        .py()?
        .into())
    }

    #[pyo3(signature = (memory_format=None))]
    fn contiguous<'py>(
        slf: &Bound<'py, Self>,
        memory_format: Option<PyMemoryFormat>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let t = &slf.get().tensor();
        let out = match memory_format.map_or(MemoryFormat::Contiguous, |f| f.0) {
            MemoryFormat::Contiguous | MemoryFormat::Preserve if t.is_contiguous() => {
                return Ok(slf.clone().into_any())
            }
            MemoryFormat::Contiguous | MemoryFormat::Preserve => {
                maybe_detach(slf.py(), t.numel(), || copy::contiguous(t)).py()?
            }
            format => maybe_detach(slf.py(), t.numel(), || copy::contiguous_in(t, format)).py()?,
        };
        if out.same(t) {
            return Ok(slf.clone().into_any());
        }
        Ok(Bound::new(slf.py(), PyTensor::from(out))?.into_any())
    }
}
