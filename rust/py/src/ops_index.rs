//! Joining, splitting and indexing as tensor methods and module functions.

use crate::convert::{dim_arg, scalar};
use crate::errors::IntoPyResult;
use crate::tensor::{maybe_detach, PyTensor};
use ferrograd_core::ops::{index, index_put, inplace, scan, scatter, shape};
use ferrograd_core::{DType, Scalar, Tensor};
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDict, PyEllipsis, PyInt, PyList, PyNone, PySequence, PySlice, PyTuple,
};

/// Tensors from a Python sequence of tensors.
fn tensor_list(seq: &Bound<'_, PyAny>) -> PyResult<Vec<Tensor>> {
    seq.try_iter()?
        .map(|x| {
            let x = x?;
            match x.downcast::<PyTensor>() {
                Ok(t) => Ok(t.get().tensor()),
                Err(_) => Err(PyTypeError::new_err(format!(
                    "expected Tensor as element in argument 0, but got {}",
                    x.get_type().name()?
                ))),
            }
        })
        .collect()
}

/// The value of `x[key] = value`: a tensor without its leading dimensions of size one (so
/// `x[0] = row[None]` works, as in PyTorch) or a number; other values raise PyTorch's error.
fn assigned_value(x: &Tensor, value: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    if let Ok(t) = value.downcast::<PyTensor>() {
        let t = &t.get().tensor();
        let lead = t.shape().iter().take_while(|&&d| d == 1).count();
        if lead == 0 {
            return Ok(t.clone());
        }
        let rest: Vec<i64> = t.shape()[lead..].iter().map(|&d| d as i64).collect();
        return shape::reshape(t, &rest).py();
    }
    // A number is converted to `x`'s dtype, checked as PyTorch does.
    if let Ok(number) = scalar(value) {
        let number = number.checked_to(x.dtype()).py()?;
        return Ok(Tensor::scalar(number, x.dtype()));
    }
    crate::convert::operand(value).map_err(|_| {
        let kind = value.get_type();
        let module = kind.module().map(|m| m.to_string()).unwrap_or_default();
        let name = kind.name().map(|n| n.to_string()).unwrap_or_default();
        let qualified = if module == "builtins" {
            name
        } else {
            format!("{module}.{name}")
        };
        PyTypeError::new_err(format!(
            "can't assign a {qualified} to a ferrograd.{}",
            x.dtype().legacy_name()
        ))
    })
}

