//! Special functions: `lgamma`, `digamma`, `polygamma`, `erfinv`, `erfcx`,
//! the regularized incomplete gamma functions and the Hurwitz zeta function,
//! with their gradients. The kernels compute in double precision (float32
//! rounds the result), so one series serves both dtypes.

use super::binary::{add, mul, sub};
use super::copy::try_cast;
use super::elementwise::{map, zip_map};
use super::num::{Float, RealFloat};
use super::unary::{exp, floating, log, neg};
use super::{check_real_float, result_type};
use crate::autograd::{record, SavedTensor};
use crate::tensor::{DType, Tensor};
use crate::{bail, grads, with_real_float, Result};
use std::f64::consts::PI;

/// `ln|Γ(x)|`: `+inf` at 0 and the negative integers.
fn ln_gamma(x: f64) -> f64 {
    libm::lgamma(x)
}

/// ψ(x) = Γ'(x)/Γ(x): -inf at +0 (+inf at -0), NaN at negative integers.
fn psi(x: f64) -> f64 {
    if x == 0.0 {
        return f64::INFINITY.copysign(-x);
    }
    if x < 0.0 {
        if x == x.trunc() {
            return f64::NAN;
        }
        // Reflection: ψ(x) = ψ(1 - x) - π / tan(πx); tan has period π, so
        // the fractional part keeps the argument small and exact.
        return psi(1.0 - x) - PI / (PI * x.fract()).tan();
    }
    // Recur upward until the asymptotic series is exact to double precision.
    let (mut x, mut shift) = (x, 0.0);
    while x < 10.0 {
        shift -= 1.0 / x;
        x += 1.0;
    }
    // Σ B₂ₖ/(2k) x⁻²ᵏ for k = 1..7.
    let z = 1.0 / (x * x);
    let series = z
        * (1.0 / 12.0
            - z * (1.0 / 120.0
                - z * (1.0 / 252.0
                    - z * (1.0 / 240.0 - z * (1.0 / 132.0 - z * (691.0 / 32760.0 - z / 12.0))))));
    shift + x.ln() - 0.5 / x - series
}

/// B₂ⱼ/(2j)! for j = 1..8: the Euler-Maclaurin corrections of [`zeta_value`].
const BERNOULLI_OVER_FACTORIAL: [f64; 8] = [
    1.0 / 12.0,
    -1.0 / 720.0,
    1.0 / 30240.0,
    -1.0 / 1209600.0,
    1.0 / 47900160.0,
    -691.0 / 1307674368000.0,
    1.0 / 74724249600.0,
    -3617.0 / 10670622842880000.0,
];

/// The Hurwitz zeta function ζ(s, q) = Σₖ (q + k)⁻ˢ for real s > 1: the
/// first terms summed until `q` is large, the rest by Euler-Maclaurin.
/// PyTorch's conventions elsewhere: +inf at s = 1 and at the poles (q a
/// non-positive integer), NaN for s < 1 and for a negative non-integer `q`
/// with a non-integer `s`; for s = +inf, 1 at q = 1, +inf below, NaN above.
fn zeta_value(s: f64, q: f64) -> f64 {
    if s == 1.0 {
        return f64::INFINITY;
    }
    if s < 1.0 {
        return f64::NAN;
    }
    if q <= 0.0 {
        if q == q.floor() {
            return f64::INFINITY;
        }
        if s != s.floor() {
            return f64::NAN;
        }
    }
    if s.is_nan() || q.is_nan() || q == f64::INFINITY {
        return f64::NAN;
    }
    if s == f64::INFINITY {
        return match q.partial_cmp(&1.0) {
            Some(std::cmp::Ordering::Less) => f64::INFINITY,
            Some(std::cmp::Ordering::Equal) => 1.0,
            _ => f64::NAN,
        };
    }
    let (mut q, mut sum) = (q, 0.0);
    // Far enough out that the correction terms fall fast even for large s.
    let start = 10.0 + 2.0 * s;
    while q < start {
        let term = q.powf(-s);
        sum += term;
        // For large s the terms fall geometrically: stop once the rest, at
        // most about term (1 + q / (s - 1)), is below rounding.
        if q > 0.0 && term * (1.0 + q / (s - 1.0)) <= 1e-17 * sum {
            return sum;
        }
        q += 1.0;
    }
    let mut tail = q.powf(1.0 - s) / (s - 1.0) + 0.5 * q.powf(-s);
    // s (s+1) ... (s+2j-2) q^(-s-2j+1), built up term by term.
    let mut factor = s * q.powf(-s - 1.0);
    for (j, b) in BERNOULLI_OVER_FACTORIAL.iter().enumerate() {
        let term = b * factor;
        tail += term;
        if term.abs() < 1e-17 * tail.abs() {
            break;
        }
        let rise = s + 2.0 * j as f64 + 1.0;
        factor *= rise * (rise + 1.0) / (q * q);
    }
    sum + tail
}

