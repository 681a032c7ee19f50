//! Bessel-type functions: the modified Bessel functions `i0`, `i1` and their
//! exponentially scaled forms `i0e`, `i1e`, with their gradients, and the
//! `torch.special` forms PyTorch does not differentiate (`modified_bessel_i0`,
//! `modified_bessel_i1`, `spherical_bessel_j0`), whose outputs record no
//! gradient. The kernels compute in double precision (float32 rounds the
//! result).

use super::binary::{div, gt, mul, sub};
use super::special::real_map;
use super::unary::{abs, reciprocal, sgn, where_};
use crate::autograd::{record, SavedTensor};
use crate::tensor::{DType, Tensor};
use crate::{grads, Result, Scalar};
use std::f64::consts::PI;

/// Below this |x| the power series is used, above it the asymptotic
/// expansion (whose smallest term there is about e^(-2x), far below 2^-53).
const SERIES_LIMIT: f64 = 25.0;

/// Σₖ (x²/4)ᵏ / (k! (k+ν)!) for ν = 0 or 1: `I_ν(x) / (x/2)^ν`. Every
/// term is positive, so the sum is accurate to a few ulps.
fn bessel_i_series(nu: f64, x: f64) -> f64 {
    let q = 0.25 * x * x;
    let (mut term, mut sum, mut k) = (1.0, 1.0, 1.0);
    while k < 500.0 {
        term *= q / (k * (k + nu));
        sum += term;
        if term <= 1e-17 * sum {
            break;
        }
        k += 1.0;
    }
    sum
}

/// The asymptotic series Σₖ (-1)ᵏ aₖ(ν) x⁻ᵏ with I_ν(x) ≈ eˣ/√(2πx) times
/// it, for x >= [`SERIES_LIMIT`]; the terms are
/// aₖ(ν) = Πⱼ₌₁..ₖ (4ν² - (2j-1)²) / (k! 8ᵏ).
fn bessel_i_asymptotic(nu: f64, x: f64) -> f64 {
    let mu = 4.0 * nu * nu;
    let (mut term, mut sum) = (1.0f64, 1.0f64);
    for k in 1..200 {
        let odd = f64::from(2 * k - 1);
        let next = term * (odd * odd - mu) / (8.0 * f64::from(k) * x);
        if next.abs() >= term.abs() {
            break;
        }
        term = next;
        sum += term;
        if term.abs() <= 1e-17 * sum.abs() {
            break;
        }
    }
    sum
}

/// eˣ / √(2πx) · `s` without overflowing before the product does.
fn grow(x: f64, s: f64) -> f64 {
    let half = (0.5 * x).exp();
    half * (half * s / (2.0 * PI * x).sqrt())
}

/// I₀(x); NaN at ±inf, as PyTorch's kernel gives.
fn i0_value(x: f64) -> f64 {
    let a = x.abs();
    if !a.is_finite() {
        return f64::NAN;
    }
    if a < SERIES_LIMIT {
        bessel_i_series(0.0, a)
    } else {
        grow(a, bessel_i_asymptotic(0.0, a))
    }
}

/// e^(-|x|) I₀(x).
fn i0e_value(x: f64) -> f64 {
    let a = x.abs();
    if a.is_nan() {
        return f64::NAN;
    }
    if a < SERIES_LIMIT {
        bessel_i_series(0.0, a) * (-a).exp()
    } else {
        bessel_i_asymptotic(0.0, a) / (2.0 * PI * a).sqrt()
    }
}

/// I₁(x), odd; NaN at ±inf, as PyTorch's kernel gives.
fn i1_value(x: f64) -> f64 {
    let a = x.abs();
    if !a.is_finite() {
        return f64::NAN;
    }
    if x == 0.0 {
        return 0.0;
    }
    let v = if a < SERIES_LIMIT {
        0.5 * a * bessel_i_series(1.0, a)
    } else {
        grow(a, bessel_i_asymptotic(1.0, a))
    };
    v.copysign(x)
}

