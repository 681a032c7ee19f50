//! Binary arithmetic with broadcasting and type promotion. Gradients may
//! come back in the broadcast shape and result dtype: the engine sums and
//! casts them to each input's shape and dtype.

// Generic kernels are instantiated for `bool` too, where `x < y` is intended.
#![allow(clippy::bool_comparison)]

use super::copy::try_cast;
use super::elementwise::{map, update, zip3_map_pair, zip_map};
use super::num::{Arith, Float, Real, RealFloat};
use super::result_type;
use super::unary::{conj, neg, scalar, where_, zeros_like};
use crate::autograd::{needs_input_grad, record, SavedTensor};
use crate::tensor::{DType, Scalar, Tensor};
use crate::{bail, grads, with_dtype, with_float, with_real, with_real_float, Result};
use num_complex::Complex64;

/// Runs `$f(x, y)` elementwise with both operands cast to `$dtype`, for
/// every dtype (`$with` picks which dtypes the op supports).
macro_rules! kernel {
    ($with:ident, $a:expr, $b:expr, $dtype:expr, |$x:ident, $y:ident| $e:expr) => {{
        let (a, b) = (try_cast($a, $dtype)?, try_cast($b, $dtype)?);
        $with!($dtype, T => zip_map::<T, T, T>(&a, &b, |$x: T, $y: T| $e))
    }};
    ($with:ident, $a:expr, $b:expr, $dtype:expr, |$x:ident, $y:ident| $e:expr, $err:expr) => {{
        let (a, b) = (try_cast($a, $dtype)?, try_cast($b, $dtype)?);
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

/// PyTorch's checks of the `alpha` of `add`/`sub` against the result dtype.
fn check_alpha(a: &Tensor, b: &Tensor, alpha: Scalar) -> Result<()> {
    let dtype = result_type(&[a, b]);
    if matches!(alpha, Scalar::Bool(_)) && dtype != DType::Bool {
        bail!(Runtime, "Boolean alpha only supported for Boolean results.");
    }
    if dtype.is_integral(true) && matches!(alpha, Scalar::Float(_) | Scalar::Complex(_)) {
        bail!(
            Runtime,
            "For integral input tensors, argument alpha must not be a floating point number."
        );
    }
    if !dtype.is_complex() && matches!(alpha, Scalar::Complex(_)) {
        bail!(
            Runtime,
            "For non-complex input tensors, argument alpha must not be a complex number."
        );
    }
    Ok(())
}

/// `a + alpha * b` (PyTorch's `add(other, alpha=...)`).
pub fn add_scaled(a: &Tensor, b: &Tensor, alpha: Scalar) -> Result<Tensor> {
    check_alpha(a, b, alpha)?;
    if alpha == Scalar::Int(1) || alpha == Scalar::Float(1.0) {
        return add(a, b);
    }
    add(a, &scaled(b, alpha)?)
}

/// `alpha * b`; a Python number stays one, so that it still yields to
/// tensors in type promotion (`int32 + 3 * 2` is `int32`).
fn scaled(b: &Tensor, alpha: Scalar) -> Result<Tensor> {
    let product = mul(b, &Tensor::wrapped_number(alpha))?;
    match b.is_wrapped_number() {
        true => Ok(Tensor::wrapped_number(product.item()?)),
        false => Ok(product),
    }
}

/// `a - alpha * b` (PyTorch's `sub(other, alpha=...)`).
pub fn sub_scaled(a: &Tensor, b: &Tensor, alpha: Scalar) -> Result<Tensor> {
    check_sub(a, b)?;
    check_alpha(a, b, alpha)?;
    if alpha == Scalar::Int(1) || alpha == Scalar::Float(1.0) {
        return sub(a, b);
    }
    sub(a, &scaled(b, alpha)?)
}

/// PyTorch refuses a bool operand of `-`, even one a number would promote.
pub(crate) fn check_sub(a: &Tensor, b: &Tensor) -> Result<()> {
    match (a.dtype() == DType::Bool, b.dtype() == DType::Bool) {
        (true, true) => bail!(
            Runtime,
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead."
        ),
        (true, false) | (false, true) => bail!(
            Runtime,
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        ),
        (false, false) => Ok(()),
    }
}

pub fn sub(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    check_sub(a, b)?;
    let dtype = result_type(&[a, b]);
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
    let (ra, rb) = (needs_input_grad(a), needs_input_grad(b));
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
            let b = sb.as_ref().map(|b| b.unpack(ctx)).transpose()?;
            let a = sa.as_ref().map(|a| a.unpack(ctx)).transpose()?;
            if let (Some(a), Some(b), false) = (&a, &b, ctx.create_graph) {
                if let Some((ga, gb)) = fused_product_grads(g, a, b)? {
                    return Ok(grads![Some(ga), Some(gb)]);
                }
            }
            let grad_times_conj = |t: Tensor| mul(g, &conj(&t)?);
            let ga = b.map(grad_times_conj).transpose()?;
            let gb = a.map(grad_times_conj).transpose()?;
            Ok(grads![ga, gb])
        },
    );
    Ok(out)
}

/// Both gradients of a real product `a * b` in one pass that reads `g`
/// once, when `g`, `a` and `b` are contiguous in one shape and dtype.
fn fused_product_grads(g: &Tensor, a: &Tensor, b: &Tensor) -> Result<Option<(Tensor, Tensor)>> {
    if a.dtype() != g.dtype() || b.dtype() != g.dtype() {
        return Ok(None);
    }
    with_real_float!(g.dtype(), T => zip3_map_pair::<T>(g, b, a, |g: T, b: T, a: T| (g.mul(b), g.mul(a))), Ok(None))
}

/// True division: integer operands divide as floats.
pub fn div(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let mut dtype = result_type(&[a, b]);
    if !dtype.is_differentiable() {
        dtype = DType::default_float();
    }
    let out = kernel!(with_dtype, a, b, dtype, |x, y| x.div(y))?;
    let (ra, rb) = (needs_input_grad(a), needs_input_grad(b));
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
    if dtype == DType::Bool {
        bail!(NotImplemented, "\"pow\" not implemented for 'Bool'");
    }
    let out = match dtype {
        d if d.is_integral(false) => {
            // Narrower integers wrap as int64 does, modulo their width.
            let (a, b) = (as_int64(a, d)?, as_int64(b, d)?);
            try_cast(&zip_map::<i64, i64, i64>(&a, &b, integer_power)?, dtype)?
        }
        _ => kernel!(with_float, a, b, dtype, |x, y| x.pow_el(y), unreachable!())?,
    };
    let (ra, rb) = (needs_input_grad(a), needs_input_grad(b));
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
                    &super::unary::zero_of(&d),
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
                        &ge(&super::complex::real(&b)?, &zero)?,
                    )?;
                    let d = super::unary::where_(&mask, &super::unary::zero_of(&d), &d)?;
                    Some(mul(g, &conj(&d)?)?)
                }
                None => None,
            };
            Ok(grads![ga, gb])
        },
    );
    Ok(out)
}

