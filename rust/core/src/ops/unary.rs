//! Elementwise unary ops and `where`. Floating functions of integer
//! tensors compute in the default float dtype, as PyTorch does.

use super::binary::{div, float_dtype_error, gt, mul, sub};
use super::copy::cast;
use super::elementwise::{map, zip3_map};
use super::num::{Arith, Float, Real, RealFloat};
use crate::autograd::{record, SavedTensor};
use crate::tensor::{DType, Scalar, ScalarConvert, Tensor};
use crate::{bail, grads, with_dtype, with_float, with_real, with_real_float, Result};

/// The tensor cast to a floating dtype when it is bool or integer.
fn floating(t: &Tensor) -> Tensor {
    if t.dtype().is_differentiable() {
        t.clone()
    } else {
        cast(t, DType::Float32)
    }
}

/// `$f(x)` over a floating or complex tensor (integers promoted first).
macro_rules! float_map {
    ($t:expr, $op:literal, |$x:ident| $e:expr) => {{
        let t = floating($t);
        with_float!(t.dtype(), T => Ok::<Tensor, crate::Error>(map::<T, T>(&t, |$x: T| $e)), Err(float_dtype_error($op, t.dtype())))
    }};
}

/// `$f(x)` over a real floating tensor; complex input is an error.
macro_rules! real_float_map {
    ($t:expr, $op:literal, |$x:ident| $e:expr) => {{
        let t = floating($t);
        with_real_float!(t.dtype(), T => Ok::<Tensor, crate::Error>(map::<T, T>(&t, |$x: T| $e)), Err(float_dtype_error($op, t.dtype())))
    }};
}

pub fn zeros_like(t: &Tensor) -> Tensor {
    Tensor::zeros(t.shape(), t.dtype())
}

pub fn ones_like(t: &Tensor) -> Tensor {
    Tensor::full(t.shape(), Scalar::Int(1), t.dtype())
}

fn scalar(v: f64) -> Tensor {
    Tensor::wrapped_number(Scalar::Float(v))
}

pub fn neg(a: &Tensor) -> Result<Tensor> {
    if a.dtype() == DType::Bool {
        bail!(
            Runtime,
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        );
    }
    let out = with_dtype!(a.dtype(), T => map::<T, T>(a, |x: T| T::zero().sub(x)));
    record(
        "NegBackward0",
        &[a],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(neg(g)?)]),
    );
    Ok(out)
}

/// Complex conjugate; real tensors are returned as they are.
pub fn conj(a: &Tensor) -> Result<Tensor> {
    if !a.dtype().is_complex() {
        return Ok(a.clone());
    }
    let out = float_map!(a, "conj", |x| x.conj())?;
    record(
        "ConjBackward0",
        &[a],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(conj(g)?)]),
    );
    Ok(out)
}

/// Real part (a copy; real tensors are returned as they are).
pub fn real(a: &Tensor) -> Result<Tensor> {
    if !a.dtype().is_complex() {
        return Ok(a.clone());
    }
    let out = cast(a, a.dtype().to_real());
    record(
        "RealBackward0",
        &[a],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(g.clone())]),
    );
    Ok(out)
}

pub fn exp(a: &Tensor) -> Result<Tensor> {
    let out = float_map!(a, "exp", |x| Float::exp(x))?;
    record(
        "ExpBackward0",
        &[a],
        &out,
        || SavedTensor::output(&out, 0),
        |ctx, so, g| Ok(grads![Some(mul(g, &conj(&so.unpack(ctx)?)?)?)]),
    );
    Ok(out)
}

pub fn log(a: &Tensor) -> Result<Tensor> {
    let out = float_map!(a, "log", |x| x.ln())?;
    record(
        "LogBackward0",
        &[a],
        &out,
        || SavedTensor::input(a),
        |ctx, sa, g| Ok(grads![Some(div(g, &conj(&sa.unpack(ctx)?)?)?)]),
    );
    Ok(out)
}

pub fn sqrt(a: &Tensor) -> Result<Tensor> {
    let out = float_map!(a, "sqrt", |x| x.sqrt())?;
    record(
        "SqrtBackward0",
        &[a],
        &out,
        || SavedTensor::output(&out, 0),
        |ctx, so, g| {
            let o = so.unpack(ctx)?;
            Ok(grads![Some(div(g, &mul(&conj(&o)?, &scalar(2.0))?)?)])
        },
    );
    Ok(out)
}

