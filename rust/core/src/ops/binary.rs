//! Binary arithmetic with broadcasting and type promotion. Gradients may
//! come back in the broadcast shape and result dtype: the engine sums and
//! casts them to each input's shape and dtype.

use super::copy::cast;
use super::elementwise::{update, zip_map};
use super::num::{Arith, Float, Real};
use super::result_type;
use super::unary::{conj, neg};
use crate::autograd::{record, SavedTensor};
use crate::tensor::{DType, Scalar, Tensor};
use crate::{bail, grads, with_dtype, with_float, with_real, Result};

/// Runs `$f(x, y)` elementwise with both operands cast to `$dtype`, for
/// every dtype (`$with` picks which dtypes the op supports).
macro_rules! kernel {
    ($with:ident, $a:expr, $b:expr, $dtype:expr, |$x:ident, $y:ident| $e:expr) => {{
        let (a, b) = (cast($a, $dtype), cast($b, $dtype));
        $with!($dtype, T => zip_map::<T, T, T>(&a, &b, |$x: T, $y: T| $e))
    }};
    ($with:ident, $a:expr, $b:expr, $dtype:expr, |$x:ident, $y:ident| $e:expr, $err:expr) => {{
        let (a, b) = (cast($a, $dtype), cast($b, $dtype));
        $with!($dtype, T => zip_map::<T, T, T>(&a, &b, |$x: T, $y: T| $e), $err)
    }};
}

pub fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let out = kernel!(with_dtype, a, b, result_type(&[a, b]), |x, y| x.add(y))?;
    record(
        "AddBackward0",
        &[a, b],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(g.clone()), Some(g.clone())]),
    );
    Ok(out)
}

/// `a + alpha * b` (PyTorch's `add(other, alpha=...)`).
pub fn add_scaled(a: &Tensor, b: &Tensor, alpha: Scalar) -> Result<Tensor> {
    if alpha == Scalar::Int(1) || alpha == Scalar::Float(1.0) {
        return add(a, b);
    }
    add(a, &mul(b, &Tensor::wrapped_number(alpha))?)
}

pub fn sub(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let dtype = result_type(&[a, b]);
    if dtype == DType::Bool {
        bail!(
            Runtime,
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead."
        );
    }
    let out = kernel!(with_dtype, a, b, dtype, |x, y| x.sub(y))?;
    record(
        "SubBackward0",
        &[a, b],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(g.clone()), Some(neg(g)?)]),
    );
    Ok(out)
}

pub fn mul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let out = kernel!(with_dtype, a, b, result_type(&[a, b]), |x, y| x.mul(y))?;
    let (ra, rb) = (a.requires_grad(), b.requires_grad());
    record(
        "MulBackward0",
        &[a, b],
        &out,
        || {
            (
                rb.then(|| SavedTensor::input(a)),
                ra.then(|| SavedTensor::input(b)),
            )
        },
        |ctx, (sa, sb), g| {
            let ga = match sb {
                Some(b) => Some(mul(g, &conj(&b.unpack(ctx)?)?)?),
                None => None,
            };
            let gb = match sa {
                Some(a) => Some(mul(g, &conj(&a.unpack(ctx)?)?)?),
                None => None,
            };
            Ok(grads![ga, gb])
        },
    );
    Ok(out)
}

/// True division: integer operands divide as floats.
pub fn div(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let mut dtype = result_type(&[a, b]);
    if !dtype.is_differentiable() {
        dtype = DType::Float32;
    }
    let out = kernel!(with_dtype, a, b, dtype, |x, y| x.div(y))?;
    let (ra, rb) = (a.requires_grad(), b.requires_grad());
    record(
        "DivBackward0",
        &[a, b],
        &out,
        || (SavedTensor::input(b), rb.then(|| SavedTensor::input(a))),
        move |ctx, (sb, sa), g| {
            let b = sb.unpack(ctx)?;
            let ga = if ra { Some(div(g, &conj(&b)?)?) } else { None };
            let gb = match sa {
                // d(a/b)/db = -a / b^2
                Some(a) => {
                    let a = a.unpack(ctx)?;
                    Some(neg(&mul(g, &conj(&div(&div(&a, &b)?, &b)?)?)?)?)
                }
                None => None,
            };
            Ok(grads![ga, gb])
        },
    );
    Ok(out)
}

