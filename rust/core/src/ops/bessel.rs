//! Bessel-type functions: the modified Bessel functions `i0`, `i1` and their
//! exponentially scaled forms `i0e`, `i1e`, with their gradients, and the
//! `torch.special` forms PyTorch does not differentiate (`modified_bessel_i0`,
//! `modified_bessel_i1`, `spherical_bessel_j0`), whose outputs record no
//! gradient. The kernels compute in double precision (float32 rounds the
//! result).

use super::binary::{div, gt, mul, sub};
use super::double_double::Dd;
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

/// Euler's constant γ.
const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// Below this |x| J and Y come from their power series, above it from
/// Hankel's expansion, whose smallest term there is about e^(-2x).
const HANKEL_LIMIT: f64 = 25.0;

/// The sums of the power series of J_ν, Y_ν (`sign` -1) or I_ν, K_ν
/// (`sign` +1), ν = 0 or 1, in double-double: Σ tₖ and Σ wₖ tₖ with
/// tₖ = (sign·x²/4)ᵏ / (k! (k+ν)!) and wₖ = Hₖ + Hₖ₊ᵥ (harmonic numbers),
/// so that ψ(k+1) + ψ(k+ν+1) = wₖ - 2γ. The alternating sums cancel terms
/// up to about I_ν(x), which double-double absorbs for |x| < [`HANKEL_LIMIT`].
fn cylinder_series(nu: u32, x: f64, sign: f64) -> (Dd, Dd) {
    let q = Dd::product(x, x).mul(Dd::from_f64(0.25 * sign));
    let nu = f64::from(nu);
    let mut term = Dd::from_f64(1.0);
    let mut harmonic = Dd::from_f64(0.0);
    let mut sum = term;
    let mut weighted = Dd::from_f64(nu);
    for k in 1..400 {
        let k = f64::from(k);
        term = term.mul(q).div_f64(k * (k + nu));
        harmonic = harmonic.add(Dd::from_f64(1.0).div_f64(k));
        let w = harmonic
            .add(harmonic)
            .add(Dd::from_f64(nu).div_f64(k + 1.0));
        sum = sum.add(term);
        weighted = weighted.add(w.mul(term));
        // The sums are of order 1 (or multiplied by terms of that order),
        // so an absolute bound on the neglected terms suffices.
        if term.hi.abs() * (1.0 + w.hi) <= 1e-20 {
            break;
        }
    }
    (sum, weighted)
}

/// ln(x/2) + γ, the coefficient of J_ν and I_ν in Y_ν and K_ν.
fn log_term(x: f64) -> f64 {
    (0.5 * x).ln() + EULER_GAMMA
}

/// (c₀ - c₂ + c₄ - ..., c₁ - c₃ + ...) for c₀ = 1, cₖ = cₖ₋₁ · `ratio(k)`:
/// the two halves of an asymptotic series, summed up to its smallest term
/// (or until the terms fall below 1e-18).
pub(super) fn asymptotic_halves(ratio: impl Fn(f64) -> f64) -> (f64, f64) {
    let (mut even, mut odd, mut term) = (1.0f64, 0.0f64, 1.0f64);
    for k in 1..200u32 {
        let next = term * ratio(f64::from(k));
        if next.abs() >= term.abs() || next.abs() <= 1e-18 {
            break;
        }
        term = next;
        match k % 4 {
            0 => even += term,
            1 => odd += term,
            2 => even -= term,
            _ => odd -= term,
        }
    }
    (even, odd)
}

/// Hankel's P_ν(x) and Q_ν(x) for x >= [`HANKEL_LIMIT`]: with
/// χ = x - (ν/2 + 1/4)π, J_ν = √(2/(πx)) (P cos χ - Q sin χ) and
/// Y_ν = √(2/(πx)) (P sin χ + Q cos χ). The terms are
/// cₖ = Πⱼ₌₁..ₖ (4ν² - (2j-1)²) / (k! (8x)ᵏ), P = c₀ - c₂ + ..., Q = c₁ - c₃ + ...
fn hankel_pq(nu: u32, x: f64) -> (f64, f64) {
    let mu = f64::from(4 * nu * nu);
    asymptotic_halves(|k| (mu - (2.0 * k - 1.0).powi(2)) / (8.0 * k * x))
}

/// (J_ν(x), Y_ν(x)) for x >= [`HANKEL_LIMIT`]. cos χ and sin χ come from
/// cos x and sin x, so no rounding of x - π/4 shifts the phase.
fn hankel_jy(nu: u32, x: f64) -> (f64, f64) {
    let (p, q) = hankel_pq(nu, x);
    let (s, c) = x.sin_cos();
    let half = std::f64::consts::FRAC_1_SQRT_2;
    let (cos_chi, sin_chi) = if nu == 0 {
        ((c + s) * half, (s - c) * half)
    } else {
        ((s - c) * half, -(s + c) * half)
    };
    let amplitude = (2.0 / (PI * x)).sqrt();
    (
        amplitude * (p * cos_chi - q * sin_chi),
        amplitude * (p * sin_chi + q * cos_chi),
    )
}