fn tuple_of(py: Python<'_>, ts: Vec<Tensor>) -> PyResult<Bound<'_, PyTuple>> {
    PyTuple::new(py, ts.into_iter().map(PyTensor::from))
}

/// `scatter`'s source: a tensor, or a number given as `src` or `value`.
fn scatter_source(
    src: Option<&Bound<'_, PyAny>>,
    value: Option<&Bound<'_, PyAny>>,
) -> PyResult<scatter::Source> {
    match (src, value) {
        (Some(s), _) => match s.downcast::<PyTensor>() {
            Ok(t) => Ok(scatter::Source::Tensor(t.get().tensor())),
            Err(_) => Ok(scatter::Source::Value(scalar(s)?)),
        },
        (None, Some(v)) => Ok(scatter::Source::Value(scalar(v)?)),
        (None, None) => Err(PyTypeError::new_err(
            "scatter() missing 1 required positional argument: 'src' or 'value'",
        )),
    }
}

/// `index_put_`'s indices: a sequence of index objects or `None`.
fn index_list(indices: &Bound<'_, PyAny>) -> PyResult<Vec<Option<Tensor>>> {
    indices
        .try_iter()?
        .map(|i| {
            let i = i?;
            Ok(if i.is_none() {
                None
            } else {
                Some(index_tensor(&i)?)
            })
        })
        .collect()
}

/// One parsed item of an index expression.
enum Item {
    Int(i64),
    /// `start:stop:step` as given (`None` where omitted).
    Slice(Option<i64>, Option<i64>, Option<i64>),
    NewAxis,
    Ellipsis,
    /// A Python bool: a new size-1 axis, selected (`True`) or emptied.
    Bool(bool),
    Tensor(Tensor),
}

/// An index object (list, NumPy array, ...) as a tensor; empty lists are
/// int64 as in PyTorch.
fn index_tensor(obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    if let Ok(t) = obj.downcast::<PyTensor>() {
        return Ok(t.get().tensor());
    }
    let fg = obj.py().import("ferrograd")?;
    let t: PyRef<'_, PyTensor> = fg.getattr("as_tensor")?.call1((obj,))?.extract()?;
    let t = t.tensor();
    if t.numel() == 0 && t.dtype() != DType::Bool {
        return ferrograd_core::ops::copy::try_cast(&t, DType::Int64).py();
    }
    Ok(t)
}

fn parse(key: &Bound<'_, PyAny>) -> PyResult<Vec<Item>> {
    let items: Vec<Bound<'_, PyAny>> = match key.downcast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    items
        .into_iter()
        .map(|it| {
            Ok(if it.is_instance_of::<PyBool>() {
                Item::Bool(it.extract()?)
            } else if it.is_instance_of::<PyInt>() {
                Item::Int(it.extract()?)
            } else if let Ok(sl) = it.downcast::<PySlice>() {
                let part = |name: &str| -> PyResult<Option<i64>> {
                    let v = sl.getattr(name)?;
                    if v.is_none() {
                        Ok(None)
                    } else {
                        Ok(Some(v.call_method0("__index__")?.extract()?))
                    }
                };
                Item::Slice(part("start")?, part("stop")?, part("step")?)
            } else if it.is_instance_of::<PyNone>() {
                Item::NewAxis
            } else if it.is_instance_of::<PyEllipsis>() {
                Item::Ellipsis
            } else if it.downcast::<PyTensor>().is_ok()
                || it.is_instance_of::<PyList>()
                || it.downcast::<PySequence>().is_ok()
                || it.hasattr("__array__")?
            {
                let t = index_tensor(&it)?;
                match (t.ndim(), t.dtype()) {
                    (0, DType::Bool) => Item::Bool(t.item().py()?.as_bool()),
                    // A 0-d integer index (a tensor or NumPy integer) selects
                    // as a Python int does, giving a view: `x[i][j] = v`
                    // then writes `x`.
                    (0, dtype) if dtype.is_integral(false) && dtype != DType::UInt8 => {
                        Item::Int(t.item().py()?.as_i64())
                    }
                    _ => Item::Tensor(t),
                }
            } else if let Ok(i) = it.call_method0("__index__") {
                Item::Int(i.extract()?)
            } else {
                return Err(PyIndexError::new_err(
                    "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got ".to_string()
                        + &it.get_type().name()?.to_string()
                        + ")",
                ));
            })
        })
        .collect()
}

/// Python's slice bounds for a positive step: `(start, length)`.
fn slice_bounds(start: Option<i64>, stop: Option<i64>, step: i64, size: i64) -> (i64, i64) {
    let clamp = |v: i64| {
        if v < 0 {
            (v + size).max(0)
        } else {
            v.min(size)
        }
    };
    let start = start.map_or(0, clamp);
    let stop = stop.map_or(size, clamp);
    let len = if stop > start {
        (stop - start + step - 1) / step
    } else {
        0
    };
    (start, len)
}

/// Applies the basic items (views) and collects advanced ones: the view and
/// the per-dim advanced indices of it (empty when there are none). With
/// `skip_full`, slices covering a whole dimension make no view (PyTorch's
/// assignment does the same, so `x[:, idx] = v` is one `index_put_`).
fn apply_basic(
    t: &Tensor,
    items: &[Item],
    skip_full: bool,
) -> PyResult<(Tensor, Vec<Option<Tensor>>)> {
    let specified: usize = items
        .iter()
        .map(|it| match it {
            Item::Int(_) | Item::Slice(..) => 1,
            Item::Tensor(x) if x.dtype() == DType::Bool => x.ndim(),
            Item::Tensor(_) => 1,
            _ => 0,
        })
        .sum();
    if specified > t.ndim() {
        return Err(PyIndexError::new_err(format!(
            "too many indices for tensor of dimension {}",
            t.ndim()
        )));
    }
    if items.iter().filter(|i| matches!(i, Item::Ellipsis)).count() > 1 {
        return Err(PyIndexError::new_err(
            "an index can only have a single ellipsis ('...')",
        ));
    }
    let mut x = t.clone();
    let (mut dim, mut real_dim) = (0usize, 0usize);
    let mut adv: Vec<Option<Tensor>> = Vec::new();
    let place = |adv: &mut Vec<Option<Tensor>>, at: usize, idx: Tensor| {
        adv.resize(at, None);
        adv.push(Some(idx));
    };
    for it in items {
        match it {
            Item::Int(i) => {
                let size = x.shape()[dim] as i64;
                if *i < -size || *i >= size {
                    return Err(PyIndexError::new_err(format!(
                        "index {} is out of bounds for dimension {} with size {}",
                        i, real_dim, size
                    )));
                }
                x = shape::select(&x, dim as i64, *i).py()?;
                real_dim += 1;
            }
            Item::Slice(start, stop, step) => {
                let step = step.unwrap_or(1);
                if step <= 0 {
                    return Err(PyValueError::new_err("step must be greater than zero"));
                }
                let size = x.shape()[dim] as i64;
                let (s, len) = slice_bounds(*start, *stop, step, size);
                if !(skip_full && s == 0 && len == size && step == 1) {
                    x = shape::slice(&x, dim, s as usize, len as usize, step as usize).py()?;
                }
                dim += 1;
                real_dim += 1;
            }
            Item::NewAxis => {
                x = shape::unsqueeze(&x, dim as i64).py()?;
                dim += 1;
            }
            Item::Ellipsis => {
                let skip = t.ndim() - specified;
                dim += skip;
                real_dim += skip;
            }
            Item::Bool(keep) => {
                let keep = *keep;
                x = shape::unsqueeze(&x, dim as i64).py()?;
                let sel: Vec<i64> = if keep { vec![0] } else { vec![] };
                let n = sel.len();
                place(&mut adv, dim, Tensor::from_vec(sel, &[n]).py()?);
                dim += 1;
            }
            Item::Tensor(idx) => {
                let used = if idx.dtype() == DType::Bool {
                    idx.ndim()
                } else {
                    1
                };
                place(&mut adv, dim, idx.clone());
                for _ in 1..used {
                    adv.push(None);
                }
                dim += used;
                real_dim += used;
            }
        }
    }
    // Masks occupy several dims: keep only the entry where each starts.
    let mut normalized = Vec::new();
    let mut k = 0;
    while k < adv.len() {
        let entry = adv[k].clone();
        let used = match &entry {
            Some(m) if m.dtype() == DType::Bool => m.ndim().max(1),
            _ => 1,
        };
        normalized.push(entry);
        k += used;
    }
    Ok((x, normalized))
}

#[pymethods]
impl PyTensor {
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let items = parse(key)?;
        let (x, adv) = apply_basic(&self.tensor(), &items, false)?;
        if adv.iter().all(|a| a.is_none()) {
            if x.same(&self.tensor()) {
                // `x[...]` / `x[()]`: a new view of the same data.
                return Ok(shape::expand_to(&x, x.shape()).py()?.into());
            }
            return Ok(x.into());
        }
        Ok(maybe_detach(py, x.numel(), || index::index(&x, &adv))
            .py()?
            .into())
    }

    /// `x[key] = value`: basic indices make a view that `copy_` writes
    /// (rewriting the base's history through `CopySlices` when recorded);
    /// advanced ones go through `index_put_` (`IndexPutBackward0`).
    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let value = assigned_value(&self.tensor(), value)?;
        let items = parse(key)?;
        let (x, adv) = apply_basic(&self.tensor(), &items, true)?;
        if adv.iter().all(|a| a.is_none()) {
            shape::check_expandable(&value, x.shape()).py()?;
            value.layout().broadcast_to(x.shape()).py()?;
            return inplace::copy_(&x, &value).py();
        }
        inplace::index_put_(&x, &adv, &value, false).py()
    }

    #[pyo3(signature = (indices, values, accumulate=false))]
    fn index_put_(
        slf: PyRef<'_, Self>,
        indices: &Bound<'_, PyAny>,
        values: PyRef<'_, PyTensor>,
        accumulate: bool,
    ) -> PyResult<Py<PyTensor>> {
        let idx = index_list(indices)?;
        inplace::index_put_(&slf.tensor(), &idx, &values.tensor(), accumulate).py()?;
        Ok(slf.into())
    }

    #[pyo3(signature = (indices, values, accumulate=false))]
    fn index_put(
        &self,
        indices: &Bound<'_, PyAny>,
        values: PyRef<'_, PyTensor>,
        accumulate: bool,
    ) -> PyResult<PyTensor> {
        let idx = index_list(indices)?;
        Ok(
            index_put::index_put(&self.tensor(), &idx, &values.tensor(), accumulate)
                .py()?
                .into(),
        )
    }

    #[pyo3(signature = (dim, index, source, *, alpha=None))]
    fn index_add_(
        slf: PyRef<'_, Self>,
        dim: i64,
        index: PyRef<'_, PyTensor>,
        source: PyRef<'_, PyTensor>,
        alpha: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyTensor>> {
        let alpha = alpha.map(scalar).transpose()?.unwrap_or(Scalar::Int(1));
        inplace::index_add_(&slf.tensor(), dim, &index.tensor(), &source.tensor(), alpha).py()?;
        Ok(slf.into())
    }

    #[pyo3(signature = (dim, index, source, *, alpha=None))]
    fn index_add(
        &self,
        dim: i64,
        index: PyRef<'_, PyTensor>,
        source: PyRef<'_, PyTensor>,
        alpha: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let alpha = alpha.map(scalar).transpose()?.unwrap_or(Scalar::Int(1));
        Ok(index_put::index_add(
            &self.tensor(),
            dim,
            &index.tensor(),
            &source.tensor(),
            alpha,
        )
        .py()?
        .into())
    }

    #[pyo3(signature = (split_size_or_sections, dim=0))]
    fn split<'py>(
        &self,
        py: Python<'py>,
        split_size_or_sections: &Bound<'py, PyAny>,
        dim: i64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let parts = match split_size_or_sections.extract::<i64>() {
            Ok(n) if n >= 0 => index::split(&self.tensor(), n as usize, dim),
            Ok(n) => {
                return Err(PyRuntimeError::new_err(format!(
                    "split expects split_size be non-negative, but got split_size={n}"
                )))
            }
            Err(_) => index::split_with_sizes(
                &self.tensor(),
                &split_size_or_sections.extract::<Vec<i64>>()?,
                dim,
            ),
        };
        tuple_of(py, parts.py()?)
    }
    #[pyo3(signature = (chunks, dim=None, **numpy))]
    fn chunk<'py>(
        &self,
        py: Python<'py>,
        chunks: i64,
        dim: Option<&Bound<'_, PyAny>>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let dim = dim_arg("chunk", dim, numpy)?.single()?.unwrap_or(0);
        tuple_of(py, index::chunk(&self.tensor(), chunks, dim).py()?)
    }
    #[pyo3(signature = (dim=None, **numpy))]
    fn unbind<'py>(
        &self,
        py: Python<'py>,
        dim: Option<&Bound<'_, PyAny>>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let dim = dim_arg("unbind", dim, numpy)?.single()?.unwrap_or(0);
        tuple_of(py, index::unbind(&self.tensor(), dim).py()?)
    }
    fn index_select(&self, dim: i64, index: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        Ok(index::index_select(&self.tensor(), dim, &index.tensor())
            .py()?
            .into())
    }
    /// `sparse_grad=True` asks PyTorch for a sparse gradient; ferrograd's
    /// is dense, with the same values.
    #[pyo3(signature = (dim, index, *, sparse_grad=false))]
    fn gather(
        &self,
        dim: i64,
        index: PyRef<'_, PyTensor>,
        sparse_grad: bool,
    ) -> PyResult<PyTensor> {
        let _ = sparse_grad;
        Ok(index::gather(&self.tensor(), dim, &index.tensor())
            .py()?
            .into())
    }
    #[pyo3(signature = (dim, index, src=None, *, value=None, reduce=None))]
    fn scatter(
        &self,
        dim: i64,
        index: PyRef<'_, PyTensor>,
        src: Option<&Bound<'_, PyAny>>,
        value: Option<&Bound<'_, PyAny>>,
        reduce: Option<&str>,
    ) -> PyResult<PyTensor> {
        let src = scatter_source(src, value)?;
        Ok(
            scatter::scatter_from(&self.tensor(), dim, &index.tensor(), src, reduce)
                .py()?
                .into(),
        )
    }
    #[pyo3(signature = (dim, index, src=None, *, value=None, reduce=None))]
    fn scatter_(
        slf: PyRef<'_, Self>,
        dim: i64,
        index: PyRef<'_, PyTensor>,
        src: Option<&Bound<'_, PyAny>>,
        value: Option<&Bound<'_, PyAny>>,
        reduce: Option<&str>,
    ) -> PyResult<Py<PyTensor>> {
        let src = scatter_source(src, value)?;
        inplace::scatter_(&slf.tensor(), dim, &index.tensor(), src, reduce).py()?;
        Ok(slf.into())
    }
    fn scatter_add(
        &self,
        dim: i64,
        index: PyRef<'_, PyTensor>,
        src: PyRef<'_, PyTensor>,
    ) -> PyResult<PyTensor> {
        Ok(
            scatter::scatter_add(&self.tensor(), dim, &index.tensor(), &src.tensor())
                .py()?
                .into(),
        )
    }
    fn scatter_add_(
        slf: PyRef<'_, Self>,
        dim: i64,
        index: PyRef<'_, PyTensor>,
        src: PyRef<'_, PyTensor>,
    ) -> PyResult<Py<PyTensor>> {
        inplace::scatter_add_(&slf.tensor(), dim, &index.tensor(), &src.tensor()).py()?;
        Ok(slf.into())
    }
    #[pyo3(signature = (dim, index, src, reduce, *, include_self=true))]
    fn scatter_reduce(
        &self,
        dim: i64,
        index: PyRef<'_, PyTensor>,
        src: PyRef<'_, PyTensor>,
        reduce: &str,
        include_self: bool,
    ) -> PyResult<PyTensor> {
        let reduce = scatter::Reduction::parse(reduce).py()?;
        Ok(scatter::scatter_reduce(
            &self.tensor(),
            dim,
            &index.tensor(),
            &src.tensor(),
            reduce,
            include_self,
        )
        .py()?
        .into())
    }
    #[pyo3(signature = (dim, index, src, reduce, *, include_self=true))]
    fn scatter_reduce_(
        slf: PyRef<'_, Self>,
        dim: i64,
        index: PyRef<'_, PyTensor>,
        src: PyRef<'_, PyTensor>,
        reduce: &str,
        include_self: bool,
    ) -> PyResult<Py<PyTensor>> {
        let reduce = scatter::Reduction::parse(reduce).py()?;
        inplace::scatter_reduce_(
            &slf.tensor(),
            dim,
            &index.tensor(),
            &src.tensor(),
            reduce,
            include_self,
        )
        .py()?;
        Ok(slf.into())
    }
    #[pyo3(signature = (*dims, **kwargs))]
    fn flip(
        &self,
        dims: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        Ok(index::flip(
            &self.tensor(),
            &crate::convert::sizes_or_keyword(dims, kwargs, "dims")?,
        )
        .py()?
        .into())
    }
    #[pyo3(signature = (shifts, dims=None))]
    fn roll(
        &self,
        shifts: &Bound<'_, PyAny>,
        dims: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let shifts = crate::convert::dims(Some(shifts))?.unwrap_or_default();
        let dims = crate::convert::dims(dims)?.unwrap_or_default();
        Ok(index::roll(&self.tensor(), &shifts, &dims).py()?.into())
    }
    #[pyo3(signature = (dim=None, *, dtype=None, **numpy))]
    fn cumsum(
        &self,
        dim: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let dim = dim_arg("cumsum", dim, numpy)?.required("cumsum")?;
        let dtype = crate::convert::optional_dtype(dtype)?;
        Ok(scan::cumsum(&self.tensor(), dim, dtype).py()?.into())
    }
    #[pyo3(signature = (dim=None, *, dtype=None, **numpy))]
    fn cumprod(
        &self,
        dim: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let dim = dim_arg("cumprod", dim, numpy)?.required("cumprod")?;
        let dtype = crate::convert::optional_dtype(dtype)?;
        Ok(scan::cumprod(&self.tensor(), dim, dtype).py()?.into())
    }
    #[pyo3(signature = (diagonal=0))]
    fn tril(&self, diagonal: i64) -> PyResult<PyTensor> {
        Ok(index::tril(&self.tensor(), diagonal).py()?.into())
    }
    #[pyo3(signature = (diagonal=0))]
    fn triu(&self, diagonal: i64) -> PyResult<PyTensor> {
        Ok(index::triu(&self.tensor(), diagonal).py()?.into())
    }
    #[pyo3(signature = (*sizes, **kwargs))]
    fn repeat(
        &self,
        sizes: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        Ok(index::repeat(
            &self.tensor(),
            &crate::convert::sizes_or_keyword(sizes, kwargs, "repeats")?,
        )
        .py()?
        .into())
    }
    fn movedim(
        &self,
        source: &Bound<'_, PyAny>,
        destination: &Bound<'_, PyAny>,
    ) -> PyResult<PyTensor> {
        let s = crate::convert::dims(Some(source))?.unwrap_or_default();
        let d = crate::convert::dims(Some(destination))?.unwrap_or_default();
        Ok(index::movedim(&self.tensor(), &s, &d).py()?.into())
    }
    fn moveaxis(
        &self,
        source: &Bound<'_, PyAny>,
        destination: &Bound<'_, PyAny>,
    ) -> PyResult<PyTensor> {
        self.movedim(source, destination)
    }
    fn masked_fill(
        &self,
        mask: PyRef<'_, PyTensor>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<PyTensor> {
        let (t, m) = (self.tensor(), mask.tensor());
        let out = match value.downcast::<PyTensor>() {
            Ok(v) => index::masked_fill_tensor(&t, &m, &v.get().tensor()),
            Err(_) => index::masked_fill(&t, &m, scalar(value)?),
        };
        Ok(out.py()?.into())
    }
}