/// `a ** b`. Integer powers of integers stay integers.
pub fn pow(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let dtype = result_type(&[a, b]);
    let out = match dtype {
        DType::Int64 | DType::Bool => {
            let (a, b) = (cast(a, DType::Int64), cast(b, DType::Int64));
            if b.to_vec::<i64>().iter().any(|&e| e < 0) {
                bail!(
                    Runtime,
                    "Integers to negative integer powers are not allowed."
                );
            }
            cast(
                &zip_map::<i64, i64, i64>(&a, &b, |x, y| x.wrapping_pow(y as u32))?,
                dtype,
            )
        }
        _ => kernel!(with_float, a, b, dtype, |x, y| x.pow_el(y), unreachable!())?,
    };
    let (ra, rb) = (a.requires_grad(), b.requires_grad());
    // A Python number as the base (`2 ** t`) is PyTorch's PowBackward2.
    let name = if a.is_wrapped_number() {
        "PowBackward2"
    } else {
        "PowBackward1"
    };
    record(
        name,
        &[a, b],
        &out,
        || {
            (
                SavedTensor::input(a),
                SavedTensor::input(b),
                rb.then(|| SavedTensor::output(&out, 0)),
            )
        },
        move |ctx, (sa, sb, so), g| {
            let (a, b) = (sa.unpack(ctx)?, sb.unpack(ctx)?);
            // d(a^b)/da = b * a^(b-1); zero where b == 0 (also at a == 0).
            let ga = if ra {
                let one = Tensor::wrapped_number(Scalar::Int(1));
                let d = mul(&b, &pow(&a, &sub(&b, &one)?)?)?;
                let d = super::unary::where_(
                    &eq(&b, &Tensor::wrapped_number(Scalar::Int(0)))?,
                    &super::unary::zeros_like(&d),
                    &d,
                )?;
                Some(mul(g, &conj(&d)?)?)
            } else {
                None
            };
            // d(a^b)/db = a^b * log(a); zero where a == 0 and b >= 0.
            let gb = match so {
                Some(o) => {
                    let o = o.unpack(ctx)?;
                    let d = mul(&o, &super::unary::log(&a)?)?;
                    let zero = Tensor::wrapped_number(Scalar::Int(0));
                    let mask = super::unary::logical_and(
                        &eq(&a, &zero)?,
                        &ge(&super::unary::real(&b)?, &zero)?,
                    )?;
                    let d = super::unary::where_(&mask, &super::unary::zeros_like(&d), &d)?;
                    Some(mul(g, &conj(&d)?)?)
                }
                None => None,
            };
            Ok(grads![ga, gb])
        },
    );
    Ok(out)
}

/// `a ** exponent` for a Python number exponent (`PowBackward0`).
pub fn pow_scalar(a: &Tensor, exponent: Scalar) -> Result<Tensor> {
    let e = Tensor::wrapped_number(exponent);
    let dtype = result_type(&[a, &e]);
    if exponent == Scalar::Int(2) || exponent == Scalar::Float(2.0) {
        let out = kernel!(with_dtype, a, a, dtype, |x, y| x.mul(y))?;
        return finish_pow_scalar(a, out, exponent);
    }
    if dtype == DType::Int64 {
        if exponent.as_i64() < 0 {
            bail!(
                Runtime,
                "Integers to negative integer powers are not allowed."
            );
        }
        let k = exponent.as_i64() as u32;
        let out = super::elementwise::map::<i64, i64>(&cast(a, dtype), move |x| x.wrapping_pow(k));
        return finish_pow_scalar(a, out, exponent);
    }
    let out = pow(&a.detach(), &e)?;
    finish_pow_scalar(a, out, exponent)
}

fn finish_pow_scalar(a: &Tensor, out: Tensor, exponent: Scalar) -> Result<Tensor> {
    record(
        "PowBackward0",
        &[a],
        &out,
        || SavedTensor::input(a),
        move |ctx, sa, g| {
            if exponent.as_complex() == num_complex::Complex64::new(0.0, 0.0) {
                return Ok(grads![Some(super::unary::zeros_like(g))]);
            }
            let a = sa.unpack(ctx)?;
            let minus_one = match exponent {
                Scalar::Complex(c) => Scalar::Complex(c - 1.0),
                Scalar::Float(f) => Scalar::Float(f - 1.0),
                s => Scalar::Int(s.as_i64() - 1),
            };
            let d = mul(
                &pow_scalar(&a, minus_one)?,
                &Tensor::wrapped_number(exponent),
            )?;
            Ok(grads![Some(mul(g, &conj(&d)?)?)])
        },
    );
    Ok(out)
}