/// J_ν(x) for ν = 0 (even) or 1 (odd); NaN at ±inf, as PyTorch's kernel
/// gives.
fn bessel_j_value(nu: u32, x: f64) -> f64 {
    let a = x.abs();
    if !a.is_finite() {
        return f64::NAN;
    }
    if a < HANKEL_LIMIT {
        let s = cylinder_series(nu, x, -1.0).0.to_f64();
        return if nu == 0 { s } else { 0.5 * x * s };
    }
    let j = hankel_jy(nu, a).0;
    if nu == 1 && x < 0.0 {
        -j
    } else {
        j
    }
}

/// Y_ν(x) for ν = 0 or 1: -inf at 0, NaN below 0 and at +inf (PyTorch's
/// values).
fn bessel_y_value(nu: u32, x: f64) -> f64 {
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if !(x > 0.0 && x.is_finite()) {
        return f64::NAN;
    }
    if x >= HANKEL_LIMIT {
        return hankel_jy(nu, x).1;
    }
    // Y_ν = -ν 2/(πx) + (2/π)(ln(x/2) + γ) J_ν - ((x/2)^ν / π) Σ wₖ tₖ.
    let (sum, weighted) = cylinder_series(nu, x, -1.0);
    let scale = if nu == 0 { 1.0 } else { 0.5 * x };
    let j = scale * sum.to_f64();
    let y = 2.0 * log_term(x) * j - scale * weighted.to_f64();
    if nu == 0 {
        y / PI
    } else {
        (y - 2.0 / x) / PI
    }
}

/// Above this x, K_ν comes from its integral rather than its power series
/// (whose two parts start to cancel beyond it).
const K_SERIES_LIMIT: f64 = 1.0;

/// e^x K_ν(x) for x > 0 by the trapezoid rule on
/// e^x K_ν(x) = ∫₀^∞ e^(-x (cosh t - 1)) cosh(νt) dt. The integrand is
/// analytic in the strip |Im t| < π/2 and decays double-exponentially, so
/// the error falls like e^(-π²/h); the step also resolves the peak, of
/// width about 1/√x, to e^(-2π²/(h² x)) < 1e-23. Every term is positive,
/// so the sum keeps its relative accuracy. Also serves the Airy function
/// (ν = 1/3).
pub(super) fn scaled_k_integral(nu: f64, x: f64) -> f64 {
    let h = (0.6 / x.sqrt()).min(0.2);
    let mut sum = 0.5;
    for j in 1..10_000 {
        let t = f64::from(j) * h;
        let s = (0.5 * t).sinh();
        let f = (-2.0 * x * s * s).exp() * (nu * t).cosh();
        sum += f;
        if f <= 1e-18 * sum {
            break;
        }
    }
    h * sum
}

/// e^x K_ν(x) for ν = 0 or 1 (`scaled`), else K_ν(x): +inf at 0, NaN below
/// 0, 0 at +inf (PyTorch's values).
fn bessel_k_value(nu: u32, x: f64, scaled: bool) -> f64 {
    if x == 0.0 {
        return f64::INFINITY;
    }
    if x < 0.0 || x.is_nan() {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return 0.0;
    }
    if x > K_SERIES_LIMIT {
        let k = scaled_k_integral(f64::from(nu), x);
        return if scaled { k } else { k * (-x).exp() };
    }
    // K₀ = -(ln(x/2) + γ) I₀ + Σ wₖ tₖ / 2,
    // K₁ = 1/x + (ln(x/2) + γ) I₁ - (x/4) Σ wₖ tₖ.
    let (sum, weighted) = cylinder_series(nu, x, 1.0);
    let k = if nu == 0 {
        0.5 * weighted.to_f64() - log_term(x) * sum.to_f64()
    } else {
        1.0 / x + 0.5 * x * (log_term(x) * sum.to_f64() - 0.5 * weighted.to_f64())
    };
    if scaled {
        k * x.exp()
    } else {
        k
    }
}

/// The Bessel function of the first kind J₀(x), without a gradient
/// (PyTorch records none).
pub fn bessel_j0(a: &Tensor) -> Result<Tensor> {
    real_map(a, "bessel_j0_cpu", |x| bessel_j_value(0, x))
}

/// J₁(x), without a gradient (PyTorch records none).
pub fn bessel_j1(a: &Tensor) -> Result<Tensor> {
    real_map(a, "bessel_j1_cpu", |x| bessel_j_value(1, x))
}

/// The Bessel function of the second kind Y₀(x), without a gradient
/// (PyTorch records none).
pub fn bessel_y0(a: &Tensor) -> Result<Tensor> {
    real_map(a, "bessel_y0_cpu", |x| bessel_y_value(0, x))
}

/// Y₁(x), without a gradient (PyTorch records none).
pub fn bessel_y1(a: &Tensor) -> Result<Tensor> {
    real_map(a, "bessel_y1_cpu", |x| bessel_y_value(1, x))
}

