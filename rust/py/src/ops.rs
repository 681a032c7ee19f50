//! Tensor methods and operators that call core ops. Each line converts the
//! arguments, calls one core op and maps its error.

use crate::convert::{
    clamp_bound, dim_arg, dim_args, operand, scalar, sizes_or_keyword, try_operand, ClampBounds,
};
use crate::dtype::PyDType;
use crate::errors::IntoPyResult;
use crate::tensor::{maybe_detach, PyTensor, TRANSCENDENTAL_COST};
use ferrograd_core::ops::{binary, reduce, shape, unary};
use ferrograd_core::{Result, Scalar, Tensor};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

type Binary = fn(&Tensor, &Tensor) -> Result<Tensor>;

/// Runs a binary op, or returns `NotImplemented` for operands that are not
/// tensors or numbers (so Python can try the reflected operator).
fn dunder(
    py: Python<'_>,
    a: &Tensor,
    other: &Bound<'_, PyAny>,
    op: Binary,
    reflected: bool,
) -> PyResult<Py<PyAny>> {
    let Some(b) = try_operand(other, a.dtype()) else {
        return Ok(py.NotImplemented());
    };
    let n = a.numel().max(b.numel());
    let out = if reflected {
        maybe_detach(py, n, || op(&b, a))
    } else {
        maybe_detach(py, n, || op(a, &b))
    };
    Ok(Bound::new(py, PyTensor::from(out.py()?))?
        .into_any()
        .unbind())
}

fn call(py: Python<'_>, a: &Tensor, other: &Bound<'_, PyAny>, op: Binary) -> PyResult<PyTensor> {
    let b = operand(other)?;
    Ok(maybe_detach(py, a.numel().max(b.numel()), || op(a, &b))
        .py()?
        .into())
}

fn unary_op(py: Python<'_>, a: &Tensor, op: fn(&Tensor) -> Result<Tensor>) -> PyResult<PyTensor> {
    Ok(maybe_detach(py, a.numel(), || op(a)).py()?.into())
}

/// A unary op whose elements cost a polynomial or a libm call each.
fn transcendental_op(
    py: Python<'_>,
    a: &Tensor,
    op: fn(&Tensor) -> Result<Tensor>,
) -> PyResult<PyTensor> {
    let work = a.numel().saturating_mul(TRANSCENDENTAL_COST);
    Ok(maybe_detach(py, work, || op(a)).py()?.into())
}

/// `clamp_min`/`clamp_max` with a number or tensor bound.
fn clamp_one_side(
    py: Python<'_>,
    a: &Tensor,
    bound: &Bound<'_, PyAny>,
    op: fn(&Tensor, &unary::Bound) -> Result<Tensor>,
) -> PyResult<PyTensor> {
    let bound = clamp_bound(bound)?;
    Ok(maybe_detach(py, a.numel(), || op(a, &bound)).py()?.into())
}

fn to_i64s(v: &[usize]) -> Vec<i64> {
    v.iter().map(|&d| d as i64).collect()
}

/// `div` and `div_` with a `rounding_mode`: rare forms, composed in
/// Python (`ferrograd._functions`) of floor division and `trunc`, so that
/// the plain quotient stays one call into the core.
pub(crate) fn rounded_division<'py>(
    function: &str,
    tensor: &Bound<'py, PyTensor>,
    other: &Bound<'_, PyAny>,
    mode: &Bound<'_, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = tensor.py();
    let kwargs = PyDict::new(py);
    kwargs.set_item("rounding_mode", mode)?;
    py.import("ferrograd._functions")?
        .getattr(function)?
        .call((tensor, other.as_unbound().bind(py)), Some(&kwargs))
}