/// ψ⁽ⁿ⁾(x): ψ for n = 0, else (-1)ⁿ⁺¹ n! ζ(n + 1, x).
fn polygamma_value(n: u32, x: f64) -> f64 {
    if n == 0 {
        return psi(x);
    }
    let factorial: f64 = (1..=n).map(f64::from).product();
    let sign = if n % 2 == 1 { 1.0 } else { -1.0 };
    sign * factorial * zeta_value(f64::from(n) + 1.0, x)
}

/// The inverse error function: a published rational first guess (Giles,
/// 2010), then Newton steps on `erfc`, which stays accurate in the tails
/// where `erf` rounds to ±1.
fn inverse_erf(y: f64) -> f64 {
    if y.is_nan() || y.abs() > 1.0 {
        return f64::NAN;
    }
    if y.abs() == 1.0 {
        return f64::INFINITY.copysign(y);
    }
    let a = y.abs();
    let w = -((1.0 - a) * (1.0 + a)).ln();
    let mut x = if w < 5.0 {
        let w = w - 2.5;
        let p = [
            2.810_226_36e-08,
            3.432_739_39e-07,
            -3.523_387_7e-06,
            -4.391_506_54e-06,
            0.000_218_580_87,
            -0.001_253_725_03,
            -0.004_177_681_64,
            0.246_640_727,
            1.501_409_41,
        ];
        p.iter().fold(0.0, |acc, c| acc * w + c) * a
    } else {
        let w = w.sqrt() - 3.0;
        let p = [
            -0.000_200_214_257,
            0.000_100_950_558,
            0.001_349_343_22,
            -0.003_673_428_44,
            0.005_739_507_73,
            -0.007_622_461_3,
            0.009_438_870_47,
            1.001_674_06,
            2.832_976_82,
        ];
        p.iter().fold(0.0, |acc, c| acc * w + c) * a
    };
    // Halley's method on erf(x) = a, or for a >= 0.5 on the equivalent
    // erfc(x) = 1 - a (exact there), which keeps the tails accurate where
    // erf rounds to 1. Both have f''/f' = -2x, so a step is
    // -(f/f') / (1 + x f/f'). The first guess is good to float32 precision
    // for 1 - a above 1e-7 and rougher further out, hence the loop.
    let slope = |x: f64| std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp();
    for _ in 0..50 {
        let residual = if a < 0.5 {
            libm::erf(x) - a
        } else {
            (1.0 - a) - libm::erfc(x)
        };
        let newton = residual / slope(x);
        let step = newton / (1.0 + x * newton);
        x -= step;
        if step.abs() <= 1e-16 * x.abs() {
            break;
        }
    }
    x.copysign(y)
}

/// `f` over a real floating tensor (bool and int64 compute in the default
/// float dtype); other dtypes raise PyTorch's `NotImplementedError` naming
/// `kernel`.
pub(super) fn real_map(
    a: &Tensor,
    kernel: &str,
    f: impl Fn(f64) -> f64 + Sync + Send,
) -> Result<Tensor> {
    let t = floating(a)?;
    check_real_float(t.dtype(), kernel)?;
    with_real_float!(t.dtype(), T => Ok(map::<T, T>(&t, |x: T| T::from_f64(f(x.to_f64())))?),
        unreachable!("checked to be a real float"))
}

/// The dtype [`real_zip`] computes in.
pub(super) fn zip_dtype(a: &Tensor, b: &Tensor, promote: bool) -> DType {
    let dtype = result_type(&[a, b]);
    if promote && dtype.is_integral(true) {
        DType::default_float()
    } else {
        dtype
    }
}