/// e^(-|x|) I₁(x), odd.
fn i1e_value(x: f64) -> f64 {
    let a = x.abs();
    if a.is_nan() {
        return f64::NAN;
    }
    if x == 0.0 {
        return 0.0;
    }
    let v = if a < SERIES_LIMIT {
        0.5 * a * bessel_i_series(1.0, a) * (-a).exp()
    } else {
        bessel_i_asymptotic(1.0, a) / (2.0 * PI * a).sqrt()
    };
    v.copysign(x)
}

/// `x` where |x| exceeds the dtype's epsilon, else epsilon (so `1/x` stays
/// finite), and the mask of those places.
fn away_from_zero(x: &Tensor) -> Result<(Tensor, Tensor)> {
    let eps = if x.dtype() == DType::Float32 {
        f64::from(f32::EPSILON)
    } else {
        f64::EPSILON
    };
    let eps = Tensor::scalar(Scalar::Float(eps), x.dtype());
    let not_tiny = gt(&abs(x)?, &eps)?;
    let safe = where_(&not_tiny, x, &eps)?;
    Ok((safe, not_tiny))
}

/// `gradx` where `not_tiny`, else the limit 1/2 at 0.
fn with_half_at_zero(not_tiny: &Tensor, gradx: &Tensor) -> Result<Tensor> {
    let half = Tensor::scalar(Scalar::Float(0.5), gradx.dtype());
    where_(not_tiny, gradx, &half)
}

/// I₀(x), `I0Backward0`: the gradient is I₁(x).
pub fn i0(a: &Tensor) -> Result<Tensor> {
    let out = real_map(a, "i0_vml_cpu", i0_value)?;
    record(
        "I0Backward0",
        &[a],
        &out,
        || SavedTensor::input(a),
        |ctx, sa, g| Ok(grads![Some(mul(g, &i1(&sa.unpack(ctx)?)?)?)]),
    );
    Ok(out)
}

/// e^(-|x|) I₀(x), `SpecialI0EBackward0`: the gradient is
/// i1e(x) - sgn(x) i0e(x).
pub fn i0e(a: &Tensor) -> Result<Tensor> {
    let out = real_map(a, "i0e_cpu", i0e_value)?;
    record(
        "SpecialI0EBackward0",
        &[a],
        &out,
        || (SavedTensor::input(a), SavedTensor::output(&out, 0)),
        |ctx, (sa, so), g| {
            let (x, o) = (sa.unpack(ctx)?, so.unpack(ctx)?);
            let d = sub(&i1e(&x)?, &mul(&sgn(&x)?, &o)?)?;
            Ok(grads![Some(mul(g, &d)?)])
        },
    );
    Ok(out)
}

/// I₁(x), `SpecialI1Backward0`: the gradient is I₀(x) - I₁(x)/x, with its
/// limit 1/2 where |x| is at most the dtype's epsilon.
pub fn i1(a: &Tensor) -> Result<Tensor> {
    let out = real_map(a, "i1_cpu", i1_value)?;
    record(
        "SpecialI1Backward0",
        &[a],
        &out,
        || (SavedTensor::input(a), SavedTensor::output(&out, 0)),
        |ctx, (sa, so), g| {
            let (x, o) = (sa.unpack(ctx)?, so.unpack(ctx)?);
            let (safe, not_tiny) = away_from_zero(&x)?;
            let gradx = sub(&i0(&safe)?, &div(&o, &safe)?)?;
            Ok(grads![Some(mul(
                g,
                &with_half_at_zero(&not_tiny, &gradx)?
            )?)])
        },
    );
    Ok(out)
}

/// e^(-|x|) I₁(x), `SpecialI1EBackward0`: the gradient is
/// i0e(x) - i1e(x) (sgn(x) + 1/x), with its limit 1/2 near 0.
pub fn i1e(a: &Tensor) -> Result<Tensor> {
    let out = real_map(a, "i1e_cpu", i1e_value)?;
    record(
        "SpecialI1EBackward0",
        &[a],
        &out,
        || (SavedTensor::input(a), SavedTensor::output(&out, 0)),
        |ctx, (sa, so), g| {
            let (x, o) = (sa.unpack(ctx)?, so.unpack(ctx)?);
            let (safe, not_tiny) = away_from_zero(&x)?;
            let factor = super::binary::add(&sgn(&safe)?, &reciprocal(&safe)?)?;
            let gradx = sub(&i0e(&safe)?, &mul(&o, &factor)?)?;
            Ok(grads![Some(mul(
                g,
                &with_half_at_zero(&not_tiny, &gradx)?
            )?)])
        },
    );
    Ok(out)
}