pub fn sin(a: &Tensor) -> Result<Tensor> {
    let out = float_map!(a, "sin", |x| x.sin())?;
    record(
        "SinBackward0",
        &[a],
        &out,
        || SavedTensor::input(a),
        |ctx, sa, g| Ok(grads![Some(mul(g, &conj(&cos(&sa.unpack(ctx)?)?)?)?)]),
    );
    Ok(out)
}

pub fn cos(a: &Tensor) -> Result<Tensor> {
    let out = float_map!(a, "cos", |x| x.cos())?;
    record(
        "CosBackward0",
        &[a],
        &out,
        || SavedTensor::input(a),
        |ctx, sa, g| {
            Ok(grads![Some(neg(&mul(
                g,
                &conj(&sin(&sa.unpack(ctx)?)?)?
            )?)?)])
        },
    );
    Ok(out)
}

pub fn tanh(a: &Tensor) -> Result<Tensor> {
    let out = float_map!(a, "tanh", |x| Float::tanh(x))?;
    record(
        "TanhBackward0",
        &[a],
        &out,
        || SavedTensor::output(&out, 0),
        |ctx, so, g| {
            // d tanh = 1 - tanh^2
            let o = conj(&so.unpack(ctx)?)?;
            let d = sub(&Tensor::wrapped_number(Scalar::Int(1)), &mul(&o, &o)?)?;
            Ok(grads![Some(mul(g, &d)?)])
        },
    );
    Ok(out)
}

pub fn sigmoid(a: &Tensor) -> Result<Tensor> {
    let out = float_map!(a, "sigmoid", |x| T::one().div(T::one().add(Float::exp(-x))))?;
    record(
        "SigmoidBackward0",
        &[a],
        &out,
        || SavedTensor::output(&out, 0),
        |ctx, so, g| {
            let o = conj(&so.unpack(ctx)?)?;
            let d = mul(&o, &sub(&Tensor::wrapped_number(Scalar::Int(1)), &o)?)?;
            Ok(grads![Some(mul(g, &d)?)])
        },
    );
    Ok(out)
}

pub fn relu(a: &Tensor) -> Result<Tensor> {
    let out = with_real!(a.dtype(), T => map::<T, T>(a, |x: T| if x > T::zero() || x.is_nan_val() { x } else { T::zero() }),
        bail!(Runtime, "\"clamp_min_cpu\" not implemented for '{}'", a.dtype().name()));
    record(
        "ReluBackward0",
        &[a],
        &out,
        || SavedTensor::output(&out, 0),
        |ctx, so, g| {
            let mask = gt(&so.unpack(ctx)?, &Tensor::wrapped_number(Scalar::Int(0)))?;
            Ok(grads![Some(mul(g, &cast(&mask, g.dtype()))?)])
        },
    );
    Ok(out)
}

/// `abs` (complex: the modulus, a real tensor).
pub fn abs(a: &Tensor) -> Result<Tensor> {
    let out = match a.dtype() {
        DType::Complex64 => map::<num_complex::Complex32, f32>(a, |x| x.norm()),
        DType::Complex128 => map::<num_complex::Complex64, f64>(a, |x| x.norm()),
        d => {
            with_real!(d, T => map::<T, T>(a, |x: T| if x < T::zero() { T::zero().sub(x) } else { x }), unreachable!())
        }
    };
    record(
        "AbsBackward0",
        &[a],
        &out,
        || SavedTensor::input(a),
        |ctx, sa, g| Ok(grads![Some(mul(g, &sgn(&sa.unpack(ctx)?)?)?)]),
    );
    Ok(out)
}

/// `sign` for real tensors, `z / |z|` for complex ones (0 at 0).
pub fn sgn(a: &Tensor) -> Result<Tensor> {
    let out = match a.dtype() {
        DType::Complex64 | DType::Complex128 => float_map!(a, "sgn", |x| {
            let r = x.abs_val();
            if r == <T as Float>::Real::zero() {
                T::zero()
            } else {
                x.div(T::from_real(r))
            }
        })?,
        d => {
            with_real!(d, T => map::<T, T>(a, |x: T| if x > T::zero() { T::one() } else if x < T::zero() { T::zero().sub(T::one()) } else { x }), unreachable!())
        }
    };
    record(
        "SgnBackward0",
        &[a],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(zeros_like(g))]),
    );
    Ok(out)
}