/// `f` pairwise over the broadcast of two operands, in their result dtype
/// (`promote`: integers compute in the default float dtype; otherwise they
/// raise like the other unsupported dtypes).
pub(super) fn real_zip(
    a: &Tensor,
    b: &Tensor,
    kernel: &str,
    promote: bool,
    f: impl Fn(f64, f64) -> f64 + Sync + Send,
) -> Result<Tensor> {
    let dtype = zip_dtype(a, b, promote);
    check_real_float(dtype, kernel)?;
    let (ca, cb) = (try_cast(a, dtype)?, try_cast(b, dtype)?);
    with_real_float!(dtype, T => zip_map::<T, T, T>(&ca, &cb, |x: T, y: T| T::from_f64(f(x.to_f64(), y.to_f64()))),
        unreachable!("checked to be a real float"))
}

/// `ln|Γ(x)|`, `LgammaBackward0`: the gradient is ψ(x).
pub fn lgamma(a: &Tensor) -> Result<Tensor> {
    let out = real_map(a, "lgamma_vml_cpu", ln_gamma)?;
    record(
        "LgammaBackward0",
        &[a],
        &out,
        || SavedTensor::input(a),
        |ctx, sa, g| Ok(grads![Some(mul(g, &digamma(&sa.unpack(ctx)?)?)?)]),
    );
    Ok(out)
}

/// ψ(x), `DigammaBackward0`: the gradient is ψ⁽¹⁾(x).
pub fn digamma(a: &Tensor) -> Result<Tensor> {
    polygamma(0, a)
}

/// ψ⁽ⁿ⁾(x), the n-th derivative of ψ; its gradient is ψ⁽ⁿ⁺¹⁾(x).
pub fn polygamma(n: i64, a: &Tensor) -> Result<Tensor> {
    let Ok(order) = u32::try_from(n) else {
        bail!(Runtime, "polygamma(n, x) does not support negative n.");
    };
    let kernel = if order == 0 { "digamma" } else { "polygamma" };
    let out = real_map(a, kernel, move |x| polygamma_value(order, x))?;
    let name = if order == 0 {
        "DigammaBackward0"
    } else {
        "PolygammaBackward0"
    };
    record(
        name,
        &[a],
        &out,
        || SavedTensor::input(a),
        move |ctx, sa, g| {
            let next = polygamma(i64::from(order) + 1, &sa.unpack(ctx)?)?;
            Ok(grads![Some(mul(g, &next)?)])
        },
    );
    Ok(out)
}

/// The inverse of `erf`, `ErfinvBackward0`: the gradient is
/// √π/2 · exp(erfinv(x)²).
pub fn erfinv(a: &Tensor) -> Result<Tensor> {
    let out = real_map(a, "erfinv_vml_cpu", inverse_erf)?;
    record(
        "ErfinvBackward0",
        &[a],
        &out,
        || SavedTensor::output(&out, 0),
        |ctx, so, g| {
            let o = so.unpack(ctx)?;
            let half_sqrt_pi = Tensor::wrapped_number(crate::Scalar::Float(PI.sqrt() / 2.0));
            let d = mul(&exp(&mul(&o, &o)?)?, &half_sqrt_pi)?;
            Ok(grads![Some(mul(g, &d)?)])
        },
    );
    Ok(out)
}

/// e^(x²) erfc(x). For |x| < 10 from `erfc`, with x² split into a double
/// and its rounding error so the exponential keeps full precision; beyond,
/// the asymptotic series 1/(x√π) Σ (-1)ⁿ (2n-1)!! / (2x²)ⁿ; for negative x,
/// 2e^(x²) - erfcx(-x), which overflows below about -26.6.
fn erfcx_value(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x >= 10.0 {
        if x == f64::INFINITY {
            return 0.0;
        }
        let inv = 1.0 / x;
        let z = 0.5 * inv * inv;
        let (mut term, mut sum) = (1.0, 1.0);
        for n in 1..60 {
            term *= -f64::from(2 * n - 1) * z;
            sum += term;
            if term.abs() <= 1e-17 * sum {
                break;
            }
        }
        return sum * inv / PI.sqrt();
    }
    let square = x * x;
    if square > 710.0 {
        return f64::INFINITY;
    }
    let low = x.mul_add(x, -square);
    let exp_square = square.exp() * (1.0 + low);
    if x >= 0.0 {
        exp_square * libm::erfc(x)
    } else {
        2.0 * exp_square - erfcx_value(-x)
    }
}

