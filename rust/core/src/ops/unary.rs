//! Elementwise unary ops and `where`. Floating functions of integer
//! tensors compute in the default float dtype, as PyTorch does.

// Generic kernels are instantiated for `bool` too, where `x < y` is intended.
#![allow(clippy::bool_comparison)]

use super::binary::{add, div, float_dtype_error, gt, mul, sub};
use super::complex_math;
use super::copy::try_cast;
use super::elementwise::{map, zip3_map, zip_map};
use super::num::{Arith, Float, Real, RealFloat};
use crate::autograd::{record, SavedTensor};
use crate::tensor::{DType, Scalar, ScalarConvert, Tensor};
use crate::{bail, grads, with_dtype, with_float, with_real, with_real_float, Result};
use num_complex::{Complex32, Complex64};

/// The tensor cast to a floating dtype when it is bool or integer.
pub(super) fn floating(t: &Tensor) -> Result<Tensor> {
    if t.dtype().is_differentiable() {
        Ok(t.clone())
    } else {
        try_cast(t, DType::default_float())
    }
}

/// `$f(x)` over a floating or complex tensor (integers promoted first).
macro_rules! float_map {
    ($t:expr, $op:literal, |$x:ident| $e:expr) => {{
        let t = floating($t)?;
        with_float!(t.dtype(), T => {
            // An item, unlike a closure, can be forced inline into the
            // kernel's loop, which then vectorises.
            #[inline(always)]
            fn kernel($x: T) -> T {
                $e
            }
            Ok::<Tensor, crate::Error>(map::<T, T>(&t, kernel)?)
        }, Err(float_dtype_error($op, t.dtype())))
    }};
}

/// `$f(x)` over a real floating tensor; complex input is an error.
macro_rules! real_float_map {
    ($t:expr, $op:literal, |$x:ident| $e:expr) => {{
        let t = floating($t)?;
        with_real_float!(t.dtype(), T => {
            #[inline(always)]
            fn kernel($x: T) -> T {
                $e
            }
            Ok::<Tensor, crate::Error>(map::<T, T>(&t, kernel)?)
        }, Err(float_dtype_error($op, t.dtype())))
    }};
}

/// `$e`, the gradient from `g` and a saved tensor `o`, in one pass over
/// real floating tensors of one dtype, when the backward is not itself
/// recorded: composing it from differentiable ops would allocate (and
/// fault in) a temporary per op. `None` when the composed formula must run.
macro_rules! fused_grad {
    ($ctx:expr, $g:expr, $o:expr, |$gv:ident, $ov:ident| $e:expr) => {
        if !$ctx.create_graph && $g.dtype() == $o.dtype() {
            with_real_float!($g.dtype(), T => Some(zip_map::<T, T, T>($g, $o, |$gv: T, $ov: T| $e)), None)
        } else {
            None
        }
    };
}

pub fn zeros_like(t: &Tensor) -> Result<Tensor> {
    Tensor::full(t.shape(), Scalar::Int(0), t.dtype())
}

/// A 0-dim zero of `t`'s dtype: the masked branch of a `where_`,
/// broadcast instead of materialised.
pub fn zero_of(t: &Tensor) -> Tensor {
    Tensor::scalar(Scalar::Int(0), t.dtype())
}

pub fn ones_like(t: &Tensor) -> Result<Tensor> {
    Tensor::full(t.shape(), Scalar::Int(1), t.dtype())
}

/// A Python float as an operand: lowest in type promotion.
pub(super) fn scalar(v: f64) -> Tensor {
    Tensor::wrapped_number(Scalar::Float(v))
}

pub fn neg(a: &Tensor) -> Result<Tensor> {
    if a.dtype() == DType::Bool {
        bail!(
            Runtime,
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        );
    }
    // Floats flip the sign (so -0.0 and 0.0 swap); integers wrap.
    let out = match a.dtype() {
        d if d.is_floating_point() || d.is_complex() => {
            with_float!(d, T => map::<T, T>(a, |x: T| -x)?, unreachable!())
        }
        d => with_dtype!(d, T => map::<T, T>(a, |x: T| T::zero().sub(x))?),
    };
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
    conjugate(a, "ConjBackward0")
}

/// `conj_physical`: the same values as `conj` (which always materialises
/// here), under its own node name.
pub fn conj_physical(a: &Tensor) -> Result<Tensor> {
    conjugate(a, "ConjPhysicalBackward0")
}

fn conjugate(a: &Tensor, node: &'static str) -> Result<Tensor> {
    if !a.dtype().is_complex() {
        return Ok(a.clone());
    }
    let out = float_map!(a, "conj", |x| x.conj())?;
    record(
        node,
        &[a],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(conj(g)?)]),
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
    let out = float_map!(a, "log", |x| Float::ln(x))?;
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
    let out = float_map!(a, "sqrt", |x| Float::sqrt(x))?;
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
    let out = float_map!(a, "sin", |x| Float::sin(x))?;
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
    let out = float_map!(a, "cos", |x| Float::cos(x))?;
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

