//! Binary elementwise functions with rules of their own for NaN, infinity
//! and signs: `logaddexp`, `logaddexp2`, `fmax`, `fmin`, `copysign`,
//! `nextafter` and `heaviside`.

// Generic kernels are instantiated for `bool` too, where `x < y` is intended.
#![allow(clippy::bool_comparison)]

use super::binary::{add, div, eq, float_dtype_error, floating_pair, ge, le, mul, sub};
use super::copy::try_cast;
use super::elementwise::zip_map;
use super::num::{Arith, Real};
use super::result_type;
use super::unary::{exp, exp2, float_predicate, logical_or, one, where_, zero_of, zeros_like};
use crate::autograd::{record, SavedTensor};
use crate::tensor::{DType, Tensor};
use crate::{bail, grads, with_real, with_real_float, Result};

/// Both operands in their result dtype, which must be a real float.
fn real_float_operands(a: &Tensor, b: &Tensor, kernel: &str) -> Result<(Tensor, Tensor, DType)> {
    let dtype = result_type(&[a, b]);
    if !matches!(dtype, DType::Float32 | DType::Float64) {
        return Err(float_dtype_error(kernel, dtype));
    }
    Ok((try_cast(a, dtype)?, try_cast(b, dtype)?, dtype))
}

/// `log(exp(a) + exp(b))` without overflow (`base_two`: `log2(2^a + 2^b)`).
/// The gradient of `a` is `1 / (1 + base^(b - a))`, and of `b` the same
/// with the operands swapped.
fn log_add(a: &Tensor, b: &Tensor, base_two: bool) -> Result<Tensor> {
    let kernel = if base_two {
        "logaddexp2_cpu"
    } else {
        "logaddexp_cpu"
    };
    let (ca, cb, dtype) = real_float_operands(a, b, kernel)?;
    let out = with_real_float!(dtype, T => zip_map::<T, T, T>(&ca, &cb, move |x: T, y: T| {
        // Equal infinities: the difference below would be NaN.
        if x.is_infinite() && x == y {
            return x;
        }
        let larger = if x > y { x } else { y };
        let gap = -(x - y).abs();
        if base_two {
            larger + gap.exp2().ln_1p() / std::f64::consts::LN_2 as T
        } else {
            larger + gap.exp().ln_1p()
        }
    })?, unreachable!("checked to be a real float"));
    let name = if base_two {
        "Logaddexp2Backward0"
    } else {
        "LogaddexpBackward0"
    };
    record(
        name,
        &[a, b],
        &out,
        || (SavedTensor::input(a), SavedTensor::input(b)),
        move |ctx, (sa, sb), g| {
            let (a, b) = (sa.unpack(ctx)?, sb.unpack(ctx)?);
            let power = |d: &Tensor| if base_two { exp2(d) } else { exp(d) };
            let share = |x: &Tensor, y: &Tensor| -> Result<Tensor> {
                div(g, &add(&one(), &power(&sub(y, x)?)?)?)
            };
            Ok(grads![Some(share(&a, &b)?), Some(share(&b, &a)?)])
        },
    );
    Ok(out)
}

/// `log(exp(a) + exp(b))`, computed without overflow.
pub fn logaddexp(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    log_add(a, b, false)
}

/// `log2(2^a + 2^b)`, computed without overflow.
pub fn logaddexp2(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    log_add(a, b, true)
}

/// The larger (`is_max`) or smaller of `a` and `b`, ignoring a NaN when the
/// other is a number. The gradient goes to `a` where it was taken (ties and
/// a NaN `b` included), else to `b`.
fn nan_ignoring_extremum(a: &Tensor, b: &Tensor, is_max: bool) -> Result<Tensor> {
    let dtype = result_type(&[a, b]);
    let (ca, cb) = (try_cast(a, dtype)?, try_cast(b, dtype)?);
    let out = with_real!(dtype, T => zip_map::<T, T, T>(&ca, &cb, move |x: T, y: T| {
        let keep_x = y.is_nan_val() || (if is_max { x >= y } else { x <= y });
        if keep_x && !x.is_nan_val() { x } else { y }
    })?, bail!(Runtime, "{} not implemented for complex tensors.", if is_max { "fmax" } else { "fmin" }));
    let name = if is_max {
        "FmaxBackward0"
    } else {
        "FminBackward0"
    };
    record(
        name,
        &[a, b],
        &out,
        || (SavedTensor::input(a), SavedTensor::input(b)),
        move |ctx, (sa, sb), g| {
            let (a, b) = (sa.unpack(ctx)?, sb.unpack(ctx)?);
            let wins = if is_max { ge(&a, &b)? } else { le(&a, &b)? };
            let to_a = logical_or(&wins, &float_predicate(&b, f64::is_nan)?)?;
            let zero = zero_of(g);
            Ok(grads![
                Some(where_(&to_a, g, &zero)?),
                Some(where_(&to_a, &zero, g)?)
            ])
        },
    );
    Ok(out)
}

