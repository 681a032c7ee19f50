//! Python values to core arguments.

use crate::dtype::PyDType;
use crate::tensor::PyTensor;
use ferrograd_core::{DType, Scalar, Tensor};
use num_complex::Complex64;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyComplex, PyDict, PyFloat, PyInt, PySequence, PyTuple};

/// A Python number as a core scalar, keeping its kind (bool, int, float,
/// complex); NumPy scalars convert through their Python equivalents.
pub fn scalar(obj: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(Scalar::Bool(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Scalar::Int(obj.extract()?));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Scalar::Float(obj.extract()?));
    }
    if obj.is_instance_of::<PyComplex>() {
        let c: Complex64 = obj.extract()?;
        return Ok(Scalar::Complex(c));
    }
    if let Ok(t) = obj.downcast::<PyTensor>() {
        return t.get().tensor().item().map_err(crate::errors::to_py);
    }
    // NumPy scalars and other number-likes.
    let type_name = obj.get_type().name()?.to_string();
    if type_name.starts_with("bool") {
        return Ok(Scalar::Bool(obj.is_truthy()?));
    }
    if type_name.starts_with("int") || type_name.starts_with("uint") {
        return Ok(Scalar::Int(obj.call_method0("__index__")?.extract()?));
    }
    if type_name.starts_with("float") {
        return Ok(Scalar::Float(obj.call_method0("__float__")?.extract()?));
    }
    if type_name.starts_with("complex") {
        return Ok(Scalar::Complex(obj.call_method0("__complex__")?.extract()?));
    }
    Err(PyTypeError::new_err(format!(
        "expected a number, but got {type_name}"
    )))
}

/// A tensor operand: a tensor as is, or a Python number as a 0-d tensor
/// that does not widen the other operand's dtype.
pub fn operand(obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    if let Ok(t) = obj.downcast::<PyTensor>() {
        return Ok(t.get().tensor());
    }
    scalar(obj).map(Tensor::wrapped_number)
}

/// Like [`operand`], but `None` when the object is not a tensor or number,
/// so binary dunders can return `NotImplemented`. A number is wrapped for
/// an op with a tensor of dtype `partner`.
pub fn try_operand(obj: &Bound<'_, PyAny>, partner: DType) -> Option<Tensor> {
    if let Ok(t) = obj.downcast::<PyTensor>() {
        return Some(t.get().tensor());
    }
    if obj.is_instance_of::<PyInt>()
        || obj.is_instance_of::<PyFloat>()
        || obj.is_instance_of::<PyComplex>()
    {
        return scalar(obj)
            .ok()
            .map(|value| Tensor::wrapped_number_for(value, partner));
    }
    let name = obj.get_type().name().ok()?.to_string();
    if name == "ndarray" {
        let made = obj
            .py()
            .import("ferrograd")
            .ok()?
            .call_method1("as_tensor", (obj,))
            .ok()?;
        return Some(made.downcast::<PyTensor>().ok()?.get().tensor());
    }
    if ["int", "uint", "float", "complex", "bool"]
        .iter()
        .any(|p| name.starts_with(p))
    {
        return scalar(obj).ok().map(Tensor::wrapped_number);
    }
    None
}

pub fn tensor_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Tensor> {
    match obj.downcast::<PyTensor>() {
        Ok(t) => Ok(t.get().tensor()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{what} must be Tensor, not {}",
            obj.get_type().name()?
        ))),
    }
}

pub fn dtype_arg(obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(d) = obj.extract::<PyDType>() {
        return Ok(d.0);
    }
    // Python types stand for their default dtypes, as in PyTorch.
    let py = obj.py();
    if obj.is(py.get_type::<PyFloat>()) {
        return Ok(DType::Float64);
    }
    if obj.is(py.get_type::<PyInt>()) {
        return Ok(DType::Int64);
    }
    if obj.is(py.get_type::<PyBool>()) {
        return Ok(DType::Bool);
    }
    if obj.is(py.get_type::<PyComplex>()) {
        return Ok(DType::Complex128);
    }
    Err(PyTypeError::new_err(format!(
        "expected a ferrograd.dtype, but got {}",
        obj.repr()?
    )))
}

/// An optional `dtype=` keyword: absent or None means none.
pub fn optional_dtype(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
    match obj {
        Some(dt) if !dt.is_none() => dtype_arg(dt).map(Some),
        _ => Ok(None),
    }
}

