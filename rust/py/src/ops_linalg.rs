//! Matrix products and reductions as tensor methods, and the losses and
//! normalizations with reduction kernels of their own.

use crate::convert::{dim_arg, dim_args, dims, dtype_arg, operand, scalar, DimArgs};
use crate::errors::IntoPyResult;
use crate::tensor::{maybe_detach, PyTensor};
use ferrograd_core::ops::{binary, copy, loss, matmul, norm, reduce, sort};
use ferrograd_core::{Result, Scalar, Tensor};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict};

type Product = fn(&Tensor, &Tensor) -> Result<Tensor>;

/// Runs a product with the GIL released when the work is large: a matrix
/// right operand makes it `a.numel() * columns` multiply-adds, about four
/// of which cost what one element of a simple elementwise op does.
fn product(py: Python<'_>, a: &Tensor, b: &Tensor, op: Product) -> PyResult<PyTensor> {
    let multiply_adds = match b.shape() {
        [.., _, columns] => a.numel().saturating_mul(*columns),
        _ => 0,
    };
    let work = a.numel().max(b.numel()).max(multiply_adds / 4);
    Ok(maybe_detach(py, work, || op(a, b)).py()?.into())
}

/// `std`/`var`'s dims, correction and `keepdim`. A bool where `dim` goes
/// is `unbiased`, as in PyTorch's `x.std(False)`.
fn spread_args(
    fname: &str,
    dim: Option<&Bound<'_, PyAny>>,
    unbiased: bool,
    keepdim: Option<bool>,
    correction: Option<f64>,
    numpy: Option<&Bound<'_, PyDict>>,
) -> PyResult<(Vec<i64>, f64, bool)> {
    let (dim, unbiased) = match dim.map(|d| d.downcast::<PyBool>()) {
        Some(Ok(flag)) => (None, flag.is_true()),
        _ => (dim, unbiased),
    };
    let args = dim_args(fname, dim, keepdim, numpy)?;
    let correction = correction.unwrap_or(if unbiased { 1.0 } else { 0.0 });
    Ok((args.dims()?.unwrap_or_default(), correction, args.keepdim))
}

#[pymethods]
impl PyTensor {
    fn __matmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let Ok(b) = other.downcast::<PyTensor>() else {
            return Ok(py.NotImplemented());
        };
        let out = product(py, &self.tensor(), &b.get().tensor(), matmul::matmul)?;
        Ok(Bound::new(py, out)?.into_any().unbind())
    }
    fn __rmatmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let Ok(a) = other.downcast::<PyTensor>() else {
            return Ok(py.NotImplemented());
        };
        let out = product(py, &a.get().tensor(), &self.tensor(), matmul::matmul)?;
        Ok(Bound::new(py, out)?.into_any().unbind())
    }
    fn matmul(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        product(py, &self.tensor(), &other.tensor(), matmul::matmul)
    }
    fn mm(&self, py: Python<'_>, mat2: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        product(py, &self.tensor(), &mat2.tensor(), matmul::mm)
    }
    fn bmm(&self, py: Python<'_>, mat2: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        product(py, &self.tensor(), &mat2.tensor(), matmul::bmm)
    }
    fn dot(&self, py: Python<'_>, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        product(py, &self.tensor(), &other.tensor(), matmul::dot)
    }
    fn mv(&self, py: Python<'_>, vec: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        product(py, &self.tensor(), &vec.tensor(), matmul::mv)
    }
    fn outer(&self, py: Python<'_>, vec2: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        product(py, &self.tensor(), &vec2.tensor(), matmul::outer)
    }
    fn ger(&self, py: Python<'_>, vec2: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        product(py, &self.tensor(), &vec2.tensor(), matmul::outer)
    }
    #[pyo3(signature = (mat1, mat2, *, beta=None, alpha=None))]
    fn addmm(
        &self,
        py: Python<'_>,
        mat1: PyRef<'_, PyTensor>,
        mat2: PyRef<'_, PyTensor>,
        beta: Option<&Bound<'_, PyAny>>,
        alpha: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let beta = beta.map(scalar).transpose()?.unwrap_or(Scalar::Int(1));
        let alpha = alpha.map(scalar).transpose()?.unwrap_or(Scalar::Int(1));
        let (m1, m2) = (&mat1.tensor(), &mat2.tensor());
        Ok(maybe_detach(py, m1.numel().max(m2.numel()), || {
            matmul::addmm(&self.tensor(), m1, m2, beta, alpha)
        })
        .py()?
        .into())
    }
}

