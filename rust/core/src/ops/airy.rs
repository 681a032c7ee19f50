//! The Airy function Ai(x) of `torch.special.airy_ai`, which PyTorch does
//! not differentiate (its output records no gradient). Computed in double
//! precision: the Maclaurin series (in double-double, as it alternates) on
//! [-10, 1], Ai(x) = √(x/3) K_{1/3}(ζ) / π above, and the asymptotic
//! expansion in cos and sin of ζ - π/4 below, with ζ = (2/3)|x|^(3/2).

use super::bessel::{asymptotic_halves, scaled_k_integral};
use super::double_double::Dd;
use super::special::real_map;
use crate::tensor::Tensor;
use crate::Result;
use std::f64::consts::{FRAC_1_SQRT_2, PI};

/// Ai(0) and -Ai'(0), each as a double-double.
const AI_0: Dd = Dd::new(0.355_028_053_887_817_2, 2.052_336_324_362_12e-17);
const MINUS_AI_PRIME_0: Dd = Dd::new(0.258_819_403_792_806_8, -2.522_243_111_610_832e-17);

/// Below this x the asymptotic expansion is used: its smallest term there
/// is about e^(-2ζ) < 1e-18.
const NEGATIVE_LIMIT: f64 = -10.0;

/// Ai(x) = Ai(0) f(x) + Ai'(0) g(x) with f = Σ 3ᵏ (1/3)ₖ x³ᵏ / (3k)! and
/// g = Σ 3ᵏ (2/3)ₖ x³ᵏ⁺¹ / (3k+1)!.
fn airy_maclaurin(x: f64) -> f64 {
    let cube = Dd::product(x, x).mul(Dd::from_f64(x));
    let (mut f_term, mut g_term) = (Dd::from_f64(1.0), Dd::from_f64(x));
    let (mut f, mut g) = (f_term, g_term);
    for k in 1..200 {
        let k3 = f64::from(3 * k);
        f_term = f_term.mul(cube).div_f64((k3 - 1.0) * k3);
        g_term = g_term.mul(cube).div_f64(k3 * (k3 + 1.0));
        f = f.add(f_term);
        g = g.add(g_term);
        // Ai is of order 1/10 or more here: an absolute bound suffices.
        if f_term.hi.abs() + g_term.hi.abs() <= 1e-20 {
            break;
        }
    }
    AI_0.mul(f).sub(MINUS_AI_PRIME_0.mul(g)).to_f64()
}

/// Ai(-z) for z >= 10: with uₖ = Γ(3k + 1/2) / (54ᵏ k! Γ(k + 1/2)),
/// √π z^(1/4) Ai(-z) is cos(ζ - π/4) Σ (-1)ᵏ u₂ₖ ζ^(-2k) plus
/// sin(ζ - π/4) Σ (-1)ᵏ u₂ₖ₊₁ ζ^(-2k-1).
fn airy_negative(z: f64) -> f64 {
    let root = z.sqrt();
    // 2 z √z / 3 in PyTorch's order, so ζ overflows (and Ai is NaN) where
    // PyTorch's does.
    let zeta = 2.0 * z * root / 3.0;
    let (cos_sum, sin_sum) = asymptotic_halves(|k| {
        (3.0 * k - 0.5) * (3.0 * k - 1.5) * (3.0 * k - 2.5) / (54.0 * k * (k - 0.5) * zeta)
    });
    // cos and sin of ζ - π/4 from those of ζ, without rounding ζ - π/4.
    let (s, c) = zeta.sin_cos();
    let phase = cos_sum * (c + s) + sin_sum * (s - c);
    phase * FRAC_1_SQRT_2 / (PI.sqrt() * root.sqrt())
}

/// Ai(x); NaN at ±inf, as PyTorch's kernel gives.
fn airy_ai_value(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    if x < NEGATIVE_LIMIT {
        return airy_negative(-x);
    }
    if x <= 1.0 {
        return airy_maclaurin(x);
    }
    let zeta = 2.0 / 3.0 * x * x.sqrt();
    if zeta > 800.0 {
        // e^-ζ underflows, and the integral's step would vanish at x = inf.
        return 0.0;
    }
    (x / 3.0).sqrt() / PI * scaled_k_integral(1.0 / 3.0, zeta) * (-zeta).exp()
}

/// The Airy function Ai(x), without a gradient (PyTorch records none).
pub fn airy_ai(a: &Tensor) -> Result<Tensor> {
    real_map(a, "airy_ai_cpu", airy_ai_value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::bessel::tests::close;

    #[test]
    fn airy_ai_known_values() {
        let known = [
            (0.0, 0.355_028_053_887_817_2),
            (1.0, 0.135_292_416_312_881_4),
            (2.5, 0.015_725_923_380_470_49),
            (30.0, 3.208_217_591_550_495_4e-49),
            (-5.0, 0.350_761_009_024_114_33),
            (-9.999_999, 0.040_242_234_751_285_37),
            (-30.0, -0.087_968_188_456_842_16),
        ];
        // 1e-13: at -30 the rounding of ζ to its ulp moves Ai by 4e-14 of its value.
        for (x, expected) in known {
            assert!(close(airy_ai_value(x), expected, 1e-13), "{x}");
        }
        // Continuous across the switches.
        assert!(close(airy_ai_value(1.0 + 1e-12), airy_ai_value(1.0), 1e-11));
        let below = NEGATIVE_LIMIT * (1.0 + 1e-15);
        assert!(close(
            airy_ai_value(below),
            airy_ai_value(NEGATIVE_LIMIT),
            1e-12
        ));
        // Ai'' = x Ai by central differences.
        let h = 1e-4;
        for x in [-12.0, -3.0, 0.5, 4.0] {
            let second =
                (airy_ai_value(x + h) - 2.0 * airy_ai_value(x) + airy_ai_value(x - h)) / (h * h);
            assert!(
                (second - x * airy_ai_value(x)).abs() < 1e-6 * x.abs().max(1.0),
                "{x}"
            );
        }
        assert_eq!(airy_ai_value(200.0), 0.0);
        assert!(airy_ai_value(f64::INFINITY).is_nan() && airy_ai_value(f64::NEG_INFINITY).is_nan());
        assert!(airy_ai_value(f64::NAN).is_nan());
    }
}