/// Sizes given either as varargs (`view(2, 3)`) or one sequence (`view((2, 3))`).
pub fn sizes(args: &Bound<'_, PyTuple>) -> PyResult<Vec<i64>> {
    if args.len() == 1 {
        let first = args.get_item(0)?;
        if !first.is_instance_of::<PyInt>() {
            if let Ok(seq) = first.downcast::<PySequence>() {
                return seq.extract::<Vec<i64>>().or_else(|_| {
                    Err(PyTypeError::new_err(format!(
                        "sizes must be a tuple of ints, but got {}",
                        first.repr()?
                    )))
                });
            }
        }
    }
    args.iter().map(|a| index_int(&a)).collect()
}

/// Sizes given positionally (`view(2, 3)`, `view((2, 3))`) or as the one keyword
/// argument PyTorch names them by (`view(size=(2, 3))`).
pub fn sizes_or_keyword(
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    keyword: &str,
) -> PyResult<Vec<i64>> {
    let Some(kw) = kwargs.filter(|k| !k.is_empty()) else {
        return sizes(args);
    };
    match kw.get_item(keyword)? {
        Some(value) if args.is_empty() && kw.len() == 1 => {
            sizes(&PyTuple::new(args.py(), [value])?)
        }
        _ => Err(PyTypeError::new_err(format!(
            "expected the sizes as arguments or as the keyword argument '{keyword}' alone, got {}",
            kw.keys().repr()?
        ))),
    }
}

fn index_int(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    if let Ok(t) = obj.downcast::<PyTensor>() {
        return Ok(t
            .get()
            .tensor()
            .item()
            .map_err(crate::errors::to_py)?
            .as_i64());
    }
    obj.extract::<i64>().map_err(|_| {
        PyTypeError::new_err(format!(
            "expected int, but got {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

/// `dim` and `keepdim` as given, or by the NumPy names PyTorch also takes
/// for them (`axis=`, `keepdims=`), which a signature collects with the
/// other keywords it does not name (its `**numpy`).
pub struct DimArgs<'py> {
    pub dim: Option<Bound<'py, PyAny>>,
    pub keepdim: bool,
}

/// The `dim`/`keepdim` of `fname`; a name given both ways, or any other
/// leftover keyword, is the `TypeError` of an unexpected keyword.
pub fn dim_args<'py>(
    fname: &str,
    dim: Option<&Bound<'py, PyAny>>,
    keepdim: Option<bool>,
    numpy: Option<&Bound<'py, PyDict>>,
) -> PyResult<DimArgs<'py>> {
    numpy_names(fname, dim, Some(keepdim), numpy)
}

/// The `dim` of `fname`, which has no `keepdim`.
pub fn dim_arg<'py>(
    fname: &str,
    dim: Option<&Bound<'py, PyAny>>,
    numpy: Option<&Bound<'py, PyDict>>,
) -> PyResult<DimArgs<'py>> {
    numpy_names(fname, dim, None, numpy)
}

fn numpy_names<'py>(
    fname: &str,
    dim: Option<&Bound<'py, PyAny>>,
    keepdim: Option<Option<bool>>,
    numpy: Option<&Bound<'py, PyDict>>,
) -> PyResult<DimArgs<'py>> {
    let mut args = DimArgs {
        dim: dim.filter(|d| !d.is_none()).cloned(),
        keepdim: keepdim.flatten().unwrap_or(false),
    };
    for (key, value) in numpy.into_iter().flat_map(|kw| kw.iter()) {
        let key: String = key.extract()?;
        match key.as_str() {
            "axis" if dim.is_none() => args.dim = (!value.is_none()).then_some(value),
            "keepdims" if keepdim == Some(None) => args.keepdim = value.extract()?,
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "{fname}() got an unexpected keyword argument '{key}'"
                )))
            }
        }
    }
    Ok(args)
}

impl DimArgs<'_> {
    /// The dims to reduce: `None` for all of them.
    pub fn dims(&self) -> PyResult<Option<Vec<i64>>> {
        dims(self.dim.as_ref())
    }

    /// `f` of the dims for `squeeze`, in the form they were given.
    pub fn with_squeeze_dims<R>(
        &self,
        f: impl FnOnce(ferrograd_core::ops::shape::SqueezeDims<'_>) -> R,
    ) -> PyResult<R> {
        use ferrograd_core::ops::shape::SqueezeDims;
        let one = self
            .dim
            .as_ref()
            .is_some_and(|d| d.extract::<i64>().is_ok());
        Ok(match (self.dims()?, one) {
            (None, _) => f(SqueezeDims::All),
            (Some(d), true) => f(SqueezeDims::One(d[0])),
            (Some(d), false) => f(SqueezeDims::Listed(&d)),
        })
    }

    /// A single dim, `None` when not given.
    pub fn single(&self) -> PyResult<Option<i64>> {
        self.dim.as_ref().map(|d| d.extract()).transpose()
    }

    /// A single dim that `fname` cannot do without.
    pub fn required(&self, fname: &str) -> PyResult<i64> {
        self.single()?.ok_or_else(|| {
            PyTypeError::new_err(format!(
                "{fname}() missing 1 required positional argument: 'dim'"
            ))
        })
    }
}