/// `(values, indices)` as the named tuple type `ferrograd.return_types.<name>`
/// (made and cached by the Python layer), like `torch.return_types.max`.
fn values_indices(py: Python<'_>, name: &str, v: Tensor, i: Tensor) -> PyResult<Py<PyAny>> {
    static FACTORY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let factory = FACTORY.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py
            .import("ferrograd._functions")?
            .getattr("_return_type")?
            .unbind())
    })?;
    let cls = factory.bind(py).call1((name,))?;
    Ok(cls.call1((PyTensor::from(v), PyTensor::from(i)))?.unbind())
}

/// `op` over the dims of `args` (every dim when none is given).
fn reduce_over(
    py: Python<'_>,
    t: &Tensor,
    args: DimArgs<'_>,
    op: fn(&Tensor, &[i64], bool) -> Result<Tensor>,
) -> PyResult<PyTensor> {
    let d = args.dims()?.unwrap_or_default();
    Ok(maybe_detach(py, t.numel(), || op(t, &d, args.keepdim))
        .py()?
        .into())
}

/// `op` over the dims of `args`: every dim when none is given, none for an
/// empty list.
fn reduce_over_listed(
    py: Python<'_>,
    t: &Tensor,
    args: DimArgs<'_>,
    op: fn(&Tensor, Option<&[i64]>, bool) -> Result<Tensor>,
) -> PyResult<PyTensor> {
    let d = args.dims()?;
    Ok(
        maybe_detach(py, t.numel(), || op(t, d.as_deref(), args.keepdim))
            .py()?
            .into(),
    )
}

/// `op` along the one dim of `args` (over all elements when none is given).
fn reduce_along(
    py: Python<'_>,
    t: &Tensor,
    args: DimArgs<'_>,
    op: fn(&Tensor, Option<i64>, bool) -> Result<Tensor>,
) -> PyResult<PyTensor> {
    let dim = args.single()?;
    Ok(maybe_detach(py, t.numel(), || op(t, dim, args.keepdim))
        .py()?
        .into())
}

/// `op` along one dim (`softmax`, `log_softmax`).
fn along_dim(
    py: Python<'_>,
    t: &Tensor,
    dim: i64,
    op: fn(&Tensor, i64) -> Result<Tensor>,
) -> PyResult<PyTensor> {
    Ok(maybe_detach(py, t.numel(), || op(t, dim)).py()?.into())
}

/// Reductions over `dim` (every dim when none is given) with `keepdim`,
/// each a tensor method taking NumPy's names for them too.
macro_rules! dim_reductions {
    ($($name:ident => $helper:ident($op:path);)*) => {
        #[pymethods]
        impl PyTensor {$(
            #[pyo3(signature = (dim=None, keepdim=None, **numpy))]
            fn $name(
                &self,
                py: Python<'_>,
                dim: Option<&Bound<'_, PyAny>>,
                keepdim: Option<bool>,
                numpy: Option<&Bound<'_, PyDict>>,
            ) -> PyResult<PyTensor> {
                let args = dim_args(stringify!($name), dim, keepdim, numpy)?;
                $helper(py, &self.tensor(), args, $op)
            }
        )*}
    };
}

dim_reductions! {
    amax => reduce_over(reduce::amax);
    amin => reduce_over(reduce::amin);
    all => reduce_over_listed(reduce::all);
    any => reduce_over_listed(reduce::any);
    argmax => reduce_along(reduce::argmax);
    argmin => reduce_along(reduce::argmin);
}