#[pymethods]
impl PyTensor {
    fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::add, false)
    }
    /// `c + x` is `x + c`, as in PyTorch: the node's first edge is `x`'s.
    fn __radd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::add, false)
    }
    fn __sub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::sub, false)
    }
    fn __rsub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::sub, true)
    }
    fn __mul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::mul, false)
    }
    /// `c * x` is `x * c`, as in PyTorch.
    fn __rmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::mul, false)
    }
    fn __truediv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::div, false)
    }
    fn __rtruediv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        // As in PyTorch, `c / x` is `x.reciprocal() * c`: backward needs the
        // reciprocal, not `x`, so `x` may be written in place afterwards.
        dunder(
            py,
            &self.tensor(),
            other,
            |c, x| match x.dtype().is_complex() {
                // No complex reciprocal kernel: the quotient itself.
                true => binary::div(c, x),
                false => binary::mul(&unary::reciprocal(x)?, c),
            },
            true,
        )
    }
    fn __pow__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        _modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if other.downcast::<PyTensor>().is_err() {
            let Ok(e) = scalar(other) else {
                return Ok(py.NotImplemented());
            };
            let out = maybe_detach(py, self.tensor().numel(), || {
                binary::pow_scalar(&self.tensor(), e)
            })
            .py()?;
            return Ok(Bound::new(py, PyTensor::from(out))?.into_any().unbind());
        }
        dunder(py, &self.tensor(), other, binary::pow, false)
    }
    fn __rpow__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        _modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::pow, true)
    }
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::eq, false)
    }
    fn __ne__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::ne, false)
    }
    fn __lt__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::lt, false)
    }
    fn __le__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::le, false)
    }
    fn __gt__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::gt, false)
    }
    fn __ge__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::ge, false)
    }
    fn __and__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::bitwise_and, false)
    }
    fn __or__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::bitwise_or, false)
    }
    fn __xor__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::bitwise_xor, false)
    }
    fn __rand__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::bitwise_and, true)
    }
    fn __ror__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::bitwise_or, true)
    }
    fn __rxor__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::bitwise_xor, true)
    }
    fn __lshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::bitwise_left_shift, false)
    }
    fn __rlshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::bitwise_left_shift, true)
    }
    fn __rshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(
            py,
            &self.tensor(),
            other,
            binary::bitwise_right_shift,
            false,
        )
    }
    fn __rrshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::bitwise_right_shift, true)
    }
    fn __invert__(&self, py: Python<'_>) -> PyResult<PyTensor> {
        unary_op(py, &self.tensor(), binary::bitwise_not)
    }
    fn __neg__(&self, py: Python<'_>) -> PyResult<PyTensor> {
        unary_op(py, &self.tensor(), unary::neg)
    }
    fn __pos__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }
    fn __abs__(&self, py: Python<'_>) -> PyResult<PyTensor> {
        unary_op(py, &self.tensor(), unary::abs)
    }

    #[pyo3(signature = (other, *, alpha=None))]
    fn add(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        alpha: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let b = operand(other)?;
        let alpha = alpha.map(scalar).transpose()?.unwrap_or(Scalar::Int(1));
        Ok(maybe_detach(py, self.tensor().numel(), || {
            binary::add_scaled(&self.tensor(), &b, alpha)
        })
        .py()?
        .into())
    }
    #[pyo3(signature = (other, *, alpha=None))]
    fn sub(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        alpha: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let b = operand(other)?;
        let alpha = alpha.map(scalar).transpose()?.unwrap_or(Scalar::Int(1));
        Ok(maybe_detach(py, self.tensor().numel(), || {
            binary::sub_scaled(&self.tensor(), &b, alpha)
        })
        .py()?
        .into())
    }
    fn mul(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        call(py, &self.tensor(), other, binary::mul)
    }
    fn multiply(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        call(py, &self.tensor(), other, binary::mul)
    }
    #[pyo3(signature = (other, *, rounding_mode=None))]
    fn div(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        rounding_mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        match rounding_mode.filter(|m| !m.is_none()) {
            None => Ok(
                Bound::new(py, call(py, &slf.get().tensor(), other, binary::div)?)?
                    .into_any()
                    .unbind(),
            ),
            Some(mode) => Ok(rounded_division("divide", slf, other, mode)?.unbind()),
        }
    }
    fn true_divide(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        call(py, &self.tensor(), other, binary::div)
    }
    fn pow(&self, py: Python<'_>, exponent: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        if exponent.downcast::<PyTensor>().is_err() {
            let e = scalar(exponent)?;
            return Ok(maybe_detach(py, self.tensor().numel(), || {
                binary::pow_scalar(&self.tensor(), e)
            })
            .py()?
            .into());
        }
        call(py, &self.tensor(), exponent, binary::pow)
    }
    fn maximum(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        call(py, &self.tensor(), other, binary::maximum)
    }
    fn minimum(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        call(py, &self.tensor(), other, binary::minimum)
    }
    fn eq(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        call(py, &self.tensor(), other, binary::eq)
    }
    fn ne(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        call(py, &self.tensor(), other, binary::ne)
    }
    fn lt(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        call(py, &self.tensor(), other, binary::lt)
    }
    fn le(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        call(py, &self.tensor(), other, binary::le)
    }
    fn gt(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        call(py, &self.tensor(), other, binary::gt)
    }
    fn ge(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        call(py, &self.tensor(), other, binary::ge)
    }
    fn logical_and(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        call(py, &self.tensor(), other, unary::logical_and)
    }
    fn logical_or(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        call(py, &self.tensor(), other, unary::logical_or)
    }
    fn logical_xor(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        call(py, &self.tensor(), other, unary::logical_xor)
    }
    fn logical_not(&self, py: Python<'_>) -> PyResult<PyTensor> {
        unary_op(py, &self.tensor(), unary::logical_not)
    }
    /// `x.where(cond, other)`: `x` where `cond`, else `other`.
    fn r#where(
        &self,
        condition: PyRef<'_, PyTensor>,
        other: &Bound<'_, PyAny>,
    ) -> PyResult<PyTensor> {
        Ok(
            unary::where_(&condition.tensor(), &self.tensor(), &operand(other)?)
                .py()?
                .into(),
        )
    }

    fn neg(&self, py: Python<'_>) -> PyResult<PyTensor> {
        unary_op(py, &self.tensor(), unary::neg)
    }
    fn negative(&self, py: Python<'_>) -> PyResult<PyTensor> {
        unary_op(py, &self.tensor(), unary::neg)
    }
    fn abs(&self, py: Python<'_>) -> PyResult<PyTensor> {
        unary_op(py, &self.tensor(), unary::abs)
    }
    fn exp(&self, py: Python<'_>) -> PyResult<PyTensor> {
        transcendental_op(py, &self.tensor(), unary::exp)
    }
    fn log(&self, py: Python<'_>) -> PyResult<PyTensor> {
        transcendental_op(py, &self.tensor(), unary::log)
    }
    fn sqrt(&self, py: Python<'_>) -> PyResult<PyTensor> {
        unary_op(py, &self.tensor(), unary::sqrt)
    }
    fn sin(&self, py: Python<'_>) -> PyResult<PyTensor> {
        transcendental_op(py, &self.tensor(), unary::sin)
    }
    fn cos(&self, py: Python<'_>) -> PyResult<PyTensor> {
        transcendental_op(py, &self.tensor(), unary::cos)
    }
    fn tanh(&self, py: Python<'_>) -> PyResult<PyTensor> {
        transcendental_op(py, &self.tensor(), unary::tanh)
    }
    fn sigmoid(&self, py: Python<'_>) -> PyResult<PyTensor> {
        transcendental_op(py, &self.tensor(), unary::sigmoid)
    }
    fn relu(&self, py: Python<'_>) -> PyResult<PyTensor> {
        unary_op(py, &self.tensor(), unary::relu)
    }
    fn sgn(&self, py: Python<'_>) -> PyResult<PyTensor> {
        unary_op(py, &self.tensor(), unary::sgn)
    }
    fn conj(&self, py: Python<'_>) -> PyResult<PyTensor> {
        unary_op(py, &self.tensor(), unary::conj)
    }
    /// `round()`, or with `decimals` the rarer form composed in Python
    /// (`ferrograd._functions._round_decimals`).
    #[pyo3(signature = (*, decimals=0))]
    fn round<'py>(slf: &Bound<'py, Self>, decimals: i64) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        if decimals != 0 {
            return py
                .import("ferrograd._functions")?
                .getattr("_round_decimals")?
                .call1((slf, decimals));
        }
        let out = unary_op(py, &slf.get().tensor(), unary::round)?;
        Ok(Bound::new(py, out)?.into_any())
    }
    #[pyo3(signature = (min=None, max=None))]
    fn clamp(
        &self,
        py: Python<'_>,
        min: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let bounds = ClampBounds::extract(min, max)?;
        Ok(
            maybe_detach(py, self.tensor().numel(), || bounds.clamp(&self.tensor()))
                .py()?
                .into(),
        )
    }
    fn clamp_min(&self, py: Python<'_>, min: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        clamp_one_side(py, &self.tensor(), min, unary::clamp_min)
    }
    fn clamp_max(&self, py: Python<'_>, max: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        clamp_one_side(py, &self.tensor(), max, unary::clamp_max)
    }
    #[pyo3(signature = (min=None, max=None))]
    fn clip(
        &self,
        py: Python<'_>,
        min: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        self.clamp(py, min, max)
    }
    fn isnan(&self) -> PyResult<PyTensor> {
        unary::float_predicate(&self.tensor(), f64::is_nan)
            .py()
            .map(Into::into)
    }
    fn isfinite(&self) -> PyResult<PyTensor> {
        unary::float_predicate(&self.tensor(), f64::is_finite)
            .py()
            .map(Into::into)
    }
    fn isinf(&self) -> PyResult<PyTensor> {
        unary::float_predicate(&self.tensor(), f64::is_infinite)
            .py()
            .map(Into::into)
    }

    #[pyo3(signature = (dim=None, keepdim=None, *, dtype=None, **numpy))]
    fn sum(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: Option<bool>,
        dtype: Option<&Bound<'_, PyAny>>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let args = dim_args("sum", dim, keepdim, numpy)?;
        let (d, keepdim) = (args.dims()?.unwrap_or_default(), args.keepdim);
        let (t, dtype) = (self.tensor(), crate::convert::optional_dtype(dtype)?);
        Ok(
            maybe_detach(py, t.numel(), || reduce::sum_as(&t, &d, keepdim, dtype))
                .py()?
                .into(),
        )
    }
    #[pyo3(signature = (dim=None, keepdim=None, *, dtype=None, **numpy))]
    fn mean(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: Option<bool>,
        dtype: Option<&Bound<'_, PyAny>>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let args = dim_args("mean", dim, keepdim, numpy)?;
        let (d, keepdim) = (args.dims()?.unwrap_or_default(), args.keepdim);
        let t = match crate::convert::optional_dtype(dtype)? {
            Some(dt) => ferrograd_core::ops::copy::to_dtype(&self.tensor(), dt).py()?,
            None => self.tensor(),
        };
        Ok(
            maybe_detach(py, t.numel(), || reduce::mean(&t, &d, keepdim))
                .py()?
                .into(),
        )
    }
    #[pyo3(signature = (dim=None, keepdim=None, *, dtype=None, **numpy))]
    fn prod(
        &self,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: Option<bool>,
        dtype: Option<&Bound<'_, PyAny>>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let args = dim_args("prod", dim, keepdim, numpy)?;
        let dtype = crate::convert::optional_dtype(dtype)?;
        Ok(
            ferrograd_core::ops::reduce::prod(&self.tensor(), args.single()?, args.keepdim, dtype)
                .py()?
                .into(),
        )
    }

    /// `view(*size)`, or `view(dtype)`: the memory read as another dtype.
    #[pyo3(signature = (*shape, **kwargs))]
    fn view(
        &self,
        shape: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let dtype = match (shape.len(), kwargs.filter(|k| !k.is_empty())) {
            (1, None) => shape.get_item(0)?.extract::<PyDType>().ok(),
            (0, Some(kw)) if kw.len() == 1 => match kw.get_item("dtype")? {
                Some(dtype) => Some(dtype.extract::<PyDType>()?),
                None => None,
            },
            _ => None,
        };
        let out = match dtype {
            Some(PyDType(dtype)) => shape::view_dtype(&self.tensor(), dtype),
            None => shape::view(&self.tensor(), &sizes_or_keyword(shape, kwargs, "size")?),
        };
        Ok(out.py()?.into())
    }
    fn view_as(&self, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        Ok(
            shape::view(&self.tensor(), &to_i64s(other.tensor().shape()))
                .py()?
                .into(),
        )
    }
    #[pyo3(signature = (*shape, **kwargs))]
    fn reshape(
        &self,
        shape: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        Ok(
            shape::reshape(&self.tensor(), &sizes_or_keyword(shape, kwargs, "shape")?)
                .py()?
                .into(),
        )
    }
    fn reshape_as(&self, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        Ok(
            shape::reshape(&self.tensor(), &to_i64s(other.tensor().shape()))
                .py()?
                .into(),
        )
    }
    #[pyo3(signature = (*sizes_, **kwargs))]
    fn expand(
        &self,
        sizes_: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        Ok(
            shape::expand(&self.tensor(), &sizes_or_keyword(sizes_, kwargs, "size")?)
                .py()?
                .into(),
        )
    }
    fn expand_as(&self, other: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        Ok(shape::expand_to(&self.tensor(), other.tensor().shape())
            .py()?
            .into())
    }
    #[pyo3(signature = (*dims_, **kwargs))]
    fn permute(
        &self,
        dims_: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        Ok(
            shape::permute(&self.tensor(), &sizes_or_keyword(dims_, kwargs, "dims")?)
                .py()?
                .into(),
        )
    }
    fn transpose(&self, dim0: i64, dim1: i64) -> PyResult<PyTensor> {
        Ok(shape::transpose(&self.tensor(), dim0, dim1).py()?.into())
    }
    fn swapaxes(&self, dim0: i64, dim1: i64) -> PyResult<PyTensor> {
        self.transpose(dim0, dim1)
    }
    fn t(&self) -> PyResult<PyTensor> {
        Ok(shape::t(&self.tensor()).py()?.into())
    }
    #[getter(T)]
    fn big_t(&self) -> PyResult<PyTensor> {
        let n = self.tensor().ndim() as i64;
        let rev: Vec<i64> = (0..n).rev().collect();
        Ok(shape::permute(&self.tensor(), &rev).py()?.into())
    }
    #[getter(mT)]
    fn matrix_t(&self) -> PyResult<PyTensor> {
        Ok(shape::transpose(&self.tensor(), -2, -1).py()?.into())
    }
    #[pyo3(signature = (dim=None, **numpy))]
    fn unsqueeze(
        &self,
        dim: Option<&Bound<'_, PyAny>>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let dim = dim_arg("unsqueeze", dim, numpy)?.required("unsqueeze")?;
        Ok(shape::unsqueeze(&self.tensor(), dim).py()?.into())
    }
    #[pyo3(signature = (dim=None, **numpy))]
    fn squeeze(
        &self,
        dim: Option<&Bound<'_, PyAny>>,
        numpy: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let t = self.tensor();
        let out = dim_arg("squeeze", dim, numpy)?.with_squeeze_dims(|d| shape::squeeze(&t, d))?;
        Ok(out.py()?.into())
    }
    #[pyo3(signature = (start_dim=0, end_dim=-1))]
    fn flatten(&self, start_dim: i64, end_dim: i64) -> PyResult<PyTensor> {
        Ok(shape::flatten(&self.tensor(), start_dim, end_dim)
            .py()?
            .into())
    }
    fn narrow(&self, dim: i64, start: i64, length: i64) -> PyResult<PyTensor> {
        Ok(shape::narrow(&self.tensor(), dim, start, length)
            .py()?
            .into())
    }
    #[pyo3(signature = (diagonal=0))]
    fn diag(&self, diagonal: i64) -> PyResult<PyTensor> {
        Ok(shape::diag(&self.tensor(), diagonal).py()?.into())
    }
    #[pyo3(signature = (offset=0, dim1=0, dim2=1))]
    fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> PyResult<PyTensor> {
        Ok(shape::diagonal(&self.tensor(), offset, dim1, dim2)
            .py()?
            .into())
    }
    #[pyo3(signature = (size, stride, storage_offset=None))]
    fn as_strided(
        &self,
        size: Vec<i64>,
        stride: Vec<i64>,
        storage_offset: Option<i64>,
    ) -> PyResult<PyTensor> {
        Ok(
            shape::as_strided(&self.tensor(), &size, &stride, storage_offset)
                .py()?
                .into(),
        )
    }
    fn unfold(&self, dimension: i64, size: i64, step: i64) -> PyResult<PyTensor> {
        Ok(shape::unfold(&self.tensor(), dimension, size, step)
            .py()?
            .into())
    }
    fn select(&self, dim: i64, index: i64) -> PyResult<PyTensor> {
        Ok(shape::select_by_name(&self.tensor(), dim, index)
            .py()?
            .into())
    }
}

pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