/// A `dim` argument: `None` (all), an int, or a sequence of ints.
pub fn dims(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<i64>>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => {
            if let Ok(d) = o.extract::<i64>() {
                Ok(Some(vec![d]))
            } else {
                Ok(Some(o.extract::<Vec<i64>>()?))
            }
        }
    }
}

/// Shape as a Python tuple.
pub fn shape_tuple<'py>(py: Python<'py>, shape: &[usize]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, shape.iter().copied())
}

/// A shape as a `ferrograd.Size`, the tuple subclass of the Python layer
/// (made without its argument checks: the core's sizes are ints).
pub fn shape_size<'py>(py: Python<'py>, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    static FROM_INTS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let from_ints = FROM_INTS.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py
            .import("ferrograd._size")?
            .getattr("_from_ints")?
            .unbind())
    })?;
    from_ints.bind(py).call1((shape_tuple(py, shape)?,))
}

/// The `min`/`max` arguments of `clamp`: numbers, or tensors (PyTorch takes
/// no mix of the two).
pub enum ClampBounds {
    Numbers(Option<Scalar>, Option<Scalar>),
    Tensors(Option<Tensor>, Option<Tensor>),
}

impl ClampBounds {
    pub fn extract(
        min: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let (min, max) = (min.filter(|v| !v.is_none()), max.filter(|v| !v.is_none()));
        let is_tensor =
            |v: Option<&Bound<'_, PyAny>>| v.is_some_and(|v| v.is_instance_of::<PyTensor>());
        let tensor = |v: Option<&Bound<'_, PyAny>>| -> PyResult<Option<Tensor>> {
            v.map(|v| Ok(v.downcast::<PyTensor>()?.get().tensor()))
                .transpose()
        };
        match (is_tensor(min), is_tensor(max)) {
            (false, false) => Ok(Self::Numbers(
                min.map(scalar).transpose()?,
                max.map(scalar).transpose()?,
            )),
            (true, true) => Ok(Self::Tensors(tensor(min)?, tensor(max)?)),
            (true, false) if max.is_none() => Ok(Self::Tensors(tensor(min)?, None)),
            (false, true) if min.is_none() => Ok(Self::Tensors(None, tensor(max)?)),
            _ => {
                let name = |v: Option<&Bound<'_, PyAny>>| -> PyResult<String> {
                    Ok(v.map(|v| v.get_type().name().map(|n| n.to_string()))
                        .transpose()?
                        .unwrap_or_default())
                };
                Err(PyTypeError::new_err(format!(
                    "clamp() received an invalid combination of arguments - got (Tensor, min={}, max={}), \
                     but expected one of:\n \
                     * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n \
                     * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n",
                    name(min)?,
                    name(max)?
                )))
            }
        }
    }

    /// The bound tensors, which an in-place clamp records as operands.
    pub fn tensors(&self) -> Vec<&Tensor> {
        match self {
            Self::Numbers(..) => Vec::new(),
            Self::Tensors(lo, hi) => lo.iter().chain(hi).collect(),
        }
    }

    pub fn clamp(&self, t: &Tensor) -> ferrograd_core::Result<Tensor> {
        use ferrograd_core::ops::unary;
        match self {
            Self::Numbers(lo, hi) => unary::clamp(t, *lo, *hi),
            Self::Tensors(lo, hi) => unary::clamp_tensor(t, lo.as_ref(), hi.as_ref()),
        }
    }
}

/// The bound of `clamp_min`/`clamp_max`: a tensor, or a number.
pub fn clamp_bound(obj: &Bound<'_, PyAny>) -> PyResult<ferrograd_core::ops::unary::Bound> {
    use ferrograd_core::ops::unary::Bound as ClampBound;
    match obj.downcast::<PyTensor>() {
        Ok(t) => Ok(ClampBound::Tensor(t.get().tensor())),
        Err(_) => scalar(obj).map(ClampBound::Number),
    }
}
