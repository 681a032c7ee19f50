//! In-place tensor methods. Each returns the very object it was called on.

use crate::convert::{clamp_bound, dim_arg, operand, scalar, sizes_or_keyword, ClampBounds};
use crate::errors::IntoPyResult;
use crate::factories::drawing_from;
use crate::memory_format::PyMemoryFormat;
use crate::ops::rounded_division;
use crate::tensor::{maybe_detach, PyTensor};
use ferrograd_core::ops::{binary, inplace, random, shape, unary};
use ferrograd_core::tensor::layout::contiguous_strides;
use ferrograd_core::{Result, Scalar, Tensor};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

type Slf<'py> = Bound<'py, PyTensor>;

/// Runs `f` on the tensor (GIL released when large) and returns `slf`.
fn run<'py>(slf: &Slf<'py>, f: impl FnOnce(&Tensor) -> Result<()> + Send) -> PyResult<Slf<'py>> {
    let t = &slf.get().tensor();
    maybe_detach(slf.py(), t.numel(), || f(t)).py()?;
    Ok(slf.clone())
}

/// Runs an op that changes the tensor's shape in place (see
/// `shape::restride_`): `slf` stands for the result from now on.
fn restride<'py>(slf: &Slf<'py>, op: impl FnOnce(&Tensor) -> Result<Tensor>) -> PyResult<Slf<'py>> {
    slf.get().replace_with(slf.py(), op)?;
    Ok(slf.clone())
}

fn unary<'py>(slf: &Slf<'py>, op: fn(&Tensor) -> Result<Tensor>) -> PyResult<Slf<'py>> {
    run(slf, |t| inplace::unary_(t, op))
}

fn alpha_arg(alpha: Option<&Bound<'_, PyAny>>) -> PyResult<Scalar> {
    Ok(alpha.map(scalar).transpose()?.unwrap_or(Scalar::Int(1)))
}

macro_rules! unary_inplace {
    ($($name:ident => $op:path;)*) => {
        #[pymethods]
        impl PyTensor {$(
            fn $name<'py>(slf: &Slf<'py>) -> PyResult<Slf<'py>> {
                unary(slf, $op)
            }
        )*}
    };
}

unary_inplace! {
    neg_ => unary::neg;
    negative_ => unary::neg;
    abs_ => unary::abs;
    exp_ => unary::exp;
    log_ => unary::log;
    sqrt_ => unary::sqrt;
    sin_ => unary::sin;
    cos_ => unary::cos;
    tanh_ => unary::tanh;
    sigmoid_ => unary::sigmoid;
    relu_ => unary::relu;
    sgn_ => unary::sgn;
    round_ => unary::round;
}