/// `t` converted to `dtype` first when a `dtype=` keyword is given.
fn with_dtype_kw(t: &Tensor, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<Tensor> {
    match dtype {
        Some(d) if !d.is_none() => copy::to_dtype(t, dtype_arg(d)?).py(),
        _ => Ok(t.clone()),
    }
}

type Extreme = (
    fn(&Tensor) -> Result<Tensor>,
    fn(&Tensor, i64, bool) -> Result<(Tensor, Tensor)>,
    fn(&Tensor, &Tensor) -> Result<Tensor>,
);

/// `max()`, `max(dim, keepdim)` and `max(other)` (and the same for min).
fn extreme(
    py: Python<'_>,
    t: &Tensor,
    dim: Option<&Bound<'_, PyAny>>,
    keepdim: bool,
    name: &str,
    (all, along, elementwise): Extreme,
) -> PyResult<Py<PyAny>> {
    let out = match dim {
        None => PyTensor::from(maybe_detach(py, t.numel(), || all(t)).py()?),
        Some(d) if d.downcast::<PyTensor>().is_ok() => {
            let other = operand(d)?;
            PyTensor::from(elementwise(t, &other).py()?)
        }
        Some(d) => {
            let d: i64 = d.extract()?;
            let (v, i) = maybe_detach(py, t.numel(), || along(t, d, keepdim)).py()?;
            return values_indices(py, name, v, i);
        }
    };
    Ok(Bound::new(py, out)?.into_any().unbind())
}

#[pymethods]
impl PyTensor {
    #[pyo3(signature = (dim=None, keepdim=None, *, other=None, **numpy))]
    fn max(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: Option<bool>,
        other: Option<&Bound<'_, PyAny>>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        // `max(other=t)` is the elementwise form, as `max(t)` is.
        let args = dim_args("max", other.or(dim), keepdim, numpy)?;
        let (dim, keepdim) = (args.dim.as_ref(), args.keepdim);
        let ops: Extreme = (reduce::max_all, reduce::max_dim, binary::maximum);
        extreme(py, &self.tensor(), dim, keepdim, "max", ops)
    }
    #[pyo3(signature = (dim=None, keepdim=None, *, other=None, **numpy))]
    fn min(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: Option<bool>,
        other: Option<&Bound<'_, PyAny>>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        // `min(other=t)` is the elementwise form, as `min(t)` is.
        let args = dim_args("min", other.or(dim), keepdim, numpy)?;
        let (dim, keepdim) = (args.dim.as_ref(), args.keepdim);
        let ops: Extreme = (reduce::min_all, reduce::min_dim, binary::minimum);
        extreme(py, &self.tensor(), dim, keepdim, "min", ops)
    }
    #[pyo3(signature = (dim=None, descending=false, *, stable=false, **numpy))]
    fn sort(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        descending: bool,
        stable: bool,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let dim = dim_arg("sort", dim, numpy)?.single()?.unwrap_or(-1);
        // The sort is stable whether asked or not.
        let _ = stable;
        let (v, i) = maybe_detach(py, self.tensor().numel(), || {
            sort::sort(&self.tensor(), dim, descending)
        })
        .py()?;
        values_indices(py, "sort", v, i)
    }
    #[pyo3(signature = (dim=None, descending=false, *, stable=false, **numpy))]
    fn argsort(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        descending: bool,
        stable: bool,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let dim = dim_arg("argsort", dim, numpy)?.single()?.unwrap_or(-1);
        let _ = stable;
        let sorted = maybe_detach(py, self.tensor().numel(), || {
            sort::sort(&self.tensor().detach(), dim, descending)
        });
        Ok(sorted.py()?.1.into())
    }
    #[pyo3(signature = (k, dim=None, largest=true, sorted=true, **numpy))]
    fn topk(
        &self,
        py: Python<'_>,
        k: i64,
        dim: Option<&Bound<'_, PyAny>>,
        largest: bool,
        sorted: bool,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let dim = dim_arg("topk", dim, numpy)?.single()?.unwrap_or(-1);
        // Always in order, which `sorted=False` allows.
        let _ = sorted;
        let (v, i) = maybe_detach(py, self.tensor().numel(), || {
            sort::topk(&self.tensor(), k, dim, largest)
        })
        .py()?;
        values_indices(py, "topk", v, i)
    }
    #[pyo3(signature = (dim=None, dtype=None, **numpy))]
    fn softmax(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let dim = dim_arg("softmax", dim, numpy)?.required("softmax")?;
        along_dim(
            py,
            &with_dtype_kw(&self.tensor(), dtype)?,
            dim,
            reduce::softmax,
        )
    }
    #[pyo3(signature = (dim=None, dtype=None, **numpy))]
    fn log_softmax(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let dim = dim_arg("log_softmax", dim, numpy)?.required("log_softmax")?;
        along_dim(
            py,
            &with_dtype_kw(&self.tensor(), dtype)?,
            dim,
            reduce::log_softmax,
        )
    }
    #[pyo3(signature = (dim=None, keepdim=None, **numpy))]
    fn logsumexp(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: Option<bool>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let args = dim_args("logsumexp", dim, keepdim, numpy)?;
        let keepdim = args.keepdim;
        let Some(d) = args.dims()? else {
            return Err(PyTypeError::new_err(
                "logsumexp() missing 1 required positional argument: 'dim'",
            ));
        };
        Ok(maybe_detach(py, self.tensor().numel(), || {
            reduce::logsumexp(&self.tensor(), &d, keepdim)
        })
        .py()?
        .into())
    }
    #[pyo3(signature = (dim=None, unbiased=true, keepdim=None, *, correction=None, **numpy))]
    fn var(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        unbiased: bool,
        keepdim: Option<bool>,
        correction: Option<f64>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let (d, c, keepdim) = spread_args("var", dim, unbiased, keepdim, correction, numpy)?;
        Ok(maybe_detach(py, self.tensor().numel(), || {
            reduce::var(&self.tensor(), &d, c, keepdim)
        })
        .py()?
        .into())
    }
    #[pyo3(signature = (dim=None, unbiased=true, keepdim=None, *, correction=None, **numpy))]
    fn std(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        unbiased: bool,
        keepdim: Option<bool>,
        correction: Option<f64>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let (d, c, keepdim) = spread_args("std", dim, unbiased, keepdim, correction, numpy)?;
        Ok(maybe_detach(py, self.tensor().numel(), || {
            reduce::std(&self.tensor(), &d, c, keepdim)
        })
        .py()?
        .into())
    }
    #[pyo3(signature = (p=None, dim=None, keepdim=false, dtype=None))]
    fn norm(
        &self,
        py: Python<'_>,
        p: Option<&Bound<'_, PyAny>>,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: bool,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let t = with_dtype_kw(&self.tensor(), dtype)?;
        if let Some(p) = p.filter(|p| !p.is_none()) {
            let two = p.extract::<f64>().map(|v| v == 2.0).unwrap_or(false);
            if !two && p.extract::<String>().map(|s| s != "fro").unwrap_or(true) {
                let linalg = py.import("ferrograd.linalg")?;
                let out = if p.extract::<String>().is_ok() {
                    let dim = match dim.filter(|d| !d.is_none()) {
                        Some(d) => d.clone(),
                        None => (-2i64, -1i64).into_pyobject(py)?.into_any(),
                    };
                    linalg
                        .call_method1("matrix_norm", (PyTensor::from(t.clone()), p, dim, keepdim))?
                } else {
                    let dim = dim.cloned().unwrap_or_else(|| py.None().into_bound(py));
                    linalg
                        .call_method1("vector_norm", (PyTensor::from(t.clone()), p, dim, keepdim))?
                };
                return Ok(out.downcast::<PyTensor>()?.get().tensor().into());
            }
        }
        let d = dims(dim)?.unwrap_or_default();
        Ok(
            maybe_detach(py, t.numel(), || reduce::norm2(&t, &d, keepdim))
                .py()?
                .into(),
        )
    }
}

/// `ferrograd.addmm(input, mat1, mat2, *, beta=1, alpha=1)`; `input` may be a number.
#[pyfunction]
#[pyo3(signature = (input, mat1, mat2, *, beta=None, alpha=None))]
fn addmm(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    mat1: PyRef<'_, PyTensor>,
    mat2: PyRef<'_, PyTensor>,
    beta: Option<&Bound<'_, PyAny>>,
    alpha: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    PyTensor::from(operand(input)?).addmm(py, mat1, mat2, beta, alpha)
}

/// `ferrograd.nn.functional.linear(input, weight, bias=None)`.
#[pyfunction]
#[pyo3(signature = (input, weight, bias=None))]
fn linear(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    weight: PyRef<'_, PyTensor>,
    bias: Option<PyRef<'_, PyTensor>>,
) -> PyResult<PyTensor> {
    let (x, w, b) = (
        &input.tensor(),
        &weight.tensor(),
        bias.as_ref().map(|b| b.tensor()),
    );
    let b = b.as_ref();
    Ok(
        maybe_detach(py, x.numel().max(w.numel()), || matmul::linear(x, w, b))
            .py()?
            .into(),
    )
}

/// `nll_loss` on a `(N, C)` input and `(N,)` targets; the functional
/// layer reshapes other shapes to these.
#[pyfunction]
fn _nll_loss(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    target: PyRef<'_, PyTensor>,
    weight: Option<PyRef<'_, PyTensor>>,
    reduction: &str,
    ignore_index: i64,
) -> PyResult<PyTensor> {
    let reduction = loss::Reduction::parse(reduction).py()?;
    let (x, t, w) = (
        &input.tensor(),
        &target.tensor(),
        weight.as_ref().map(|w| w.tensor()),
    );
    let w = w.as_ref();
    Ok(maybe_detach(py, x.numel(), || {
        loss::nll_loss(x, t, w, reduction, ignore_index)
    })
    .py()?
    .into())
}

/// `binary_cross_entropy(input, target, weight, reduction)`, argument for
/// argument as `F.binary_cross_entropy`.
#[pyfunction]
fn _binary_cross_entropy(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    target: PyRef<'_, PyTensor>,
    weight: Option<PyRef<'_, PyTensor>>,
    reduction: &str,
) -> PyResult<PyTensor> {
    let reduction = loss::Reduction::parse(reduction).py()?;
    let (x, t, w) = (&input.tensor(), &target.tensor(), tensor_of(&weight));
    let w = w.as_ref();
    Ok(maybe_detach(py, x.numel(), || {
        loss::binary_cross_entropy(x, t, w, reduction)
    })
    .py()?
    .into())
}

/// `median()` of every element, or `nanmedian()` with `ignore_nan`.
#[pyfunction]
fn _median_all(py: Python<'_>, input: PyRef<'_, PyTensor>, ignore_nan: bool) -> PyResult<PyTensor> {
    let x = &input.tensor();
    Ok(
        maybe_detach(py, x.numel(), || reduce::median_all(x, ignore_nan))
            .py()?
            .into(),
    )
}

/// The tensor of an optional tensor argument.
fn tensor_of(arg: &Option<PyRef<'_, PyTensor>>) -> Option<Tensor> {
    arg.as_ref().map(|a| a.tensor())
}

/// `layer_norm(input, normalized_shape, weight, bias, eps)`, argument for
/// argument as `F.layer_norm`.
#[pyfunction]
fn _layer_norm(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    normalized_shape: Vec<usize>,
    weight: Option<PyRef<'_, PyTensor>>,
    bias: Option<PyRef<'_, PyTensor>>,
    eps: f64,
) -> PyResult<PyTensor> {
    let (x, w, b) = (&input.tensor(), tensor_of(&weight), tensor_of(&bias));
    let (w, b) = (w.as_ref(), b.as_ref());
    Ok(maybe_detach(py, x.numel(), || {
        norm::layer_norm(x, &normalized_shape, w, b, eps)
    })
    .py()?
    .into())
}

/// `group_norm(input, num_groups, weight, bias, eps)`, argument for
/// argument as `F.group_norm`.
#[pyfunction]
fn _group_norm(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    num_groups: usize,
    weight: Option<PyRef<'_, PyTensor>>,
    bias: Option<PyRef<'_, PyTensor>>,
    eps: f64,
) -> PyResult<PyTensor> {
    let (x, w, b) = (&input.tensor(), tensor_of(&weight), tensor_of(&bias));
    let (w, b) = (w.as_ref(), b.as_ref());
    Ok(
        maybe_detach(py, x.numel(), || norm::group_norm(x, num_groups, w, b, eps))
            .py()?
            .into(),
    )
}

/// `interpolate` once `F.interpolate` has settled the output sizes and
/// the scale factors that set the source step.
#[pyfunction]
fn _interpolate(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    sizes: Vec<usize>,
    scales: Vec<Option<f64>>,
    mode: &str,
    align_corners: bool,
) -> PyResult<PyTensor> {
    let x = &input.tensor();
    Ok(maybe_detach(py, x.numel(), || {
        ferrograd_core::ops::resize::interpolate(x, &sizes, &scales, mode, align_corners)
    })
    .py()?
    .into())
}

/// `pad(input, pad, mode, value)`, argument for argument as `F.pad`.
#[pyfunction]
#[pyo3(signature = (input, pad, mode="constant", value=None))]
fn _pad(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    pad: Vec<i64>,
    mode: &str,
    value: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let value = value.filter(|v| !v.is_none()).map(scalar).transpose()?;
    let x = &input.tensor();
    Ok(maybe_detach(py, x.numel(), || {
        ferrograd_core::ops::pad::pad(x, &pad, mode, value)
    })
    .py()?
    .into())
}

/// `batch_norm(input, running_mean, running_var, weight, bias, training,
/// momentum, eps)`, argument for argument as `F.batch_norm`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _batch_norm(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    running_mean: Option<PyRef<'_, PyTensor>>,
    running_var: Option<PyRef<'_, PyTensor>>,
    weight: Option<PyRef<'_, PyTensor>>,
    bias: Option<PyRef<'_, PyTensor>>,
    training: bool,
    momentum: f64,
    eps: f64,
) -> PyResult<PyTensor> {
    let [rm, rv, w, b] =
        [&running_mean, &running_var, &weight, &bias].map(|p| p.as_ref().map(|p| p.tensor()));
    let [rm, rv, w, b] = [rm.as_ref(), rv.as_ref(), w.as_ref(), b.as_ref()];
    let mode = norm::BatchNormMode {
        training,
        momentum,
        eps,
    };
    let x = &input.tensor();
    Ok(
        maybe_detach(py, x.numel(), || norm::batch_norm(x, w, b, rm, rv, mode))
            .py()?
            .into(),
    )
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(addmm, m)?)?;
    m.add_function(wrap_pyfunction!(linear, m)?)?;
    m.add_function(wrap_pyfunction!(_nll_loss, m)?)?;
    m.add_function(wrap_pyfunction!(_binary_cross_entropy, m)?)?;
    m.add_function(wrap_pyfunction!(_median_all, m)?)?;
    m.add_function(wrap_pyfunction!(_batch_norm, m)?)?;
    m.add_function(wrap_pyfunction!(_layer_norm, m)?)?;
    m.add_function(wrap_pyfunction!(_pad, m)?)?;
    m.add_function(wrap_pyfunction!(_interpolate, m)?)?;
    m.add_function(wrap_pyfunction!(_group_norm, m)?)?;
    Ok(())
}