pub fn tan(a: &Tensor) -> Result<Tensor> {
    let out = float_map!(a, "tan", |x| Float::tan(x))?;
    record(
        "TanBackward0",
        &[a],
        &out,
        || SavedTensor::output(&out, 0),
        |ctx, so, g| {
            // d tan = 1 + tan^2
            let o = conj(&so.unpack(ctx)?)?;
            Ok(grads![Some(mul(g, &add(&one(), &mul(&o, &o)?)?)?)])
        },
    );
    Ok(out)
}

/// Whether the sign bit is set (-0.0 and negative NaNs included); never
/// differentiable.
pub fn signbit(a: &Tensor) -> Result<Tensor> {
    match a.dtype() {
        DType::Bool => Ok(Tensor::full(a.shape(), Scalar::Bool(false), DType::Bool)?),
        d if d.is_integral(false) => Ok(map::<i64, bool>(&try_cast(a, DType::Int64)?, |x| x < 0)?),
        d => with_real_float!(d, T => Ok(map::<T, bool>(a, |x: T| x.is_sign_negative())?),
            bail!(Runtime, "signbit is not implemented for complex tensors.")),
    }
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
            let o = so.unpack(ctx)?;
            if let Some(g) = fused_grad!(ctx, g, &o, |g, o| g * (T::one() - o * o)) {
                return Ok(grads![Some(g?)]);
            }
            let o = conj(&o)?;
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
            let o = so.unpack(ctx)?;
            if let Some(g) = fused_grad!(ctx, g, &o, |g, o| g * (o * (T::one() - o))) {
                return Ok(grads![Some(g?)]);
            }
            let o = conj(&o)?;
            let d = mul(&o, &sub(&Tensor::wrapped_number(Scalar::Int(1)), &o)?)?;
            Ok(grads![Some(mul(g, &d)?)])
        },
    );
    Ok(out)
}

pub fn relu(a: &Tensor) -> Result<Tensor> {
    // Only what is below 0 becomes 0: NaN and -0.0 stay, as in PyTorch.
    let out = with_real!(a.dtype(), T => map::<T, T>(a, |x: T| if x < T::zero() { T::zero() } else { x })?,
        bail!(NotImplemented, "\"clamp_min_cpu\" not implemented for '{}'", a.dtype().name()));
    record(
        "ReluBackward0",
        &[a],
        &out,
        || SavedTensor::output(&out, 0),
        |ctx, so, g| Ok(grads![Some(relu_grad(g, &so.unpack(ctx)?)?)]),
    );
    Ok(out)
}

/// relu's gradient, PyTorch's `threshold_backward(g, o, 0)`: `g` cut only
/// where the result `o` is at most 0, so a NaN passes it on. Recorded as
/// PyTorch records it: linear in `g`, and a zero gradient for `o`, so that
/// a double backward (a gradient penalty) reaches the input with zeros.
fn relu_grad(g: &Tensor, o: &Tensor) -> Result<Tensor> {
    let out = with_real!(o.dtype(), T => zip_map::<T, T, T>(&try_cast(g, o.dtype())?, o, |g: T, o: T| {
        if o <= T::zero() { T::zero() } else { g }
    })?, unreachable!("relu's output is real"));
    record(
        "ThresholdBackwardBackward0",
        &[g, o],
        &out,
        || SavedTensor::input(o),
        |ctx, so, gg| {
            let o = so.unpack(ctx)?;
            let grad_o = ctx.needs_grad(1).then(|| zeros_like(&o)).transpose()?;
            Ok(grads![Some(relu_grad(gg, &o)?), grad_o])
        },
    );
    Ok(out)
}