/// The larger of `a` and `b`; a NaN loses to a number.
pub fn fmax(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    nan_ignoring_extremum(a, b, true)
}

/// The smaller of `a` and `b`; a NaN loses to a number.
pub fn fmin(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    nan_ignoring_extremum(a, b, false)
}

/// `|a|` with the sign of `b`. The gradient of `a` is `copysign(a, b) / a`
/// (0 where `a` is 0); `b` gets none.
pub fn copysign(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (ca, cb, dtype) = floating_pair(a, b)?;
    let out = with_real_float!(dtype, T => zip_map::<T, T, T>(&ca, &cb, |x: T, y: T| x.copysign(y))?,
        return Err(float_dtype_error("copysign_cpu", dtype)));
    let name = if b.is_wrapped_number() {
        "CopysignBackward1"
    } else {
        "CopysignBackward0"
    };
    record(
        name,
        &[a, b],
        &out,
        || (SavedTensor::input(a), SavedTensor::output(&out, 0)),
        |ctx, (sa, so), g| {
            let (a, o) = (sa.unpack(ctx)?, so.unpack(ctx)?);
            let zero = zero_of(&o);
            let ratio = where_(&eq(&a, &zero)?, &zero, &div(&o, &a)?)?;
            Ok(grads![Some(mul(g, &ratio)?), Some(zeros_like(g)?)])
        },
    );
    Ok(out)
}

/// The next float after `a` towards `b`. `a`'s gradient passes through; `b`
/// gets none.
pub fn nextafter(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (ca, cb, dtype) = real_float_operands(a, b, "nextafter_cpu")?;
    let out = with_real_float!(dtype, T => zip_map::<T, T, T>(&ca, &cb, |x: T, y: T| {
        if x.is_nan() || y.is_nan() {
            T::NAN
        } else if x == y {
            y
        } else if x == 0.0 {
            T::from_bits(1).copysign(y)
        } else if (x < y) == (x > 0.0) {
            T::from_bits(x.to_bits() + 1)
        } else {
            T::from_bits(x.to_bits() - 1)
        }
    })?, unreachable!("checked to be a real float"));
    record(
        "NextafterBackward0",
        &[a, b],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(g.clone()), Some(zeros_like(g)?)]),
    );
    Ok(out)
}

/// The step function: 0 below zero, 1 above, `values` at zero (NaN gives
/// 0). Not differentiable.
pub fn heaviside(input: &Tensor, values: &Tensor) -> Result<Tensor> {
    if input.dtype() != values.dtype() {
        bail!(
            Runtime,
            "heaviside is not yet implemented for tensors with different dtypes."
        );
    }
    let dtype = input.dtype();
    let out = with_real!(dtype, T => zip_map::<T, T, T>(input, values, |x: T, v: T| {
        if x == T::zero() { v } else if x > T::zero() { T::one() } else { T::zero() }
    })?, bail!(Runtime, "heaviside is not yet implemented for complex tensors."));
    record(
        "NotImplemented",
        &[input, values],
        &out,
        || (),
        |_, _, _| bail!(Runtime, "derivative for aten::heaviside is not implemented"),
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(t: &Tensor) -> Vec<f64> {
        try_cast(t, DType::Float64).unwrap().to_vec::<f64>()
    }

    #[test]
    fn nextafter_steps_one_unit_towards_the_target() {
        let a = Tensor::from_vec(vec![1.0f64, 1.0, 0.0, -0.0, -2.0], &[5]).unwrap();
        let b = Tensor::from_vec(vec![2.0f64, 0.0, -1.0, 1.0, -2.0], &[5]).unwrap();
        let out = values(&nextafter(&a, &b).unwrap());
        assert_eq!(out[0], 1.0 + f64::EPSILON);
        assert_eq!(out[1], 1.0 - f64::EPSILON / 2.0);
        assert_eq!(out[2], -f64::from_bits(1));
        assert_eq!(out[3], f64::from_bits(1));
        assert_eq!(out[4], -2.0);
    }

    #[test]
    fn logaddexp_keeps_precision_and_infinities() {
        let a =
            Tensor::from_vec(vec![1000.0f64, f64::INFINITY, f64::NEG_INFINITY, 0.0], &[4]).unwrap();
        let b = Tensor::from_vec(
            vec![1000.0f64, f64::INFINITY, f64::NEG_INFINITY, -40.0],
            &[4],
        )
        .unwrap();
        let out = values(&logaddexp(&a, &b).unwrap());
        assert!((out[0] - (1000.0 + std::f64::consts::LN_2)).abs() < 1e-12);
        assert_eq!(out[1], f64::INFINITY);
        assert_eq!(out[2], f64::NEG_INFINITY);
        assert!((out[3] - (-40f64).exp().ln_1p()).abs() < 1e-30);
    }
}