/// `x ** e` in integers, as PyTorch computes it: a negative exponent
/// gives the integer part of `1 / x ** -e` (0 unless `x` is 1 or -1), and
/// only a Python number as the exponent makes it an error.
fn integer_power(x: i64, e: i64) -> i64 {
    match (e >= 0, x) {
        (true, _) => x.wrapping_pow(e as u32),
        (false, 1) => 1,
        (false, -1) if e % 2 != 0 => -1,
        (false, -1) => 1,
        (false, _) => 0,
    }
}

/// `a ** exponent` for a Python number exponent (`PowBackward0`).
pub fn pow_scalar(a: &Tensor, exponent: Scalar) -> Result<Tensor> {
    let e = Tensor::wrapped_number(exponent);
    let dtype = result_type(&[a, &e]);
    if exponent == Scalar::Int(2) || exponent == Scalar::Float(2.0) {
        let out = kernel!(with_dtype, a, a, dtype, |x, y| x.mul(y))?;
        return finish_pow_scalar(a, out, exponent);
    }
    if dtype == DType::Bool {
        // Only a bool exponent keeps a bool result: `x ** True` is `x`, `x ** False` is all true.
        let e = exponent.as_bool();
        let out = map::<bool, bool>(&try_cast(a, DType::Bool)?, move |x| x || !e)?;
        return finish_pow_scalar(a, out, exponent);
    }
    if dtype.is_integral(false) {
        if exponent.as_i64() < 0 {
            bail!(
                Runtime,
                "Integers to negative integer powers are not allowed."
            );
        }
        let k = exponent.as_i64() as u32;
        let powers = super::elementwise::map::<i64, i64>(&try_cast(a, DType::Int64)?, move |x| {
            x.wrapping_pow(k)
        })?;
        let out = try_cast(&powers, dtype)?;
        return finish_pow_scalar(a, out, exponent);
    }
    let out = match (dtype, exponent) {
        (DType::Float32 | DType::Float64, Scalar::Int(_) | Scalar::Float(_)) => {
            let (x, e) = (try_cast(a, dtype)?, exponent.as_f64());
            with_real_float!(dtype, T => super::elementwise::map::<T, T>(&x, move |x| real_power(x, e))?, unreachable!("a real float"))
        }
        _ => pow(&a.detach(), &e)?,
    };
    finish_pow_scalar(a, out, exponent)
}