/// e^(x²) erfc(x), `SpecialErfcxBackward0`: the gradient is
/// 2x erfcx(x) - 2/√π.
pub fn erfcx(a: &Tensor) -> Result<Tensor> {
    let out = real_map(a, "erfcx_cpu", erfcx_value)?;
    record(
        "SpecialErfcxBackward0",
        &[a],
        &out,
        || (SavedTensor::input(a), SavedTensor::output(&out, 0)),
        |ctx, (sa, so), g| {
            let (x, o) = (sa.unpack(ctx)?, so.unpack(ctx)?);
            let two = Tensor::wrapped_number(crate::Scalar::Float(2.0));
            let offset =
                Tensor::wrapped_number(crate::Scalar::Float(std::f64::consts::FRAC_2_SQRT_PI));
            let d = sub(&mul(&mul(&x, &two)?, &o)?, &offset)?;
            Ok(grads![Some(mul(g, &d)?)])
        },
    );
    Ok(out)
}

/// Stirling's correction: ln Γ(a) - ((a - ½) ln a - a + ½ ln 2π), for a >= 20.
fn stirling_correction(a: f64) -> f64 {
    let z = 1.0 / (a * a);
    (1.0 / 12.0 - z * (1.0 / 360.0 - z * (1.0 / 1260.0 - z * (1.0 / 1680.0 - z * (1.0 / 1188.0)))))
        / a
}

/// xᵃ e⁻ˣ / Γ(a) for a, x > 0. For large `a` the exponent is written as
/// -a (t - ln(1 + t)) with t = (x - a)/a, so the large terms of
/// a ln x - x - ln Γ(a) cancel exactly instead of in rounding.
fn gamma_density_factor(a: f64, x: f64) -> f64 {
    if a < 20.0 {
        return (a * x.ln() - x - ln_gamma(a)).exp();
    }
    let t = (x - a) / a;
    let d = if t.abs() < 0.25 {
        // t - ln(1 + t) = Σₙ₌₂ (-t)ⁿ / n... with alternating signs.
        let (mut power, mut sum, mut n) = (t * t, 0.0, 2.0);
        loop {
            let term = power / n;
            sum += term;
            if term.abs() <= 1e-17 * sum.abs() || n > 60.0 {
                break;
            }
            power *= -t;
            n += 1.0;
        }
        sum
    } else {
        // ln(x/a) rather than ln(1 + t): 1 + t rounds when x is far below a.
        t - (x / a).ln()
    };
    (-a * d - stirling_correction(a)).exp() * (a / (2.0 * PI)).sqrt()
}

/// ln Γ(1 + a) for 0 <= a < 1 without rounding 1 + a: for small `a` the
/// series -γa + Σₖ₌₂ (-1)ᵏ ζ(k) aᵏ / k.
fn ln_gamma_one_plus(a: f64) -> f64 {
    if a >= 0.1 {
        return ln_gamma(1.0 + a);
    }
    let euler = 0.577_215_664_901_532_9;
    let (mut sum, mut power) = (-euler * a, -a);
    for k in 2..40 {
        power *= -a;
        let term = zeta_value(f64::from(k), 1.0) * power / f64::from(k);
        sum += term;
        if term.abs() <= 1e-17 * sum.abs() {
            break;
        }
    }
    sum
}