/// The modified Bessel function of the second kind K₀(x), without a
/// gradient (PyTorch records none).
pub fn modified_bessel_k0(a: &Tensor) -> Result<Tensor> {
    real_map(a, "modified_bessel_k0_cpu", |x| bessel_k_value(0, x, false))
}

/// K₁(x), without a gradient (PyTorch records none).
pub fn modified_bessel_k1(a: &Tensor) -> Result<Tensor> {
    real_map(a, "modified_bessel_k1_cpu", |x| bessel_k_value(1, x, false))
}

/// eˣ K₀(x), without a gradient (PyTorch records none).
pub fn scaled_modified_bessel_k0(a: &Tensor) -> Result<Tensor> {
    real_map(a, "scaled_modified_bessel_k0_cpu", |x| {
        bessel_k_value(0, x, true)
    })
}

/// eˣ K₁(x), without a gradient (PyTorch records none).
pub fn scaled_modified_bessel_k1(a: &Tensor) -> Result<Tensor> {
    real_map(a, "scaled_modified_bessel_k1_cpu", |x| {
        bessel_k_value(1, x, true)
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// |a - b| within `rel` of |b| (shared with the Airy tests).
    pub(in crate::ops) fn close(a: f64, b: f64, rel: f64) -> bool {
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

    #[test]
    fn bessel_j_y_known_values_and_identities() {
        // J₀(1), J₁(-1), Y₀(1), Y₁(1), and at 10 (series side) and 30 (Hankel side).
        type Kernel = fn(u32, f64) -> f64;
        let known: [(Kernel, u32, f64, f64); 8] = [
            (bessel_j_value, 0, 1.0, 0.765_197_686_557_966_6),
            (bessel_j_value, 1, -1.0, -0.440_050_585_744_933_5),
            (bessel_y_value, 0, 1.0, 0.088_256_964_215_676_96),
            (bessel_y_value, 1, 1.0, -0.781_212_821_300_288_7),
            (bessel_j_value, 0, 10.0, -0.245_935_764_451_348_35),
            (bessel_y_value, 1, 10.0, 0.249_015_424_206_953_88),
            (bessel_j_value, 1, 30.0, -0.118_751_062_616_622_94),
            (bessel_y_value, 0, 30.0, -0.117_295_731_686_664_03),
        ];
        for (f, nu, x, expected) in known {
            assert!(close(f(nu, x), expected, 1e-14), "{nu} {x}");
        }
        // The Wronskian J₁Y₀ - J₀Y₁ = 2/(πx) on both sides of the switch.
        for x in [0.3, 2.4048, 7.0, 19.5, 24.999_999, 25.0, 60.0, 1e4] {
            let w = bessel_j_value(1, x) * bessel_y_value(0, x)
                - bessel_j_value(0, x) * bessel_y_value(1, x);
            assert!(close(w, 2.0 / (PI * x), 1e-13), "{x}: {w}");
        }
        // J₀' = -J₁ by central differences.
        let h = 1e-5;
        let slope = (bessel_j_value(0, 13.0 + h) - bessel_j_value(0, 13.0 - h)) / (2.0 * h);
        assert!(close(slope, -bessel_j_value(1, 13.0), 1e-9));
        assert_eq!(bessel_j_value(0, 0.0), 1.0);
        assert!(bessel_j_value(1, -0.0).is_sign_negative());
        assert!(bessel_j_value(0, f64::INFINITY).is_nan());
        assert_eq!(bessel_y_value(1, 0.0), f64::NEG_INFINITY);
        assert!(bessel_y_value(0, -1.0).is_nan() && bessel_y_value(1, f64::INFINITY).is_nan());
    }

    #[test]
    fn bessel_k_known_values_and_identities() {
        // K₀(1), K₁(1) (series), K₀(2), K₁(10) and e^x K₀(1000) (integral).
        let known = [
            (0, 1.0, false, 0.421_024_438_240_708_34),
            (1, 1.0, false, 0.601_907_230_197_234_6),
            (0, 2.0, false, 0.113_893_872_749_533_44),
            (1, 10.0, false, 1.864_877_345_382_558_5e-5),
            (0, 1000.0, true, 0.039_628_321_600_754_22),
        ];
        for (nu, x, scaled, expected) in known {
            assert!(
                close(bessel_k_value(nu, x, scaled), expected, 2e-15),
                "{nu} {x}"
            );
        }
        // The Wronskian I₀K₁ + I₁K₀ = 1/x, across the switch to the integral.
        for x in [1e-3, 0.5, 1.0, 1.000_000_1, 3.0, 20.0, 500.0] {
            let w = i0e_value(x) * bessel_k_value(1, x, true)
                + i1e_value(x) * bessel_k_value(0, x, true);
            assert!(close(w, 1.0 / x, 1e-14), "{x}: {w}");
        }
        assert_eq!(bessel_k_value(0, 0.0, true), f64::INFINITY);
        assert_eq!(bessel_k_value(1, f64::INFINITY, false), 0.0);
        assert!(
            bessel_k_value(0, -1.0, false).is_nan() && bessel_k_value(1, f64::NAN, true).is_nan()
        );
    }
}