/// `abs` (complex: the modulus, a real tensor).
pub fn abs(a: &Tensor) -> Result<Tensor> {
    let out = match a.dtype() {
        DType::Complex64 => map::<num_complex::Complex32, f32>(a, |x| x.norm())?,
        DType::Complex128 => map::<num_complex::Complex64, f64>(a, |x| x.norm())?,
        d => {
            // `<=` so that -0.0 becomes 0.0.
            with_real!(d, T => map::<T, T>(a, |x: T| if x <= T::zero() { T::zero().sub(x) } else { x })?, unreachable!())
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

/// `z / |z|` over a complex tensor of element type `$T` (0 at 0).
macro_rules! unit_complex {
    ($a:expr, $T:ty) => {
        map::<$T, $T>($a, |x| {
            let r = x.norm();
            if r == 0.0 {
                x * 0.0
            } else {
                x / r
            }
        })?
    };
}

/// `sign` for real tensors, `z / |z|` for complex ones (0 at 0).
pub fn sgn(a: &Tensor) -> Result<Tensor> {
    let out = match a.dtype() {
        // Each part divided by the modulus, as PyTorch computes it.
        DType::Complex64 => unit_complex!(a, num_complex::Complex32),
        DType::Complex128 => unit_complex!(a, num_complex::Complex64),
        d => {
            // NaN, failing both comparisons, gives 0 as in PyTorch.
            with_real!(d, T => map::<T, T>(a, |x: T| if x > T::zero() { T::one() } else if x < T::zero() { T::zero().sub(T::one()) } else { T::zero() })?, unreachable!())
        }
    };
    let complex = a.dtype().is_complex();
    record(
        "SgnBackward0",
        &[a],
        &out,
        || complex.then(|| (SavedTensor::input(a), SavedTensor::output(&out, 0))),
        |ctx, saved, g| match saved {
            Some((sa, so)) => Ok(grads![Some(super::complex::sgn_backward(
                &sa.unpack(ctx)?,
                &so.unpack(ctx)?,
                g
            )?)]),
            None => Ok(grads![Some(zeros_like(g)?)]),
        },
    );
    Ok(out)
}

/// `where(cond, a, b)`: elements of `a` where `cond`, else of `b`.
pub fn where_(cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if cond.dtype() != DType::Bool {
        bail!(
            Runtime,
            "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
            cond.dtype().scalar_type_name()
        );
    }
    let dtype = super::result_type(&[a, b]);
    let (ca, cb) = (try_cast(a, dtype)?, try_cast(b, dtype)?);
    let out = with_dtype!(dtype, T => zip3_map::<bool, T, T, T>(cond, &ca, &cb, |c, x, y| if c { x } else { y }))?;
    record(
        "WhereBackward0",
        &[a, b],
        &out,
        || cond.detach(),
        |_, cond, g| {
            let z = zero_of(g);
            Ok(grads![
                Some(where_(cond, g, &z)?),
                Some(where_(cond, &z, g)?)
            ])
        },
    );
    Ok(out)
}

pub fn logical_not(a: &Tensor) -> Result<Tensor> {
    Ok(with_dtype!(a.dtype(), T => map::<T, bool>(a, |x: T| x == T::zero())?))
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

/// A bound of `clamp_min`/`clamp_max`: a number or a tensor.
pub enum Bound {
    Number(Scalar),
    Tensor(Tensor),
}

impl Bound {
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            Bound::Number(_) => None,
            Bound::Tensor(t) => Some(t),
        }
    }
}

/// `clamp(min, max)` with optional number bounds; the gradient passes
/// where the input was inside the bounds.
pub fn clamp(a: &Tensor, min: Option<Scalar>, max: Option<Scalar>) -> Result<Tensor> {
    clamp_numbers(a, min, max, Passes::AtBounds, "ClampBackward1")
}

/// `hardtanh(min_val, max_val)` (and `relu6`): `clamp` whose gradient
/// passes only strictly between the bounds, and at NaN, as PyTorch's does.
pub fn hardtanh(a: &Tensor, min: Scalar, max: Scalar) -> Result<Tensor> {
    clamp_numbers(
        a,
        Some(min),
        Some(max),
        Passes::InsideOnly,
        "HardtanhBackward0",
    )
}

/// `clamp(min, max)` with optional tensor bounds, broadcast with `a`.
pub fn clamp_tensor(a: &Tensor, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Tensor> {
    clamp_tensors(a, min, max, "ClampBackward0")
}

/// `clamp_min(bound)`: `a` with every element below `bound` raised to it.
pub fn clamp_min(a: &Tensor, bound: &Bound) -> Result<Tensor> {
    match bound {
        Bound::Number(s) => clamp_numbers(a, Some(*s), None, Passes::AtBounds, "ClampMinBackward0"),
        Bound::Tensor(t) => clamp_tensors(a, Some(t), None, "ClampMinBackward1"),
    }
}

/// `clamp_max(bound)`: `a` with every element above `bound` lowered to it.
pub fn clamp_max(a: &Tensor, bound: &Bound) -> Result<Tensor> {
    match bound {
        Bound::Number(s) => clamp_numbers(a, None, Some(*s), Passes::AtBounds, "ClampMaxBackward0"),
        Bound::Tensor(t) => clamp_tensors(a, None, Some(t), "ClampMaxBackward1"),
    }
}

fn check_bounds_given(given: bool) -> Result<()> {
    if !given {
        bail!(
            Runtime,
            "torch.clamp: At least one of 'min' or 'max' must not be None"
        );
    }
    Ok(())
}

/// Where a clamp with number bounds lets the gradient through, besides
/// strictly between the bounds.
#[derive(Clone, Copy)]
enum Passes {
    /// `clamp`: at the bounds too.
    AtBounds,
    /// `hardtanh`: nowhere else but at NaN.
    InsideOnly,
}

fn clamp_numbers(
    a: &Tensor,
    min: Option<Scalar>,
    max: Option<Scalar>,
    passes: Passes,
    name: &'static str,
) -> Result<Tensor> {
    check_bounds_given(min.is_some() || max.is_some())?;
    let dtype = {
        let mut ops = vec![a.clone()];
        ops.extend(min.into_iter().chain(max).map(Tensor::wrapped_number));
        super::result_type(&ops.iter().collect::<Vec<_>>())
    };
    let ca = try_cast(a, dtype)?;
    let out = with_real!(dtype, T => {
        let lo = min.map(T::from_scalar);
        let hi = max.map(T::from_scalar);
        map::<T, T>(&ca, move |x: T| {
            if x.is_nan_val() { return x; }
            // A NaN bound gives NaN, as PyTorch's kernels do.
            let x = match lo { Some(l) if x < l || l.is_nan_val() => l, _ => x };
            match hi { Some(h) if x > h || h.is_nan_val() => h, _ => x }
        })?
    }, bail!(NotImplemented, "clamp is not supported for complex types"));
    record(
        name,
        &[a],
        &out,
        || SavedTensor::input(a),
        move |ctx, sa, g| {
            let a = sa.unpack(ctx)?;
            let keep = match (passes, min, max) {
                (Passes::InsideOnly, Some(l), Some(h)) => {
                    let (l, h) = (Tensor::wrapped_number(l), Tensor::wrapped_number(h));
                    let at_or_outside =
                        logical_or(&super::binary::le(&a, &l)?, &super::binary::ge(&a, &h)?)?;
                    logical_not(&at_or_outside)?
                }
                _ => {
                    let mut keep = Tensor::full(a.shape(), Scalar::Bool(true), DType::Bool)?;
                    if let Some(l) = min {
                        keep = logical_and(
                            &keep,
                            &super::binary::ge(&a, &Tensor::wrapped_number(l))?,
                        )?;
                    }
                    if let Some(h) = max {
                        keep = logical_and(
                            &keep,
                            &super::binary::le(&a, &Tensor::wrapped_number(h))?,
                        )?;
                    }
                    keep
                }
            };
            Ok(grads![Some(mul(g, &try_cast(&keep, g.dtype())?)?)])
        },
    );
    Ok(out)
}

/// `min(max(a, min), max)` elementwise, all three broadcast together and
/// promoted to one dtype; a NaN in any of them gives NaN. Where the bounds
/// cross (`min > max`) the result is `max`, whose gradient it then gets.
fn clamp_tensors(
    a: &Tensor,
    min: Option<&Tensor>,
    max: Option<&Tensor>,
    name: &'static str,
) -> Result<Tensor> {
    check_bounds_given(min.is_some() || max.is_some())?;
    let operands: Vec<&Tensor> = std::iter::once(a).chain(min).chain(max).collect();
    let dtype = super::result_type(&operands);
    if dtype.is_complex() {
        bail!(NotImplemented, "clamp is not supported for complex types");
    }
    // Each operand in the common dtype first: promoting pairwise, as two
    // chained `maximum`/`minimum` would, can pick another dtype.
    let cast = |t: &Tensor| try_cast(&t.detach(), dtype);
    let mut out = cast(a)?;
    if let Some(lo) = min {
        out = super::binary::maximum(&out, &cast(lo)?)?;
    }
    if let Some(hi) = max {
        out = super::binary::minimum(&out, &cast(hi)?)?;
    }
    record(
        name,
        &operands,
        &out,
        || {
            let save = SavedTensor::input;
            (save(a), min.map(save), max.map(save))
        },
        move |ctx, (sa, slo, shi), g| {
            use super::binary::{ge, gt, le, lt};
            let a = sa.unpack(ctx)?;
            let lo = slo.as_ref().map(|s| s.unpack(ctx)).transpose()?;
            let hi = shi.as_ref().map(|s| s.unpack(ctx)).transpose()?;
            let pass = |mask: &Tensor| where_(mask, g, &zero_of(g));
            let above_min = lo.as_ref().map(|l| ge(&a, l)).transpose()?;
            let below_max = hi.as_ref().map(|h| le(&a, h)).transpose()?;
            let inside = match (above_min, below_max) {
                (Some(x), Some(y)) => logical_and(&x, &y)?,
                (Some(x), None) | (None, Some(x)) => x,
                (None, None) => return Ok(grads![Some(g.clone())]),
            };
            let mut grads = grads![Some(pass(&inside)?)];
            if let Some(l) = &lo {
                let mut below = lt(&a, l)?;
                if let Some(h) = &hi {
                    below = logical_and(&below, &lt(l, h)?)?;
                }
                grads.push(Some(pass(&below)?));
            }
            if let Some(h) = &hi {
                let mut above = gt(&a, h)?;
                if let Some(l) = &lo {
                    above = logical_or(&above, &lt(h, l)?)?;
                }
                grads.push(Some(pass(&above)?));
            }
            Ok(grads)
        },
    );
    Ok(out)
}

/// Elementwise predicate over real floats (`isnan`, `isfinite`, ...);
/// integer and bool tensors are never NaN and always finite.
pub fn float_predicate(a: &Tensor, f: fn(f64) -> bool) -> Result<Tensor> {
    match a.dtype() {
        // A complex number is NaN (or infinite) when either part is, and
        // finite when both are: the parts' answers combine with `or` for a
        // predicate false at 0, with `and` for one true there.
        DType::Complex64 | DType::Complex128 => {
            let both = f(0.0);
            let on_parts =
                move |re: f64, im: f64| if both { f(re) && f(im) } else { f(re) || f(im) };
            if a.dtype() == DType::Complex128 {
                map::<Complex64, bool>(a, move |z| on_parts(z.re, z.im))
            } else {
                map::<Complex32, bool>(a, move |z| on_parts(z.re as f64, z.im as f64))
            }
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
        d if d.is_integral(true) => super::copy::clone(&a.detach())?,
        d => return Err(float_dtype_error("round", d)),
    };
    record(
        "RoundBackward0",
        &[a],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(zeros_like(g)?)]),
    );
    Ok(out)
}

/// Saved value of a unary op: its input or its output.
macro_rules! saved {
    (input, $a:ident, $o:ident) => {
        SavedTensor::input($a)
    };
    (output, $a:ident, $o:ident) => {
        SavedTensor::output(&$o, 0)
    };
}

/// `$f(z)` over a complex tensor, in float64 for complex64 (rounded back);
/// without a complex kernel, the error PyTorch gives.
macro_rules! complex_map {
    ($t:expr, $name:ident, |$z:ident| $e:expr) => {{
        #[inline(always)]
        fn kernel($z: Complex64) -> Complex64 {
            $e
        }
        if $t.dtype() == DType::Complex128 {
            map::<Complex64, Complex64>($t, kernel)?
        } else {
            map::<Complex32, Complex32>($t, |z| {
                complex_math::narrow(kernel(complex_math::widen(z)))
            })?
        }
    }};
    ($t:expr, $name:ident) => {
        return Err(float_dtype_error(stringify!($name), $t.dtype()))
    };
}

/// Floating unary ops (integers compute in the default float dtype): the
/// forward `|x| expr` with `T` the real element type; for the ops PyTorch
/// also defines over complex numbers, a complex forward `|z| expr` with `z`
/// a `Complex64` (complex64 computes in float64 and rounds); then the
/// gradient from `g` and the saved input or output `v`. Gradients of complex
/// inputs are `g * conj(f'(z))`, PyTorch's convention for holomorphic `f`,
/// so the formulas conjugate the derivative (`conj` of a real tensor is the
/// tensor itself, no kernel).
macro_rules! real_unary {
    ($($(#[$doc:meta])* $name:ident $grad_fn:literal |$x:ident| $e:expr, $(|$z:ident| $ce:expr,)? $kind:ident |$g:ident, $v:ident| $back:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name(a: &Tensor) -> Result<Tensor> {
            let t = floating(a)?;
            let out = if t.dtype().is_complex() {
                complex_map!(&t, $name $(, |$z| $ce)?)
            } else {
                with_real_float!(t.dtype(), T => {
                    // Forced inline so that the vectorisable ones (erf, erfc)
                    // vectorise in the kernel's loop.
                    let kernel = {
                        #[inline(always)]
                        |$x: T| $e
                    };
                    map::<T, T>(&t, kernel)?
                }, return Err(float_dtype_error(stringify!($name), t.dtype())))
            };
            record($grad_fn, &[a], &out, || saved!($kind, a, out), |ctx, s, $g| {
                let $v = s.unpack(ctx)?;
                Ok(grads![Some($back)])
            });
            Ok(out)
        }
    )*};
}

pub(super) fn one() -> Tensor {
    Tensor::wrapped_number(Scalar::Int(1))
}

real_unary! {
    exp2 "Exp2Backward0" |x| x.exp2(), |z| complex_math::exp2(z),
        output |g, o| mul(g, &mul(&conj(&o)?, &scalar(std::f64::consts::LN_2))?)?;
    expm1 "Expm1Backward0" |x| x.exp_m1(), |z| complex_math::expm1(z),
        output |g, o| mul(g, &add(&conj(&o)?, &one())?)?;
    log2 "Log2Backward0" |x| x.log2(), |z| complex_math::log2(z),
        input |g, a| div(g, &mul(&conj(&a)?, &scalar(std::f64::consts::LN_2))?)?;
    log10 "Log10Backward0" |x| x.log10(), |z| complex_math::log10(z),
        input |g, a| div(g, &mul(&conj(&a)?, &scalar(std::f64::consts::LN_10))?)?;
    log1p "Log1PBackward0" |x| x.ln_1p(), |z| complex_math::log1p(z),
        input |g, a| div(g, &add(&conj(&a)?, &one())?)?;
    frac "FracBackward0" |x| x - x.trunc(), input |g, _a| g.clone();
    reciprocal "ReciprocalBackward0" |x| 1.0 / x, |z| complex_math::reciprocal(z), output |g, o| {
        let o = conj(&o)?;
        neg(&mul(g, &mul(&o, &o)?)?)?
    };
    rsqrt "RsqrtBackward0" |x| 1.0 / x.sqrt(), |z| complex_math::rsqrt(z),
        output |g, o| mul(g, &mul(&pow_o3(&conj(&o)?)?, &scalar(-0.5))?)?;
    sinh "SinhBackward0" |x| x.sinh(), |z| complex_math::sinh(z),
        input |g, a| mul(g, &conj(&cosh(&a)?)?)?;
    cosh "CoshBackward0" |x| x.cosh(), |z| complex_math::cosh(z),
        input |g, a| mul(g, &conj(&sinh(&a)?)?)?;
    asin "AsinBackward0" |x| x.asin(), |z| complex_math::asin(z),
        input |g, a| div(g, &conj(&sqrt(&sub(&one(), &mul(&a, &a)?)?)?)?)?;
    acos "AcosBackward0" |x| x.acos(), |z| complex_math::acos(z),
        input |g, a| neg(&div(g, &conj(&sqrt(&sub(&one(), &mul(&a, &a)?)?)?)?)?)?;
    atan "AtanBackward0" |x| x.atan(), |z| complex_math::atan(z), input |g, a| {
        let a = conj(&a)?;
        div(g, &add(&one(), &mul(&a, &a)?)?)?
    };
    /// The error function.
    erf "ErfBackward0" |x| RealFloat::erf(x), input |g, a| {
        let d = mul(&exp(&neg(&mul(&a, &a)?)?)?, &scalar(std::f64::consts::FRAC_2_SQRT_PI))?;
        mul(g, &d)?
    };
    /// `1 - erf(x)`, computed directly so that it keeps its precision in
    /// the right tail, where `erf` rounds to 1.
    erfc "ErfcBackward0" |x| Libm::erfc(x), input |g, a| {
        let d = mul(&exp(&neg(&mul(&a, &a)?)?)?, &scalar(-std::f64::consts::FRAC_2_SQRT_PI))?;
        mul(g, &d)?
    };
    // The inverse hyperbolic functions come from libm, which keeps full
    // precision near 1 (acosh) and 0, where the textbook formulas do not.
    asinh "AsinhBackward0" |x| Libm::asinh(x), |z| complex_math::asinh(z),
        input |g, a| mul(g, &conj(&rsqrt(&add(&mul(&a, &a)?, &one())?)?)?)?;
    // 1 / sqrt(z^2 - 1) is the derivative for real z > 1 only: over the
    // complex plane it is 1 / (sqrt(z + 1) sqrt(z - 1)), as in PyTorch.
    acosh "AcoshBackward0" |x| Libm::acosh(x), |z| complex_math::acosh(z), input |g, a| {
        if a.dtype().is_complex() {
            let d = mul(&rsqrt(&add(&a, &one())?)?, &rsqrt(&sub(&a, &one())?)?)?;
            mul(g, &conj(&d)?)?
        } else {
            mul(g, &rsqrt(&sub(&mul(&a, &a)?, &one())?)?)?
        }
    };
    atanh "AtanhBackward0" |x| Libm::atanh(x), |z| complex_math::atanh(z), input |g, a| {
        let a = conj(&a)?;
        div(g, &sub(&one(), &mul(&a, &a)?)?)?
    };
}

/// Special functions from libm, in each float type's own precision.
trait Libm {
    fn erfc(self) -> Self;
    fn asinh(self) -> Self;
    fn acosh(self) -> Self;
    fn atanh(self) -> Self;
}

impl Libm for f32 {
    #[inline(always)]
    fn erfc(self) -> f32 {
        super::fastmath::erfc_f32(self)
    }
    fn asinh(self) -> f32 {
        libm::asinhf(self)
    }
    fn acosh(self) -> f32 {
        libm::acoshf(self)
    }
    fn atanh(self) -> f32 {
        libm::atanhf(self)
    }
}

impl Libm for f64 {
    fn erfc(self) -> f64 {
        libm::erfc(self)
    }
    fn asinh(self) -> f64 {
        libm::asinh(self)
    }
    fn acosh(self) -> f64 {
        libm::acosh(self)
    }
    fn atanh(self) -> f64 {
        libm::atanh(self)
    }
}

fn pow_o3(o: &Tensor) -> Result<Tensor> {
    mul(&mul(o, o)?, o)
}

/// Rounding ops: integers come back as a copy; the gradient is zero.
macro_rules! rounding {
    ($($name:ident $grad_fn:literal |$x:ident| $e:expr;)*) => {$(
        pub fn $name(a: &Tensor) -> Result<Tensor> {
            let out = match a.dtype() {
                d if d.is_integral(true) => super::copy::clone(&a.detach())?,
                d => with_real_float!(d, T => map::<T, T>(a, |$x: T| $e)?,
                    return Err(float_dtype_error(stringify!($name), d))),
            };
            record($grad_fn, &[a], &out, || (), |_, _, g| Ok(grads![Some(zeros_like(g)?)]));
            Ok(out)
        }
    )*};
}

rounding! {
    floor "FloorBackward0" |x| x.floor();
    ceil "CeilBackward0" |x| x.ceil();
    trunc "TruncBackward0" |x| x.trunc();
}

/// `sign`: -1, 0 or 1 (0 for NaN); bool is returned as a copy.
pub fn sign(a: &Tensor) -> Result<Tensor> {
    if a.dtype().is_complex() {
        bail!(
            Runtime,
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead."
        );
    }
    let out = sgn(&a.detach())?;
    record(
        "SignBackward0",
        &[a],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(zeros_like(g)?)]),
    );
    Ok(out)
}