/// The regularized incomplete gamma functions P(a, x) (`upper` false) and
/// Q(a, x) = 1 - P(a, x), each computed directly where it is small: the
/// power series of P for x < a + 1, a continued fraction for Q beyond, and
/// for a < 1 a series for Q that avoids 1 - P. Edge values follow PyTorch.
fn incomplete_gamma(a: f64, x: f64, upper: bool) -> f64 {
    let pick = |p: f64, q: f64| if upper { q } else { p };
    if a < 0.0 || x < 0.0 {
        return f64::NAN;
    }
    if a == 0.0 {
        return if x > 0.0 { pick(1.0, 0.0) } else { f64::NAN };
    }
    if x == 0.0 {
        return pick(0.0, 1.0);
    }
    if a == f64::INFINITY {
        return if x == f64::INFINITY {
            f64::NAN
        } else {
            pick(0.0, 1.0)
        };
    }
    if x == f64::INFINITY {
        return pick(1.0, 0.0);
    }
    if a.is_nan() || x.is_nan() {
        return f64::NAN;
    }
    if x < a + 1.0 {
        if upper && a < 1.0 {
            // Q = 1 - xᵃ/Γ(a+1) - a xᵃ/Γ(a+1) Σₙ₌₁ (-x)ⁿ / (n! (a + n)).
            let u = a * x.ln() - ln_gamma_one_plus(a);
            let (mut power, mut sum) = (1.0, 0.0);
            for n in 1..200 {
                let nf = f64::from(n);
                power *= -x / nf;
                let term = power / (a + nf);
                sum += term;
                if term.abs() <= 1e-17 * sum.abs() {
                    break;
                }
            }
            return -u.exp_m1() - a * u.exp() * sum;
        }
        // P = xᵃ e⁻ˣ / Γ(a + 1) Σₙ xⁿ / ((a + 1) ... (a + n)).
        let (mut term, mut sum, mut n) = (1.0, 1.0, 1.0);
        while n < 1e7 {
            term *= x / (a + n);
            sum += term;
            if term <= 1e-17 * sum {
                break;
            }
            n += 1.0;
        }
        let factor = if a < 20.0 {
            (a * x.ln() - x - ln_gamma(a + 1.0)).exp()
        } else {
            gamma_density_factor(a, x) / a
        };
        let p = factor * sum;
        return pick(p, 1.0 - p);
    }
    // Q = xᵃ e⁻ˣ / Γ(a) · 1/(x+1-a - 1(1-a)/(x+3-a - 2(2-a)/(x+5-a - ...))),
    // evaluated forwards by the modified Lentz method.
    let tiny = 1e-300;
    let mut b = x + 1.0 - a;
    let (mut c, mut d) = (1.0 / tiny, 1.0 / b);
    let mut h = d;
    let mut i = 1.0;
    while i < 1e7 {
        let an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if d.abs() < tiny {
            d = tiny;
        }
        c = b + an / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() <= 1e-16 {
            break;
        }
        i += 1.0;
    }
    let q = gamma_density_factor(a, x) * h;
    pick(1.0 - q, q)
}

/// The incomplete gamma functions' shared op: PyTorch implements only the
/// gradient of `other` (x), ±xᵃ⁻¹ e⁻ˣ / Γ(a).
fn igamma_op(a: &Tensor, x: &Tensor, upper: bool) -> Result<Tensor> {
    let kernel = if upper { "igammac_cpu" } else { "igamma_cpu" };
    let out = real_zip(a, x, kernel, false, move |a, x| {
        incomplete_gamma(a, x, upper)
    })?;
    let name = if upper {
        "IgammacBackward0"
    } else {
        "IgammaBackward0"
    };
    record(
        name,
        &[a, x],
        &out,
        || (SavedTensor::input(a), SavedTensor::input(x)),
        move |ctx, (sa, sx), g| {
            if ctx.needs_grad(0) {
                let op = if upper { "igammac" } else { "igamma" };
                bail!(
                    NotImplemented,
                    "the derivative for '{op}: input' is not implemented."
                );
            }
            let (a, x) = (sa.unpack(ctx)?, sx.unpack(ctx)?);
            let one = Tensor::wrapped_number(crate::Scalar::Float(1.0));
            let exponent = sub(&sub(&mul(&sub(&a, &one)?, &log(&x)?)?, &x)?, &lgamma(&a)?)?;
            let density = exp(&exponent)?;
            let d = if upper { neg(&density)? } else { density };
            Ok(grads![None, Some(mul(g, &d)?)])
        },
    );
    Ok(out)
}

/// The regularized lower incomplete gamma function P(a, x), `IgammaBackward0`.
pub fn igamma(a: &Tensor, x: &Tensor) -> Result<Tensor> {
    igamma_op(a, x, false)
}

/// The regularized upper incomplete gamma function Q(a, x), `IgammacBackward0`.
pub fn igammac(a: &Tensor, x: &Tensor) -> Result<Tensor> {
    igamma_op(a, x, true)
}