/// `ferrograd.cat(tensors, dim=0)`.
#[pyfunction]
#[pyo3(signature = (tensors, dim=None, **numpy))]
fn cat(
    py: Python<'_>,
    tensors: &Bound<'_, PyAny>,
    dim: Option<&Bound<'_, PyAny>>,
    numpy: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyTensor> {
    let dim = dim_arg("cat", dim, numpy)?.single()?.unwrap_or(0);
    refuse_lone_tensor("cat", tensors)?;
    let ts = tensor_list(tensors)?;
    let n = ts.iter().map(|t| t.numel()).sum();
    Ok(maybe_detach(py, n, || index::cat(&ts, dim)).py()?.into())
}

/// A tensor given where a sequence of tensors is expected would be iterated over
/// its first dimension; PyTorch refuses it.
fn refuse_lone_tensor(function: &str, tensors: &Bound<'_, PyAny>) -> PyResult<()> {
    if tensors.downcast::<PyTensor>().is_ok() {
        return Err(PyTypeError::new_err(format!(
            "{function}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"
        )));
    }
    Ok(())
}

/// `ferrograd.stack(tensors, dim=0)`.
#[pyfunction]
#[pyo3(signature = (tensors, dim=None, **numpy))]
fn stack(
    py: Python<'_>,
    tensors: &Bound<'_, PyAny>,
    dim: Option<&Bound<'_, PyAny>>,
    numpy: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyTensor> {
    let dim = dim_arg("stack", dim, numpy)?.single()?.unwrap_or(0);
    refuse_lone_tensor("stack", tensors)?;
    let ts = tensor_list(tensors)?;
    let n = ts.iter().map(|t| t.numel()).sum();
    Ok(maybe_detach(py, n, || index::stack(&ts, dim)).py()?.into())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cat, m)?)?;
    m.add_function(wrap_pyfunction!(stack, m)?)?;
    Ok(())
}