/// `x * x` (PyTorch records it as `pow(x, 2)`).
pub fn square(a: &Tensor) -> Result<Tensor> {
    super::binary::pow_scalar(a, Scalar::Int(2))
}

/// `nan_to_num`: NaN and infinities replaced (by the dtype's extremes by default).
pub fn nan_to_num(
    a: &Tensor,
    nan: f64,
    posinf: Option<f64>,
    neginf: Option<f64>,
) -> Result<Tensor> {
    if a.dtype().is_complex() {
        return nan_to_num_complex(a, nan, posinf, neginf);
    }
    let out = match a.dtype() {
        d if d.is_integral(true) => super::copy::clone(&a.detach())?,
        d => with_real_float!(d, T => {
            let (n, p, m) = (nan as T, posinf.map_or(T::MAX, |v| v as T), neginf.map_or(T::MIN, |v| v as T));
            map::<T, T>(a, move |x: T| if x.is_nan() { n } else if x == T::INFINITY { p } else if x == T::NEG_INFINITY { m } else { x })?
        }, return Err(float_dtype_error("nan_to_num", d))),
    };
    record(
        "NanToNumBackward0",
        &[a],
        &out,
        || SavedTensor::input(a),
        |ctx, sa, g| {
            let keep = float_predicate(&sa.unpack(ctx)?, f64::is_finite)?;
            Ok(grads![Some(mul(g, &try_cast(&keep, g.dtype())?)?)])
        },
    );
    Ok(out)
}