/// `x` to the fixed real power `e`: the common exponents by
/// multiplications, a square root or a reciprocal (as PyTorch computes
/// them, and several times faster than `powf`), others by `powf`.
#[inline(always)]
fn real_power<T: RealFloat>(x: T, e: f64) -> T {
    if e == 0.0 {
        T::one()
    } else if e == 1.0 {
        x
    } else if e == 2.0 {
        x.mul(x)
    } else if e == 3.0 {
        x.mul(x).mul(x)
    } else if e == 0.5 {
        x.sqrt()
    } else if e == -0.5 {
        T::one().div(x.sqrt())
    } else if e == -1.0 {
        T::one().div(x)
    } else if e == -2.0 {
        T::one().div(x.mul(x))
    } else {
        x.pow_el(T::from_f64(e))
    }
}

fn finish_pow_scalar(a: &Tensor, out: Tensor, exponent: Scalar) -> Result<Tensor> {
    record(
        "PowBackward0",
        &[a],
        &out,
        || SavedTensor::input(a),
        move |ctx, sa, g| {
            if exponent.as_complex() == num_complex::Complex64::new(0.0, 0.0) {
                return Ok(grads![Some(super::unary::zeros_like(g)?)]);
            }
            let a = sa.unpack(ctx)?;
            let real = !matches!(exponent, Scalar::Complex(_));
            if !ctx.create_graph
                && real
                && g.dtype() == a.dtype()
                && matches!(a.dtype(), DType::Float32 | DType::Float64)
            {
                // g * e * a^(e-1) in one pass.
                let e = exponent.as_f64();
                let d = with_real_float!(a.dtype(), T => zip_map::<T, T, T>(g, &a, move |g, x| {
                    g.mul(T::from_f64(e).mul(real_power(x, e - 1.0)))
                })?, unreachable!("a real float"));
                return Ok(grads![Some(d)]);
            }
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
            // Each side takes the gradient unless it lost, and half of it
            // at a tie, as PyTorch does; where a NaN meets anything, neither
            // lost, so both take all of it.
            let (a, b) = (sa.unpack(ctx)?, sb.unpack(ctx)?);
            let (a_lost, b_lost) = match is_max {
                true => (lt(&a, &b)?, gt(&a, &b)?),
                false => (gt(&a, &b)?, lt(&a, &b)?),
            };
            let half = Tensor::wrapped_number(Scalar::Float(0.5));
            let tie_half = mul(&try_cast(&eq(&a, &b)?, g.dtype())?, &half)?;
            let one = Tensor::wrapped_number(Scalar::Int(1));
            let weight = |lost: &Tensor| -> Result<Tensor> {
                sub(&sub(&one, &try_cast(lost, g.dtype())?)?, &tie_half)
            };
            Ok(grads![
                Some(mul(g, &weight(&a_lost)?)?),
                Some(mul(g, &weight(&b_lost)?)?)
            ])
        },
    );
    Ok(out)
}