/// sin(x)/x: 1 at 0, 0 at ±inf.
fn spherical_j0_value(x: f64) -> f64 {
    if x == 0.0 {
        return 1.0;
    }
    if x.is_infinite() {
        return 0.0;
    }
    x.sin() / x
}

/// I₀(x) without a gradient (PyTorch records none for this form).
pub fn modified_bessel_i0(a: &Tensor) -> Result<Tensor> {
    real_map(a, "modified_bessel_i0_cpu", i0_value)
}

/// I₁(x) without a gradient (PyTorch records none for this form).
pub fn modified_bessel_i1(a: &Tensor) -> Result<Tensor> {
    real_map(a, "modified_bessel_i1_cpu", i1_value)
}

/// The spherical Bessel function j₀(x) = sin(x)/x, without a gradient
/// (PyTorch records none).
pub fn spherical_bessel_j0(a: &Tensor) -> Result<Tensor> {
    real_map(a, "spherical_bessel_j0_cpu", spherical_j0_value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn modified_bessel_known_values() {
        // I₀(1), I₁(1), I₀(10), I₁(10) and I₀(30), I₁(30) (series and asymptotic sides).
        assert!(close(i0_value(1.0), 1.266_065_877_752_008_4, 1e-15));
        assert!(close(i1_value(1.0), 0.565_159_103_992_485, 1e-15));
        assert!(close(i0_value(10.0), 2_815.716_628_466_254, 1e-14));
        assert!(close(i1_value(10.0), 2_670.988_303_701_255, 1e-14));
        assert!(close(i0_value(30.0), 781_672_297_823.977_5, 1e-14));
        assert!(close(i1_value(-30.0), -768_532_038_938.956_9, 1e-14));
        assert!(close(i0e_value(-30.0), 0.073_145_946_482_237_3, 1e-14));
        assert!(close(i1e_value(800.0), 0.014_098_125_406_526_996, 1e-14));
        // Continuous across the switch to the asymptotic expansion.
        let below = SERIES_LIMIT * (1.0 - 1e-15);
        assert!(close(i0e_value(below), i0e_value(SERIES_LIMIT), 1e-14));
        assert!(close(i1e_value(below), i1e_value(SERIES_LIMIT), 1e-14));
        // The Wronskian-like identity I₀'(x) = I₁(x), by central differences.
        let h = 1e-5;
        let slope = (i0_value(3.0 + h) - i0_value(3.0 - h)) / (2.0 * h);
        assert!(close(slope, i1_value(3.0), 1e-9));
        assert_eq!(i0_value(0.0), 1.0);
        assert!(i0_value(f64::INFINITY).is_nan());
        assert!(i0_value(710.0).is_finite());
        assert_eq!(i0_value(800.0), f64::INFINITY);
        assert_eq!(i0e_value(f64::INFINITY), 0.0);
        assert!(
            i1e_value(f64::NEG_INFINITY) == 0.0 && i1e_value(f64::NEG_INFINITY).is_sign_negative()
        );
        assert!(i1_value(f64::NAN).is_nan());
    }

    #[test]
    fn spherical_bessel_j0_values() {
        assert_eq!(spherical_j0_value(0.0), 1.0);
        assert_eq!(spherical_j0_value(f64::NEG_INFINITY), 0.0);
        assert!(close(spherical_j0_value(PI / 2.0), 2.0 / PI, 1e-15));
        assert!(close(spherical_j0_value(1e-8), 1.0 - 1e-16 / 6.0, 1e-16));
        assert!(spherical_j0_value(f64::NAN).is_nan());
    }
}