/// `nan_to_num` of the real and imaginary parts, each as a real tensor's
/// (the bounds are those of the part's dtype). Not differentiable, as in
/// PyTorch.
fn nan_to_num_complex(
    a: &Tensor,
    nan: f64,
    posinf: Option<f64>,
    neginf: Option<f64>,
) -> Result<Tensor> {
    if crate::autograd::any_requires_grad(&[a]) {
        bail!(
            Runtime,
            "nan_to_num does not support automatic differentiation for outputs with complex dtype."
        );
    }
    with_real_float!(a.dtype().to_real(), T => {
        let (n, p, m) = (nan as T, posinf.map_or(T::MAX, |v| v as T), neginf.map_or(T::MIN, |v| v as T));
        let part = move |x: T| if x.is_nan() { n } else if x == T::INFINITY { p } else if x == T::NEG_INFINITY { m } else { x };
        map::<num_complex::Complex<T>, num_complex::Complex<T>>(a, move |z| num_complex::Complex::new(part(z.re), part(z.im)))
    }, unreachable!())
}

/// A closure written once over `$T`, as a pair for float32 and float64,
/// each inlined into the loops it is passed to (the polynomials of
/// `fastmath` are too large for the inliner to take them otherwise).
macro_rules! per_float {
    ($T:ident => $($closure:tt)*) => {
        (
            {
                type $T = f32;
                #[inline(always)]
                $($closure)*
            },
            {
                type $T = f64;
                #[inline(always)]
                $($closure)*
            },
        )
    };
}