/// `a ** b` where `a` is a Python number (`2 ** t`).
pub fn rpow_scalar(base: Scalar, b: &Tensor) -> Result<Tensor> {
    pow(&Tensor::wrapped_number(base), b)
}

/// NaN-propagating elementwise maximum (`MaximumBackward0`).
pub fn maximum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    extremum(a, b, true)
}

pub fn minimum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    extremum(a, b, false)
}

fn extremum(a: &Tensor, b: &Tensor, is_max: bool) -> Result<Tensor> {
    let dtype = result_type(&[a, b]);
    let err = || -> Result<Tensor> {
        bail!(
            Runtime,
            "{} not implemented for complex tensors.",
            if is_max { "maximum" } else { "minimum" }
        )
    };
    let out = if is_max {
        kernel!(with_real, a, b, dtype, |x, y| x.max_nan(y), return err())?
    } else {
        kernel!(with_real, a, b, dtype, |x, y| x.min_nan(y), return err())?
    };
    let name = if is_max {
        "MaximumBackward0"
    } else {
        "MinimumBackward0"
    };
    record(
        name,
        &[a, b],
        &out,
        || (SavedTensor::input(a), SavedTensor::input(b)),
        move |ctx, (sa, sb), g| {
            // Ties split the gradient evenly, as PyTorch does.
            let (a, b) = (sa.unpack(ctx)?, sb.unpack(ctx)?);
            let half = Tensor::wrapped_number(Scalar::Float(0.5));
            let a_wins = if is_max { gt(&a, &b)? } else { lt(&a, &b)? };
            let tie = eq(&a, &b)?;
            let wa = add(
                &cast(&a_wins, g.dtype()),
                &mul(&cast(&tie, g.dtype()), &half)?,
            )?;
            let one = Tensor::wrapped_number(Scalar::Int(1));
            let wb = sub(&one, &wa)?;
            Ok(grads![Some(mul(g, &wa)?), Some(mul(g, &wb)?)])
        },
    );
    Ok(out)
}

macro_rules! comparison {
    ($($(#[$doc:meta])* $name:ident => |$x:ident, $y:ident| $e:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name(a: &Tensor, b: &Tensor) -> Result<Tensor> {
            let dtype = result_type(&[a, b]);
            let (a, b) = (cast(a, dtype), cast(b, dtype));
            with_real!(dtype, T => zip_map::<T, T, bool>(&a, &b, |$x: T, $y: T| $e),
                bail!(Runtime, "{} is not supported for complex tensors", stringify!($name)))
        }
    )*};
}

comparison! {
    lt => |x, y| x < y;
    le => |x, y| x <= y;
    gt => |x, y| x > y;
    ge => |x, y| x >= y;
}

/// `a == b` (complex compares both parts).
pub fn eq(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let dtype = result_type(&[a, b]);
    let (a, b) = (cast(a, dtype), cast(b, dtype));
    with_dtype!(dtype, T => zip_map::<T, T, bool>(&a, &b, |x: T, y: T| x == y))
}

pub fn ne(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let dtype = result_type(&[a, b]);
    let (a, b) = (cast(a, dtype), cast(b, dtype));
    with_dtype!(dtype, T => zip_map::<T, T, bool>(&a, &b, |x: T, y: T| x != y))
}

/// `dst += src` in place without recording history: gradient accumulation.
pub fn add_into(dst: &Tensor, src: &Tensor) -> Result<()> {
    let src = cast(src, dst.dtype());
    with_dtype!(dst.dtype(), T => update::<T, T>(dst, &src, |d, s| d.add(s)))
}

/// Float-only helper shared by ops that need `Float` bounds.
pub(crate) fn float_dtype_error(op: &str, dtype: DType) -> crate::Error {
    crate::Error::Runtime(format!(
        "\"{op}\" not implemented for '{}'",
        dtype_display(dtype)
    ))
}

/// The C++ type name PyTorch uses in "not implemented for" messages.
pub(crate) fn dtype_display(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "Bool",
        DType::Int64 => "Long",
        DType::Float32 => "Float",
        DType::Float64 => "Double",
        DType::Complex64 => "ComplexFloat",
        DType::Complex128 => "ComplexDouble",
    }
}