/// The Hurwitz zeta function ζ(x, q), `SpecialZetaBackward0` (`1` when `x`
/// is a Python number, `2` when `q` is). PyTorch implements only the
/// gradient of `q`, -x ζ(x + 1, q).
pub fn zeta(x: &Tensor, q: &Tensor) -> Result<Tensor> {
    let out = real_zip(x, q, "zeta_cpu", true, zeta_value)?;
    let name = if x.is_wrapped_number() {
        "SpecialZetaBackward1"
    } else if q.is_wrapped_number() {
        "SpecialZetaBackward2"
    } else {
        "SpecialZetaBackward0"
    };
    record(
        name,
        &[x, q],
        &out,
        || (SavedTensor::input(x), SavedTensor::input(q)),
        |ctx, (sx, sq), g| {
            if ctx.needs_grad(0) {
                bail!(
                    NotImplemented,
                    "the derivative for 'zeta' is not implemented."
                );
            }
            let (x, q) = (sx.unpack(ctx)?, sq.unpack(ctx)?);
            let one = Tensor::wrapped_number(crate::Scalar::Float(1.0));
            let d = neg(&mul(&x, &zeta(&add(&x, &one)?, &q)?)?)?;
            Ok(grads![None, Some(mul(g, &d)?)])
        },
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn digamma_matches_known_values() {
        let euler = 0.577_215_664_901_532_9;
        assert!(close(psi(1.0), -euler, 1e-15));
        assert!(close(psi(0.5), -euler - 2.0 * 2f64.ln(), 1e-15));
        // ψ(x + 1) = ψ(x) + 1/x, across the reflection and recurrence.
        for x in [-3.7, -0.25, 0.001, 2.5, 9.99, 123.4] {
            assert!(close(psi(x + 1.0), psi(x) + 1.0 / x, 1e-12), "{x}");
        }
        assert_eq!(psi(0.0), f64::NEG_INFINITY);
        assert_eq!(psi(-0.0), f64::INFINITY);
        assert!(psi(-2.0).is_nan());
    }

    #[test]
    fn polygamma_matches_zeta_values() {
        // ψ⁽¹⁾(1) = π²/6, ψ⁽²⁾(1) = -2ζ(3), ψ⁽³⁾(1) = π⁴/15.
        assert!(close(polygamma_value(1, 1.0), PI * PI / 6.0, 1e-14));
        assert!(close(
            polygamma_value(2, 1.0),
            -2.0 * 1.202_056_903_159_594_2,
            1e-14
        ));
        assert!(close(polygamma_value(3, 1.0), PI.powi(4) / 15.0, 1e-14));
        // ψ⁽¹⁾(x + 1) = ψ⁽¹⁾(x) - 1/x², negative arguments included.
        for x in [-1.5, 0.3, 7.0, 50.0] {
            assert!(close(
                polygamma_value(1, x + 1.0),
                polygamma_value(1, x) - 1.0 / (x * x),
                1e-12
            ));
        }
        // At the poles: (-1)^(n+1) times infinity.
        assert_eq!(polygamma_value(2, -3.0), f64::NEG_INFINITY);
        assert_eq!(polygamma_value(3, 0.0), f64::INFINITY);
    }

    #[test]
    fn inverse_erf_inverts_erf() {
        // Where erf is well conditioned; the tails are checked against erfc.
        for x in [-3.0, -2.0, -0.3, 0.0, 1e-9, 0.7, 2.5] {
            assert!(close(inverse_erf(libm::erf(x)), x, 1e-12), "{x}");
        }
        // Deep in the tail, against erfc instead (erf has rounded to 1).
        for tail in [1e-15, 1e-12, 1e-9] {
            let y = 1.0 - tail;
            assert!(close(libm::erfc(inverse_erf(y)), 1.0 - y, 1e-12), "{tail}");
        }
        // erfinv(1 - 2^-50), from a 40-digit evaluation.
        assert!(close(
            inverse_erf(1.0 - 2f64.powi(-50)),
            5.686_128_441_310_391,
            1e-14
        ));
        assert!(close(
            inverse_erf(1e-300),
            1e-300 / std::f64::consts::FRAC_2_SQRT_PI,
            1e-15
        ));
        assert_eq!(inverse_erf(1.0), f64::INFINITY);
        assert_eq!(inverse_erf(-1.0), f64::NEG_INFINITY);
        assert!(inverse_erf(1.5).is_nan());
    }

    #[test]
    fn erfcx_matches_known_values() {
        // erfcx(1) = e erfc(1); erfcx(-1) = e (1 + erf(1)); large x: 1/(x√π) (1 - 1/(2x²) ...).
        assert!(close(erfcx_value(1.0), 0.427_583_576_155_807, 1e-15));
        assert!(close(erfcx_value(-1.0), 5.008_980_080_762_283, 1e-15));
        assert!(close(erfcx_value(30.0), 0.018_795_888_861_416_754, 1e-15));
        assert!(close(erfcx_value(1e10), 1.0 / (1e10 * PI.sqrt()), 1e-15));
        assert!(close(erfcx_value(9.999_999_999), erfcx_value(10.0), 1e-9));
        assert_eq!(erfcx_value(f64::INFINITY), 0.0);
        assert_eq!(erfcx_value(-30.0), f64::INFINITY);
        assert_eq!(erfcx_value(0.0), 1.0);
    }

    #[test]
    fn incomplete_gamma_matches_known_values() {
        // P(1, x) = 1 - e⁻ˣ; P(½, x) = erf(√x); Q(½, x) = erfc(√x).
        for x in [1e-8, 0.3, 1.0, 2.5, 7.0, 40.0] {
            assert!(
                close(incomplete_gamma(1.0, x, false), -(-x).exp_m1(), 1e-14),
                "{x}"
            );
            assert!(
                close(incomplete_gamma(1.0, x, true), (-x).exp(), 1e-14),
                "{x}"
            );
            let r = f64::sqrt(x);
            assert!(
                close(incomplete_gamma(0.5, x, false), libm::erf(r), 1e-14),
                "{x}"
            );
            assert!(
                close(incomplete_gamma(0.5, x, true), libm::erfc(r), 1e-13),
                "{x}"
            );
        }
        // Q(n, x) = e⁻ˣ Σₖ<ₙ xᵏ/k! for integer n, here n = 30 near its median.
        let x: f64 = 29.5;
        let mut term = 1.0;
        let mut sum = 1.0;
        for k in 1..30 {
            term *= x / f64::from(k);
            sum += term;
        }
        assert!(close(
            incomplete_gamma(30.0, x, true),
            sum * (-x).exp(),
            1e-13
        ));
        assert!(close(
            incomplete_gamma(30.0, x, false),
            1.0 - sum * (-x).exp(),
            1e-13
        ));
        assert_eq!(incomplete_gamma(0.0, 1.0, false), 1.0);
        assert!(incomplete_gamma(0.0, 0.0, false).is_nan());
        assert_eq!(incomplete_gamma(f64::NAN, 0.0, true), 1.0);
        assert!(incomplete_gamma(-1.0, 1.0, false).is_nan());
    }

    #[test]
    fn hurwitz_zeta_matches_known_values() {
        assert!(close(zeta_value(2.0, 1.0), PI * PI / 6.0, 1e-15));
        assert!(close(zeta_value(3.0, 1.0), 1.202_056_903_159_594_2, 1e-15));
        // ζ(s, ½) = (2ˢ - 1) ζ(s); ζ(1.5, 1) = 2.6123753486854883.
        assert!(close(zeta_value(2.0, 0.5), 3.0 * PI * PI / 6.0, 1e-15));
        assert!(close(zeta_value(1.5, 1.0), 2.612_375_348_685_488, 1e-14));
        // ζ(s, q) = q⁻ˢ + ζ(s, q + 1), across the direct sum and large s.
        for (s, q) in [
            (1.01, 0.3),
            (2.5, 7.0),
            (60.0, 0.9),
            (300.0, 2.0),
            (4.0, -2.5),
        ] {
            let lhs = zeta_value(s, q);
            assert!(
                close(lhs, q.powf(-s) + zeta_value(s, q + 1.0), 1e-13),
                "{s} {q}"
            );
        }
        assert_eq!(zeta_value(1.0, f64::NAN), f64::INFINITY);
        assert!(zeta_value(0.5, 1.0).is_nan());
        assert_eq!(zeta_value(2.0, -3.0), f64::INFINITY);
        assert!(zeta_value(2.5, -1.5).is_nan());
        assert_eq!(zeta_value(f64::INFINITY, 1.0), 1.0);
    }
}