macro_rules! comparison {
    ($($(#[$doc:meta])* $name:ident => |$x:ident, $y:ident| $e:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name(a: &Tensor, b: &Tensor) -> Result<Tensor> {
            let dtype = result_type(&[a, b]);
            let (a, b) = (try_cast(a, dtype)?, try_cast(b, dtype)?);
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
    let (a, b) = (try_cast(a, dtype)?, try_cast(b, dtype)?);
    with_dtype!(dtype, T => zip_map::<T, T, bool>(&a, &b, |x: T, y: T| x == y))
}

pub fn ne(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let dtype = result_type(&[a, b]);
    let (a, b) = (try_cast(a, dtype)?, try_cast(b, dtype)?);
    with_dtype!(dtype, T => zip_map::<T, T, bool>(&a, &b, |x: T, y: T| x != y))
}

/// `dst += src` in place without recording history: gradient accumulation.
pub fn add_into(dst: &Tensor, src: &Tensor) -> Result<()> {
    let src = try_cast(src, dst.dtype())?;
    with_dtype!(dst.dtype(), T => update::<T, T>(dst, &src, |d, s| d.add(s)))
}

/// Float-only helper shared by ops that need `Float` bounds.
pub(crate) fn float_dtype_error(op: &str, dtype: DType) -> crate::Error {
    crate::Error::NotImplemented(format!(
        "\"{op}\" not implemented for '{}'",
        DType::scalar_type_name(dtype)
    ))
}

/// `$f(x, y)` over int64 (`$int`) or real floating (`$float`) operands in
/// their result dtype; other dtypes are an error naming `$kernel`.
macro_rules! real_kernel {
    ($a:expr, $b:expr, $kernel:literal, int |$xi:ident, $yi:ident| $int:expr, float |$x:ident, $y:ident| $float:expr) => {{
        let dtype = result_type(&[$a, $b]);
        // Integers compute in int64; narrower ones are cast back, which
        // wraps exactly as their own arithmetic would.
        let (ca, cb) = match dtype.is_integral(false) {
            true => (as_int64($a, dtype)?, as_int64($b, dtype)?),
            false => (try_cast($a, dtype)?, try_cast($b, dtype)?),
        };
        match dtype {
            DType::Int64 => zip_map::<i64, i64, i64>(&ca, &cb, |$xi, $yi| $int)?,
            d if d.is_integral(false) => try_cast(&zip_map::<i64, i64, i64>(&ca, &cb, |$xi, $yi| $int)?, d)?,
            d => crate::with_real_float!(d, T => zip_map::<T, T, T>(&ca, &cb, |$x: T, $y: T| $float)?,
                return Err(float_dtype_error($kernel, d))),
        }
    }};
}

/// `t` in the integer dtype `dtype`, widened to int64: a Python number
/// wraps into `dtype` first, as PyTorch converts it (`uint8 // -2` divides by 254).
fn as_int64(t: &Tensor, dtype: DType) -> Result<Tensor> {
    try_cast(&try_cast(t, dtype)?, DType::Int64)
}

fn check_int_divisor(a: &Tensor, b: &Tensor) -> Result<()> {
    // An empty result divides by nothing, whatever `b` holds.
    let empty = crate::tensor::layout::broadcast_shapes(a.shape(), b.shape())
        .is_ok_and(|shape| crate::tensor::layout::numel(&shape) == 0);
    let dtype = result_type(&[a, b]);
    if !empty && dtype.is_integral(false) && as_int64(b, dtype)?.to_vec::<i64>().contains(&0) {
        bail!(Runtime, "ZeroDivisionError");
    }
    Ok(())
}

/// Python's floor division on floats, as PyTorch computes it.
fn floor_div_float<T: num_traits_float::FloatLike>(a: T, b: T) -> T {
    if b == T::ZERO {
        return a / b;
    }
    let m = a % b;
    let mut div = (a - m) / b;
    if m != T::ZERO && (b < T::ZERO) != (m < T::ZERO) {
        div = div - T::ONE;
    }
    if div == T::ZERO {
        return T::ZERO.copysign(a / b);
    }
    let f = div.floor();
    if div - f > T::HALF {
        f + T::ONE
    } else {
        f
    }
}

/// The few float operations the float kernels here need, for f32 and f64.
mod num_traits_float {
    pub trait FloatLike:
        Copy
        + PartialOrd
        + std::ops::Add<Output = Self>
        + std::ops::Sub<Output = Self>
        + std::ops::Div<Output = Self>
        + std::ops::Rem<Output = Self>
    {
        const ZERO: Self;
        const ONE: Self;
        const HALF: Self;
        fn floor(self) -> Self;
        fn copysign(self, s: Self) -> Self;
    }
    macro_rules! impl_float_like {
        ($($t:ty),*) => {$(
            impl FloatLike for $t {
                const ZERO: Self = 0.0;
                const ONE: Self = 1.0;
                const HALF: Self = 0.5;
                fn floor(self) -> Self { <$t>::floor(self) }
                fn copysign(self, s: Self) -> Self { <$t>::copysign(self, s) }
            }
        )*};
    }
    impl_float_like!(f32, f64);
}

/// `a // b`: floor division (no gradient, as in PyTorch).
pub fn floor_divide(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    check_int_divisor(a, b)?;
    Ok(real_kernel!(
        a,
        b,
        "div_floor_cpu",
        int | x,
        y | {
            let q = x.wrapping_div(y);
            if (x % y != 0) && ((x < 0) != (y < 0)) {
                q - 1
            } else {
                q
            }
        },
        float | x,
        y | floor_div_float(x, y)
    ))
}

/// `a % b` with the sign of the divisor (Python's modulo).
pub fn remainder(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    check_int_divisor(a, b)?;
    let out = real_kernel!(
        a,
        b,
        "remainder_cpu",
        int | x,
        y | {
            let m = x.wrapping_rem(y);
            if m != 0 && ((m < 0) != (y < 0)) {
                m + y
            } else {
                m
            }
        },
        float | x,
        y | {
            let m = x % y;
            if m != 0.0 && ((m < 0.0) != (y < 0.0)) {
                m + y
            } else {
                m
            }
        }
    );
    let name = if b.is_wrapped_number() {
        "RemainderBackward0"
    } else {
        "RemainderBackward1"
    };
    record(
        name,
        &[a, b],
        &out,
        || (SavedTensor::input(a), SavedTensor::input(b)),
        |ctx, (sa, sb), g| {
            let (a, b) = (sa.unpack(ctx)?, sb.unpack(ctx)?);
            let gb = neg(&mul(g, &floor_divide(&a, &b)?)?)?;
            Ok(grads![Some(g.clone()), Some(gb)])
        },
    );
    Ok(out)
}

/// `fmod(a, b)`: the remainder with the sign of the dividend (C's fmod).
pub fn fmod(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    check_int_divisor(a, b)?;
    let out = real_kernel!(
        a,
        b,
        "fmod_cpu",
        int | x,
        y | x.wrapping_rem(y),
        float | x,
        y | x % y
    );
    let name = if b.is_wrapped_number() {
        "FmodBackward0"
    } else {
        "FmodBackward1"
    };
    record(
        name,
        &[a, b],
        &out,
        || (SavedTensor::input(a), SavedTensor::input(b)),
        |ctx, (sa, sb), g| {
            let (a, b) = (sa.unpack(ctx)?, sb.unpack(ctx)?);
            let gb = neg(&mul(g, &super::unary::trunc(&div(&a, &b)?)?)?)?;
            Ok(grads![Some(g.clone()), Some(gb)])
        },
    );
    Ok(out)
}

/// The operands in a floating result dtype (integers compute in the default float dtype).
pub(super) fn floating_pair(a: &Tensor, b: &Tensor) -> Result<(Tensor, Tensor, DType)> {
    let mut dtype = result_type(&[a, b]);
    if !dtype.is_differentiable() {
        dtype = DType::default_float();
    }
    Ok((try_cast(a, dtype)?, try_cast(b, dtype)?, dtype))
}

pub fn atan2(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (ca, cb, dtype) = floating_pair(a, b)?;
    let out = crate::with_real_float!(dtype, T => zip_map::<T, T, T>(&ca, &cb, |y: T, x: T| y.atan2(x))?,
        return Err(float_dtype_error("atan2_cpu", dtype)));
    record(
        "Atan2Backward0",
        &[a, b],
        &out,
        || (SavedTensor::input(a), SavedTensor::input(b)),
        |ctx, (sa, sb), g| {
            let (a, b) = (sa.unpack(ctx)?, sb.unpack(ctx)?);
            let denom = add(&mul(&a, &a)?, &mul(&b, &b)?)?;
            // PyTorch zeroes the reciprocal where it is infinite, so the
            // gradient at (0, 0) is 0, not NaN.
            let recip = div(&scalar(1.0), &denom)?;
            let infinite = with_real_float!(recip.dtype(), T => map::<T, bool>(&recip, |r: T| r.is_infinite())?,
                unreachable!("atan2 is real"));
            let recip = where_(&infinite, &zeros_like(&recip)?, &recip)?;
            let ga = mul(&mul(g, &b)?, &recip)?;
            let gb = mul(&mul(g, &neg(&a)?)?, &recip)?;
            Ok(grads![Some(ga), Some(gb)])
        },
    );
    Ok(out)
}

pub fn hypot(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (ca, cb, dtype) = floating_pair(a, b)?;
    let out = crate::with_real_float!(dtype, T => zip_map::<T, T, T>(&ca, &cb, |x: T, y: T| x.hypot(y))?,
        return Err(float_dtype_error("hypot_cpu", dtype)));
    record(
        "HypotBackward0",
        &[a, b],
        &out,
        || {
            (
                SavedTensor::input(a),
                SavedTensor::input(b),
                SavedTensor::output(&out, 0),
            )
        },
        |ctx, (sa, sb, so), g| {
            let (a, b, o) = (sa.unpack(ctx)?, sb.unpack(ctx)?, so.unpack(ctx)?);
            Ok(grads![
                Some(mul(g, &div(&a, &o)?)?),
                Some(mul(g, &div(&b, &o)?)?)
            ])
        },
    );
    Ok(out)
}

/// `lerp(start, end, weight)`: `start + weight * (end - start)`, computed
/// from the nearer end as PyTorch does.
pub fn lerp(start: &Tensor, end: &Tensor, weight: &Tensor) -> Result<Tensor> {
    let dtype = result_type(&[start, end]);
    if !dtype.is_floating_point() {
        return Err(float_dtype_error("lerp_kernel_scalar", dtype));
    }
    let (s, e, w) = (
        try_cast(start, dtype)?,
        try_cast(end, dtype)?,
        try_cast(weight, dtype)?,
    );
    let out = crate::with_real_float!(dtype, T => super::elementwise::zip3_map::<T, T, T, T>(&s, &e, &w, |s: T, e: T, w: T| {
        // Fused multiply-adds, rounding as PyTorch's kernels do.
        if w.abs() < 0.5 { w.mul_add(e - s, s) } else { (s - e).mul_add(1.0 - w, e) }
    })?, unreachable!());
    let scalar_weight = weight.is_wrapped_number();
    let name = if scalar_weight {
        "LerpBackward0"
    } else {
        "LerpBackward1"
    };
    let inputs: &[&Tensor] = if scalar_weight {
        &[start, end]
    } else {
        &[start, end, weight]
    };
    record(
        name,
        inputs,
        &out,
        || {
            (
                SavedTensor::input(start),
                SavedTensor::input(end),
                SavedTensor::input(weight),
            )
        },
        move |ctx, (ss, se, sw), g| {
            let w = sw.unpack(ctx)?;
            let gs = mul(g, &sub(&Tensor::wrapped_number(Scalar::Int(1)), &w)?)?;
            let ge = mul(g, &w)?;
            if scalar_weight {
                return Ok(grads![Some(gs), Some(ge)]);
            }
            let gw = mul(g, &sub(&se.unpack(ctx)?, &ss.unpack(ctx)?)?)?;
            Ok(grads![Some(gs), Some(ge), Some(gw)])
        },
    );
    Ok(out)
}

/// `a + value * b * c` (`AddcmulBackward0`).
pub fn addcmul(a: &Tensor, b: &Tensor, c: &Tensor, value: Scalar) -> Result<Tensor> {
    // `value` takes the result dtype, as PyTorch converts it: truncated for integers.
    let value = value.checked_to(result_type(&[a, b, c]))?;
    let v = Tensor::wrapped_number(value);
    let out = add(&a.detach(), &mul(&mul(&v, &b.detach())?, &c.detach())?)?;
    record(
        "AddcmulBackward0",
        &[a, b, c],
        &out,
        || (SavedTensor::input(b), SavedTensor::input(c)),
        move |ctx, (sb, sc), g| {
            let v = Tensor::wrapped_number(value);
            let (b, c) = (sb.unpack(ctx)?, sc.unpack(ctx)?);
            Ok(grads![
                Some(g.clone()),
                Some(mul(&mul(g, &c)?, &v)?),
                Some(mul(&mul(g, &b)?, &v)?)
            ])
        },
    );
    Ok(out)
}

/// `a + value * b / c` (`AddcdivBackward0`).
pub fn addcdiv(a: &Tensor, b: &Tensor, c: &Tensor, value: Scalar) -> Result<Tensor> {
    if result_type(&[b, c]).is_integral(true) {
        bail!(
            Runtime,
            "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes."
        );
    }
    let v = Tensor::wrapped_number(value);
    let out = add(&a.detach(), &mul(&v, &div(&b.detach(), &c.detach())?)?)?;
    record(
        "AddcdivBackward0",
        &[a, b, c],
        &out,
        || (SavedTensor::input(b), SavedTensor::input(c)),
        move |ctx, (sb, sc), g| {
            let v = Tensor::wrapped_number(value);
            let (b, c) = (sb.unpack(ctx)?, sc.unpack(ctx)?);
            let gb = div(&mul(g, &v)?, &c)?;
            let gc = neg(&div(&mul(&mul(g, &v)?, &b)?, &mul(&c, &c)?)?)?;
            Ok(grads![Some(g.clone()), Some(gb), Some(gc)])
        },
    );
    Ok(out)
}

macro_rules! bitwise {
    ($($name:ident $kernel:literal => $op:tt;)*) => {$(
        /// Bitwise on integers, logical on bools.
        pub fn $name(a: &Tensor, b: &Tensor) -> Result<Tensor> {
            let dtype = result_type(&[a, b]);
            let (ca, cb) = (try_cast(a, dtype)?, try_cast(b, dtype)?);
            match dtype {
                DType::Bool => zip_map::<bool, bool, bool>(&ca, &cb, |x, y| x $op y),
                d => crate::with_integer!(d, T => zip_map::<T, T, T>(&ca, &cb, |x, y| x $op y),
                    Err(float_dtype_error($kernel, d))),
            }
        }
    )*};
}

bitwise! {
    bitwise_and "bitwise_and_cpu" => &;
    bitwise_or "bitwise_or_cpu" => |;
    bitwise_xor "bitwise_xor_cpu" => ^;
}

/// Shifts with PyTorch's rules for counts outside `0..bits`, which Rust's
/// shifts leave undefined: a left shift gives 0 and a right shift the sign
/// fill (0, or -1 for a negative signed value).
trait Shift: Copy {
    fn shift_left(self, by: Self) -> Self;
    fn shift_right(self, by: Self) -> Self;
}

macro_rules! shift {
    ($($t:ty => $unsigned:ty),*) => {$(
        impl Shift for $t {
            fn shift_left(self, by: Self) -> Self {
                match u32::try_from(by) {
                    // Through the unsigned type: bits shifted past the top
                    // are dropped, as they are in PyTorch.
                    Ok(n) if n < <$t>::BITS => ((self as $unsigned) << n) as $t,
                    _ => 0,
                }
            }
            fn shift_right(self, by: Self) -> Self {
                match u32::try_from(by) {
                    Ok(n) if n < <$t>::BITS => self >> n,
                    // An unsigned type has no sign to fill with.
                    _ if <$t>::MIN == 0 => 0,
                    _ => self >> (<$t>::BITS - 1),
                }
            }
        }
    )*};
}

shift!(u8 => u8, i8 => u8, i16 => u16, i32 => u32, i64 => u64);

macro_rules! shifts {
    ($($name:ident $kernel:literal => $method:ident;)*) => {$(
        /// Bitwise shift of integers (`<<`, `>>`); other dtypes are an error.
        pub fn $name(a: &Tensor, b: &Tensor) -> Result<Tensor> {
            let dtype = result_type(&[a, b]);
            let (ca, cb) = (try_cast(a, dtype)?, try_cast(b, dtype)?);
            crate::with_integer!(dtype, T => zip_map::<T, T, T>(&ca, &cb, T::$method),
                Err(float_dtype_error($kernel, dtype)))
        }
    )*};
}

shifts! {
    bitwise_left_shift "lshift_cpu" => shift_left;
    bitwise_right_shift "rshift_cpu" => shift_right;
}

pub fn bitwise_not(a: &Tensor) -> Result<Tensor> {
    match a.dtype() {
        DType::Bool => Ok(super::elementwise::map::<bool, bool>(a, |x| !x)?),
        d => crate::with_integer!(d, T => Ok(super::elementwise::map::<T, T>(a, |x| !x)?),
            Err(float_dtype_error("bitwise_not_cpu", d))),
    }
}

/// `isclose`: `|a - b| <= atol + rtol * |b|`, equal infinities and, with
/// `equal_nan`, NaNs count as close.
pub fn isclose(a: &Tensor, b: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<Tensor> {
    if a.dtype() != b.dtype() {
        bail!(
            Runtime,
            "{} did not match {}",
            DType::scalar_type_name(a.dtype()),
            DType::scalar_type_name(b.dtype())
        );
    }
    if a.dtype().is_complex() {
        let (ca, cb) = (
            try_cast(a, DType::Complex128)?,
            try_cast(b, DType::Complex128)?,
        );
        return zip_map::<Complex64, Complex64, bool>(&ca, &cb, move |x, y| {
            if x == y {
                return true;
            }
            if x.is_nan() || y.is_nan() {
                return equal_nan && x.is_nan() && y.is_nan();
            }
            x.is_finite() && y.is_finite() && (x - y).norm() <= atol + rtol * y.norm()
        });
    }
    let (ca, cb) = (try_cast(a, DType::Float64)?, try_cast(b, DType::Float64)?);
    zip_map::<f64, f64, bool>(&ca, &cb, move |x, y| {
        if x == y {
            return true;
        }
        if x.is_nan() || y.is_nan() {
            return equal_nan && x.is_nan() && y.is_nan();
        }
        x.is_finite() && y.is_finite() && (x - y).abs() <= atol + rtol * y.abs()
    })
}

/// `equal(a, b)`: same shape and all elements equal.
pub fn equal(a: &Tensor, b: &Tensor) -> Result<bool> {
    if a.shape() != b.shape() {
        return Ok(false);
    }
    Ok(eq(a, b)?.to_vec::<bool>().iter().all(|&x| x))
}