/// An activation over real floats: `value(x)`, and a gradient of `g *
/// slope(x)` taken in one pass; under `create_graph`, `slope_ops` builds the
/// same slope from differentiable ops.
fn activation<V32, V64, S32, S64>(
    a: &Tensor,
    name: &'static str,
    (value32, value64): (V32, V64),
    (slope32, slope64): (S32, S64),
    slope_ops: impl Fn(&Tensor) -> Result<Tensor> + Send + Sync + 'static,
) -> Result<Tensor>
where
    V32: Fn(f32) -> f32 + Sync + Send,
    V64: Fn(f64) -> f64 + Sync + Send,
    S32: Fn(f32) -> f32 + Sync + Send + 'static,
    S64: Fn(f64) -> f64 + Sync + Send + 'static,
{
    let out = match a.dtype() {
        DType::Float32 => map::<f32, f32>(a, value32)?,
        DType::Float64 => map::<f64, f64>(a, value64)?,
        d => return Err(float_dtype_error(name, d)),
    };
    record(
        name,
        &[a],
        &out,
        || SavedTensor::input(a),
        move |ctx, sa, g| {
            let x = sa.unpack(ctx)?;
            let fused = match (ctx.create_graph, g.dtype(), x.dtype()) {
                (false, DType::Float32, DType::Float32) => Some(zip_map::<f32, f32, f32>(
                    g,
                    &x,
                    #[inline(always)]
                    |g, x| g * slope32(x),
                )),
                (false, DType::Float64, DType::Float64) => Some(zip_map::<f64, f64, f64>(
                    g,
                    &x,
                    #[inline(always)]
                    |g, x| g * slope64(x),
                )),
                _ => None,
            };
            match fused {
                Some(d) => Ok(grads![Some(d?)]),
                None => Ok(grads![Some(mul(g, &slope_ops(&x)?)?)]),
            }
        },
    );
    Ok(out)
}