#[pymethods]
impl PyTensor {
    #[pyo3(signature = (other, *, alpha=None))]
    fn add_<'py>(
        slf: &Slf<'py>,
        other: &Bound<'_, PyAny>,
        alpha: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Slf<'py>> {
        let (b, a) = (operand(other)?, alpha_arg(alpha)?);
        run(slf, |t| inplace::add_(t, &b, a))
    }
    #[pyo3(signature = (other, *, alpha=None))]
    fn sub_<'py>(
        slf: &Slf<'py>,
        other: &Bound<'_, PyAny>,
        alpha: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Slf<'py>> {
        let (b, a) = (operand(other)?, alpha_arg(alpha)?);
        run(slf, |t| inplace::sub_(t, &b, a))
    }
    fn mul_<'py>(slf: &Slf<'py>, other: &Bound<'_, PyAny>) -> PyResult<Slf<'py>> {
        let b = operand(other)?;
        run(slf, |t| inplace::mul_(t, &b))
    }
    #[pyo3(signature = (other, *, rounding_mode=None))]
    fn div_<'py>(
        slf: &Slf<'py>,
        other: &Bound<'_, PyAny>,
        rounding_mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Slf<'py>> {
        if let Some(mode) = rounding_mode.filter(|m| !m.is_none()) {
            rounded_division("_divide_inplace", slf, other, mode)?;
            return Ok(slf.clone());
        }
        let b = operand(other)?;
        run(slf, |t| inplace::div_(t, &b))
    }
    fn pow_<'py>(slf: &Slf<'py>, exponent: &Bound<'_, PyAny>) -> PyResult<Slf<'py>> {
        if exponent.downcast::<PyTensor>().is_err() {
            let e = scalar(exponent)?;
            return run(slf, |t| inplace::unary_(t, |s| binary::pow_scalar(s, e)));
        }
        let b = operand(exponent)?;
        run(slf, |t| inplace::binary_(t, &b, binary::pow))
    }
    fn __iadd__(slf: &Slf<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::add_(slf, other, None).map(drop)
    }
    fn __isub__(slf: &Slf<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::sub_(slf, other, None).map(drop)
    }
    fn __imul__(slf: &Slf<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::mul_(slf, other).map(drop)
    }
    fn __itruediv__(slf: &Slf<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::div_(slf, other, None).map(drop)
    }
    #[pyo3(signature = (min=None, max=None))]
    fn clamp_<'py>(
        slf: &Slf<'py>,
        min: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Slf<'py>> {
        let bounds = ClampBounds::extract(min, max)?;
        run(slf, |t| {
            inplace::nary_(t, &bounds.tensors(), |s| bounds.clamp(s))
        })
    }
    fn clamp_min_<'py>(slf: &Slf<'py>, min: &Bound<'_, PyAny>) -> PyResult<Slf<'py>> {
        let bound = clamp_bound(min)?;
        run(slf, |t| {
            inplace::nary_(t, bound.as_tensor().as_slice(), |s| {
                unary::clamp_min(s, &bound)
            })
        })
    }
    fn clamp_max_<'py>(slf: &Slf<'py>, max: &Bound<'_, PyAny>) -> PyResult<Slf<'py>> {
        let bound = clamp_bound(max)?;
        run(slf, |t| {
            inplace::nary_(t, bound.as_tensor().as_slice(), |s| {
                unary::clamp_max(s, &bound)
            })
        })
    }
    #[pyo3(signature = (min=None, max=None))]
    fn clip_<'py>(
        slf: &Slf<'py>,
        min: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Slf<'py>> {
        Self::clamp_(slf, min, max)
    }
    fn masked_fill_<'py>(
        slf: &Slf<'py>,
        mask: PyRef<'_, PyTensor>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Slf<'py>> {
        let m = mask.tensor();
        if let Ok(v) = value.downcast::<PyTensor>() {
            let v = v.get().tensor();
            return run(slf, |t| inplace::masked_fill_tensor_(t, &m, &v));
        }
        let v = scalar(value)?;
        run(slf, |t| inplace::masked_fill_(t, &m, v))
    }
    fn fill_<'py>(slf: &Slf<'py>, value: &Bound<'_, PyAny>) -> PyResult<Slf<'py>> {
        if let Ok(v) = value.downcast::<PyTensor>() {
            let v = v.get().tensor();
            return run(slf, |t| inplace::fill_tensor_(t, &v));
        }
        let v = scalar(value)?;
        run(slf, |t| inplace::fill_(t, v))
    }
    fn zero_<'py>(slf: &Slf<'py>) -> PyResult<Slf<'py>> {
        run(slf, inplace::zero_)
    }
    #[pyo3(signature = (src, non_blocking=false))]
    fn copy_<'py>(
        slf: &Slf<'py>,
        src: &Bound<'_, PyAny>,
        non_blocking: bool,
    ) -> PyResult<Slf<'py>> {
        let _ = non_blocking;
        let s = crate::convert::tensor_arg(src, "copy_(): argument 'src'")?;
        run(slf, |t| inplace::copy_(t, &s))
    }
    fn detach_<'py>(slf: &Slf<'py>) -> PyResult<Slf<'py>> {
        run(slf, inplace::detach_)
    }

    fn t_<'py>(slf: &Slf<'py>) -> PyResult<Slf<'py>> {
        restride(slf, shape::t_)
    }
    fn transpose_<'py>(slf: &Slf<'py>, dim0: i64, dim1: i64) -> PyResult<Slf<'py>> {
        restride(slf, |t| shape::transpose_(t, dim0, dim1))
    }
    fn swapaxes_<'py>(slf: &Slf<'py>, axis0: i64, axis1: i64) -> PyResult<Slf<'py>> {
        Self::transpose_(slf, axis0, axis1)
    }
    fn swapdims_<'py>(slf: &Slf<'py>, dim0: i64, dim1: i64) -> PyResult<Slf<'py>> {
        Self::transpose_(slf, dim0, dim1)
    }
    fn unsqueeze_<'py>(slf: &Slf<'py>, dim: i64) -> PyResult<Slf<'py>> {
        restride(slf, |t| shape::unsqueeze_(t, dim))
    }
    #[pyo3(signature = (dim=None))]
    fn squeeze_<'py>(slf: &Slf<'py>, dim: Option<&Bound<'py, PyAny>>) -> PyResult<Slf<'py>> {
        let args = dim_arg("squeeze_", dim, None)?;
        args.with_squeeze_dims(|d| restride(slf, |t| shape::squeeze_(t, d)))?
    }
    #[pyo3(signature = (size, stride, storage_offset=None))]
    fn as_strided_<'py>(
        slf: &Slf<'py>,
        size: Vec<i64>,
        stride: Vec<i64>,
        storage_offset: Option<i64>,
    ) -> PyResult<Slf<'py>> {
        restride(slf, |t| {
            shape::as_strided_(t, &size, &stride, storage_offset)
        })
    }
    /// `set_()`, `set_(source)` and `set_(source, storage_offset, size,
    /// stride)` with a tensor or a storage as source: see `shape::set_`.
    #[pyo3(signature = (source=None, storage_offset=0, size=None, stride=None))]
    fn set_<'py>(
        slf: &Slf<'py>,
        source: Option<&Bound<'py, PyAny>>,
        storage_offset: i64,
        size: Option<Vec<i64>>,
        stride: Option<Vec<i64>>,
    ) -> PyResult<Slf<'py>> {
        let dtype = slf.get().tensor().dtype();
        let source = match source {
            // `set_()`: no elements, over a storage of its own.
            None => Tensor::zeros(&[0], dtype),
            Some(s) => match s.downcast::<PyTensor>() {
                Ok(t) => t.get().tensor(),
                // A storage gives the tensor over all of its elements.
                Err(_) => match s.getattr("_elements_as") {
                    Ok(elements) => elements
                        .call1((crate::dtype::PyDType(dtype),))?
                        .downcast::<PyTensor>()?
                        .get()
                        .tensor(),
                    Err(_) => {
                        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                            "set_(): argument 'source' must be Tensor or Storage, not {}",
                            s.get_type().name()?
                        )))
                    }
                },
            },
        };
        let window = match (size, stride) {
            (None, None) if storage_offset == 0 => None,
            (size, stride) => {
                let size = size.unwrap_or_else(|| vec![source.numel() as i64]);
                let stride = stride.unwrap_or_else(|| {
                    let dims: Vec<usize> = size.iter().map(|&d| d.max(0) as usize).collect();
                    contiguous_strides(&dims)
                        .iter()
                        .map(|&s| s as i64)
                        .collect()
                });
                Some((size, stride))
            }
        };
        slf.get().replace_with(slf.py(), |t| {
            let window = window
                .as_ref()
                .map(|(size, stride)| (&size[..], &stride[..], storage_offset));
            shape::set_(t, &source, window)
        })?;
        Ok(slf.clone())
    }
    /// `resize_(*sizes)`: see `shape::resize_`.
    #[pyo3(signature = (*sizes, memory_format=None))]
    fn resize_<'py>(
        slf: &Slf<'py>,
        sizes: &Bound<'py, PyTuple>,
        memory_format: Option<PyMemoryFormat>,
    ) -> PyResult<Slf<'py>> {
        let sizes = sizes_or_keyword(sizes, None, "size")?;
        let format = memory_format.map(|f| f.0);
        slf.get()
            .replace_with(slf.py(), |t| shape::resize_(t, &sizes, format))?;
        Ok(slf.clone())
    }
    #[pyo3(signature = (other, memory_format=None))]
    fn resize_as_<'py>(
        slf: &Slf<'py>,
        other: PyRef<'py, PyTensor>,
        memory_format: Option<PyMemoryFormat>,
    ) -> PyResult<Slf<'py>> {
        let sizes = PyTuple::new(slf.py(), other.tensor().shape())?;
        Self::resize_(slf, &sizes, memory_format)
    }

    #[pyo3(name = "uniform_", signature = (from_=0.0, to=1.0, *, generator=None))]
    fn uniform_inplace<'py>(
        slf: &Slf<'py>,
        from_: f64,
        to: f64,
        generator: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Slf<'py>> {
        drawing_from(generator, || {
            run(slf, |t| {
                inplace::overwrite_(t, "UniformBackward0", |s| random::uniform_(s, from_, to))
            })
        })
    }
    #[pyo3(name = "normal_", signature = (mean=0.0, std=1.0, *, generator=None))]
    fn normal_inplace<'py>(
        slf: &Slf<'py>,
        mean: f64,
        std: f64,
        generator: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Slf<'py>> {
        drawing_from(generator, || {
            run(slf, |t| {
                inplace::overwrite_(t, "NormalBackward0", |s| random::normal_(s, mean, std))
            })
        })
    }
    #[pyo3(name = "bernoulli_", signature = (p=None, *, generator=None))]
    fn bernoulli_inplace<'py>(
        slf: &Slf<'py>,
        p: Option<&Bound<'_, PyAny>>,
        generator: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Slf<'py>> {
        drawing_from(generator, || match p {
            Some(p) if p.downcast::<PyTensor>().is_ok() => {
                let pt = p.downcast::<PyTensor>()?.get().tensor();
                run(slf, |t| {
                    inplace::overwrite_(t, "BernoulliBackward1", |s| {
                        random::bernoulli_tensor_(s, &pt)
                    })
                })
            }
            p => {
                let p = p.map(|p| p.extract::<f64>()).transpose()?.unwrap_or(0.5);
                run(slf, |t| {
                    inplace::overwrite_(t, "BernoulliBackward0", |s| {
                        random::bernoulli_scalar_(s, p)
                    })
                })
            }
        })
    }
    /// `random_(to)` or `random_(from, to)`.
    #[pyo3(name = "random_", signature = (from_, to=None, *, generator=None))]
    fn random_inplace<'py>(
        slf: &Slf<'py>,
        from_: i64,
        to: Option<i64>,
        generator: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Slf<'py>> {
        drawing_from(generator, || {
            let (lo, hi) = match to {
                Some(h) => (from_, h),
                None => (0, from_),
            };
            run(slf, |t| {
                inplace::overwrite_(t, "RandomBackward1", |s| random::random_(s, lo, hi))
            })
        })
    }
}
