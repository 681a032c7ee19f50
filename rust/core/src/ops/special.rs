//! Special functions: `lgamma`, `digamma`, `polygamma` and `erfinv`, with
//! their gradients. The kernels compute in double precision (float32 rounds
//! the result), so one series serves both dtypes.

use super::binary::{float_dtype_error, mul};
use super::elementwise::map;
use super::num::{Float, RealFloat};
use super::unary::{exp, floating};
use crate::autograd::{record, SavedTensor};
use crate::tensor::Tensor;
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

/// B₂ⱼ/(2j)! for j = 1..8: the Euler-Maclaurin corrections of [`hurwitz_zeta`].
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

/// ζ(s, q) = Σₖ (q + k)⁻ˢ for an integer `s >= 2`: the first terms summed
/// until `q` is large, the rest by Euler-Maclaurin. Poles (q a non-positive
/// integer) give +inf.
fn hurwitz_zeta(s: i32, q: f64) -> f64 {
    if q <= 0.0 && q == q.trunc() {
        return f64::INFINITY;
    }
    let sf = f64::from(s);
    let (mut q, mut sum) = (q, 0.0);
    // Far enough out that the correction terms fall fast even for large s.
    let start = 10.0 + sf;
    while q < start {
        sum += q.powi(-s);
        q += 1.0;
    }
    let mut tail = q.powf(1.0 - sf) / (sf - 1.0) + 0.5 * q.powi(-s);
    // s (s+1) ... (s+2j-2) q^(-s-2j+1), built up term by term.
    let mut factor = sf * q.powf(-sf - 1.0);
    for (j, b) in BERNOULLI_OVER_FACTORIAL.iter().enumerate() {
        let term = b * factor;
        tail += term;
        if term.abs() < 1e-17 * tail.abs() {
            break;
        }
        let rise = sf + 2.0 * j as f64 + 1.0;
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
    sign * factorial * hurwitz_zeta(n as i32 + 1, x)
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
/// float dtype); other dtypes are PyTorch's error naming `kernel`.
fn special_map(a: &Tensor, kernel: &str, f: impl Fn(f64) -> f64 + Sync + Send) -> Result<Tensor> {
    let t = floating(a);
    with_real_float!(t.dtype(), T => Ok(map::<T, T>(&t, |x: T| T::from_f64(f(x.to_f64())))),
        Err(float_dtype_error(kernel, t.dtype())))
}

/// `ln|Γ(x)|`, `LgammaBackward0`: the gradient is ψ(x).
pub fn lgamma(a: &Tensor) -> Result<Tensor> {
    let out = special_map(a, "lgamma_vml_cpu", ln_gamma)?;
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
    let out = special_map(a, kernel, move |x| polygamma_value(order, x))?;
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
    let out = special_map(a, "erfinv_vml_cpu", inverse_erf)?;
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
}