/// `softplus(x, beta, threshold)`: `log(1 + exp(beta x)) / beta`, linear
/// above the threshold.
pub fn softplus(a: &Tensor, beta: f64, threshold: f64) -> Result<Tensor> {
    activation(
        a,
        "SoftplusBackward0",
        per_float!(T => move |x: T| {
            let bx = x * beta as T;
            if bx > threshold as T {
                x
            } else {
                // ln(1 + e^bx) = max(bx, 0) + ln(1 + e^-|bx|), whose
                // argument stays within [0, 1].
                let positive = if bx > 0.0 { bx } else { 0.0 };
                (positive + RealFloat::ln_1p_unit(Float::exp(-bx.abs()))) / beta as T
            }
        }),
        per_float!(T => move |x: T| {
            let bx = x * beta as T;
            if bx > threshold as T {
                1.0
            } else {
                1.0 / (1.0 + Float::exp(-bx))
            }
        }),
        move |a| {
            let bx = mul(a, &scalar(beta))?;
            let s = sigmoid(&bx)?;
            where_(&gt(&bx, &scalar(threshold))?, &ones_like(&s)?, &s)
        },
    )
}

/// `gelu(x)`, exact (`approximate="none"`) or with the tanh approximation.
pub fn gelu(a: &Tensor, tanh_approx: bool) -> Result<Tensor> {
    const K: f64 = 0.797_884_560_802_865_4; // sqrt(2 / pi)
    const C: f64 = 0.044715;
    const SQRT_HALF: f64 = std::f64::consts::FRAC_1_SQRT_2;
    // The standard normal density at 0, 1 / sqrt(2 pi).
    const PDF0: f64 = 0.398_942_280_401_432_7;
    activation(
        a,
        "GeluBackward0",
        per_float!(T => move |x: T| {
            if tanh_approx {
                0.5 * x * (1.0 + Float::tanh(K as T * (x + C as T * x * x * x)))
            } else {
                0.5 * x * (1.0 + RealFloat::erf(x * SQRT_HALF as T))
            }
        }),
        per_float!(T => move |x: T| {
            if tanh_approx {
                let t = Float::tanh(K as T * (x + C as T * x * x * x));
                let inner_slope = K as T * (1.0 + 3.0 * C as T * x * x);
                0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * inner_slope
            } else {
                let cdf = 0.5 * (1.0 + RealFloat::erf(x * SQRT_HALF as T));
                cdf + x * PDF0 as T * Float::exp(-0.5 * x * x)
            }
        }),
        move |a| {
            let half = scalar(0.5);
            if tanh_approx {
                let x2 = mul(a, a)?;
                let inner = mul(&mul(a, &add(&one(), &mul(&x2, &scalar(C))?)?)?, &scalar(K))?;
                let t = tanh(&inner)?;
                let dinner = mul(&add(&one(), &mul(&x2, &scalar(3.0 * C))?)?, &scalar(K))?;
                let left = mul(&add(&one(), &t)?, &half)?;
                let right = mul(
                    &mul(&mul(a, &half)?, &sub(&one(), &mul(&t, &t)?)?)?,
                    &dinner,
                )?;
                add(&left, &right)
            } else {
                let cdf = mul(&add(&erf(&mul(a, &scalar(SQRT_HALF))?)?, &one())?, &half)?;
                let pdf = mul(&exp(&mul(&mul(a, a)?, &scalar(-0.5))?)?, &scalar(PDF0))?;
                add(&cdf, &mul(a, &pdf)?)
            }
        },
    )
}