/// `where(cond, a, b)`: elements of `a` where `cond`, else of `b`.
pub fn where_(cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if cond.dtype() != DType::Bool {
        bail!(
            Runtime,
            "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
            cond.dtype().name()
        );
    }
    let dtype = super::result_type(&[a, b]);
    let (ca, cb) = (cast(a, dtype), cast(b, dtype));
    let out = with_dtype!(dtype, T => zip3_map::<bool, T, T, T>(cond, &ca, &cb, |c, x, y| if c { x } else { y }))?;
    record(
        "WhereBackward0",
        &[a, b],
        &out,
        || cond.detach(),
        |_, cond, g| {
            let z = zeros_like(g);
            Ok(grads![
                Some(where_(cond, g, &z)?),
                Some(where_(cond, &z, g)?)
            ])
        },
    );
    Ok(out)
}

pub fn logical_not(a: &Tensor) -> Result<Tensor> {
    Ok(with_dtype!(a.dtype(), T => map::<T, bool>(a, |x: T| x == T::zero())))
}

macro_rules! logical {
    ($($name:ident => $op:tt;)*) => {$(
        pub fn $name(a: &Tensor, b: &Tensor) -> Result<Tensor> {
            let (a, b) = (logical_not(a)?, logical_not(b)?);
            super::elementwise::zip_map::<bool, bool, bool>(&a, &b, |x, y| (!x) $op (!y))
        }
    )*};
}

logical! {
    logical_and => &;
    logical_or => |;
    logical_xor => ^;
}

/// `clamp(min, max)` with optional bounds; the gradient passes where the
/// input was inside the bounds.
pub fn clamp(a: &Tensor, min: Option<Scalar>, max: Option<Scalar>) -> Result<Tensor> {
    if min.is_none() && max.is_none() {
        bail!(
            Runtime,
            "torch.clamp: At least one of 'min' or 'max' must not be None"
        );
    }
    let dtype = {
        let mut ops = vec![a.clone()];
        ops.extend(min.into_iter().chain(max).map(Tensor::wrapped_number));
        super::result_type(&ops.iter().collect::<Vec<_>>())
    };
    let ca = cast(a, dtype);
    let out = with_real!(dtype, T => {
        let lo = min.map(T::from_scalar);
        let hi = max.map(T::from_scalar);
        map::<T, T>(&ca, move |x: T| {
            if x.is_nan_val() { return x; }
            let x = match lo { Some(l) if x < l => l, _ => x };
            match hi { Some(h) if x > h => h, _ => x }
        })
    }, bail!(Runtime, "clamp is not supported for complex types"));
    record(
        "ClampBackward1",
        &[a],
        &out,
        || SavedTensor::input(a),
        move |ctx, sa, g| {
            let a = sa.unpack(ctx)?;
            let mut keep = Tensor::full(a.shape(), Scalar::Bool(true), DType::Bool);
            if let Some(l) = min {
                keep = logical_and(&keep, &super::binary::ge(&a, &Tensor::wrapped_number(l))?)?;
            }
            if let Some(h) = max {
                keep = logical_and(&keep, &super::binary::le(&a, &Tensor::wrapped_number(h))?)?;
            }
            Ok(grads![Some(mul(g, &cast(&keep, g.dtype()))?)])
        },
    );
    Ok(out)
}

/// Elementwise predicate over real floats (`isnan`, `isfinite`, ...);
/// integer and bool tensors are never NaN and always finite.
pub fn float_predicate(a: &Tensor, f: fn(f64) -> bool) -> Tensor {
    match a.dtype() {
        DType::Complex64 | DType::Complex128 => {
            let re = cast(a, a.dtype().to_real());
            float_predicate(&re, f)
        }
        d => {
            with_real_float!(d, T => map::<T, bool>(a, move |x: T| f(x.to_f64())), Tensor::full(a.shape(), Scalar::Bool(f(0.0)), DType::Bool))
        }
    }
}

/// Rounds half to even, as PyTorch's `round`.
pub fn round(a: &Tensor) -> Result<Tensor> {
    let out = match a.dtype() {
        DType::Float32 | DType::Float64 => real_float_map!(a, "round", |x| x.round_even())?,
        DType::Bool | DType::Int64 => super::copy::clone(&a.detach())?,
        d => return Err(float_dtype_error("round", d)),
    };
    record(
        "RoundBackward0",
        &[a],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(zeros_like(g))]),
    );
    Ok(out)
}