/// `silu(x) = x * sigmoid(x)`.
pub fn silu(a: &Tensor) -> Result<Tensor> {
    activation(
        a,
        "SiluBackward0",
        per_float!(T => |x: T| x / (1.0 + Float::exp(-x))),
        per_float!(T => |x: T| {
            let s = 1.0 / (1.0 + Float::exp(-x));
            s * (1.0 + x * (1.0 - s))
        }),
        |a| {
            let s = sigmoid(a)?;
            mul(&s, &add(&one(), &mul(a, &sub(&one(), &s)?)?)?)
        },
    )
}

/// `leaky_relu(x, negative_slope)`.
pub fn leaky_relu(a: &Tensor, slope: f64) -> Result<Tensor> {
    activation(
        a,
        "LeakyReluBackward0",
        per_float!(T => move |x: T| if x > 0.0 { x } else { x * slope as T }),
        per_float!(T => move |x: T| if x > 0.0 { 1.0 } else { slope as T }),
        move |a| {
            let d = ones_like(a)?;
            where_(&gt(a, &scalar(0.0))?, &d, &mul(&d, &scalar(slope))?)
        },
    )
}

/// `elu(x, alpha)`: `alpha * (exp(x) - 1)` for negative x.
pub fn elu(a: &Tensor, alpha: f64) -> Result<Tensor> {
    activation(
        a,
        "EluBackward0",
        per_float!(T => move |x: T| if x > 0.0 { x } else { alpha as T * x.exp_m1() }),
        // NaN takes the linear side's slope, as in PyTorch.
        per_float!(T => move |x: T| if x <= 0.0 { alpha as T * Float::exp(x) } else { 1.0 }),
        move |a| {
            let neg_part = mul(&exp(a)?, &scalar(alpha))?;
            where_(&gt(a, &scalar(0.0))?, &ones_like(a)?, &neg_part)
        },
    )
}
