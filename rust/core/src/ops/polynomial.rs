//! The orthogonal polynomials of `torch.special` (`chebyshev_polynomial_t`
//! and the others), taking `(x, n)`, which PyTorch does not differentiate
//! (their outputs record no gradient). They follow PyTorch's conventions: n
//! is truncated to an integer, negative (or infinite, or NaN) n gives 0,
//! and the values at the ends of [-1, 1] are exact. The three-term
//! recurrences run in double precision; the Chebyshev polynomials of degree
//! above 6 (T) or 8 (U, V, W) use their closed trigonometric forms inside
//! (-1, 1), as PyTorch's do.

use super::special::{real_zip, zip_dtype};
use crate::tensor::{DType, Tensor};
use crate::Result;

/// n truncated as PyTorch's cast to int64 does on x86: NaN and values out of
/// range become i64::MIN, so they count as negative degrees.
fn degree(n: f64) -> i64 {
    if n.abs() < 9.2e18 {
        n.trunc() as i64
    } else {
        i64::MIN
    }
}

/// Each recurrence step rounded to the result dtype: float32 results
/// overflow (and turn NaN) where PyTorch's float32 kernels do.
type Rounding = fn(f64) -> f64;

fn to_f32(v: f64) -> f64 {
    f64::from(v as f32)
}

fn exact(v: f64) -> f64 {
    v
}

/// p_n by r = step(k, p_{k-1}, p_k) from p₀ = 1 and p₁ = `first`, stopping
/// early once NaN (after an overflow the recurrence stays NaN).
fn recurrence(n: i64, first: f64, round: Rounding, step: impl Fn(f64, f64, f64) -> f64) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let (mut p, mut q) = (1.0, first);
    let mut k = 1i64;
    while k < n && !q.is_nan() {
        let r = round(step(k as f64, p, q));
        p = q;
        q = r;
        k += 1;
    }
    q
}

/// The Chebyshev recurrence r = 2x q - p with p₁ = `first`.
fn chebyshev_recurrence(x: f64, n: i64, first: f64, round: Rounding) -> f64 {
    recurrence(n, first, round, |_, p, q| (x + x) * q - p)
}

/// (-1)ⁿ as ±1.
fn parity(n: i64) -> f64 {
    if n % 2 == 0 {
        1.0
    } else {
        -1.0
    }
}

fn chebyshev_t_value(x: f64, n: i64, round: Rounding) -> f64 {
    if n < 0 {
        return 0.0;
    }
    if x.abs() == 1.0 {
        return if x > 0.0 { 1.0 } else { parity(n) };
    }
    if n > 6 && x.abs() < 1.0 {
        return (n as f64 * x.acos()).cos();
    }
    chebyshev_recurrence(x, n, x, round)
}

fn chebyshev_u_value(x: f64, n: i64, round: Rounding) -> f64 {
    if n < 0 {
        return 0.0;
    }
    let n1 = n as f64 + 1.0;
    if x.abs() == 1.0 {
        return if x > 0.0 { n1 } else { parity(n) * n1 };
    }
    if n > 8 && x.abs() < 1.0 {
        let theta = x.acos();
        return if theta.sin() != 0.0 {
            (n1 * theta).sin() / theta.sin()
        } else {
            n1 * (n1 * theta).cos() / x
        };
    }
    chebyshev_recurrence(x, n, x + x, round)
}

fn chebyshev_v_value(x: f64, n: i64, round: Rounding) -> f64 {
    if n < 0 {
        return 0.0;
    }
    let odd = 2.0 * n as f64 + 1.0;
    if x.abs() == 1.0 {
        return if x > 0.0 { 1.0 } else { parity(n) * odd };
    }
    if n > 8 && x.abs() < 1.0 {
        let theta = x.acos();
        return if (theta / 2.0).sin() != 1.0 {
            (0.5 * odd * theta).cos() / (theta / 2.0).cos()
        } else {
            parity(n) * odd
        };
    }
    chebyshev_recurrence(x, n, x + x - 1.0, round)
}

fn chebyshev_w_value(x: f64, n: i64, round: Rounding) -> f64 {
    if n < 0 {
        return 0.0;
    }
    let odd = 2.0 * n as f64 + 1.0;
    if x.abs() == 1.0 {
        return if x > 0.0 { odd } else { parity(n) };
    }
    if n > 8 && x.abs() < 1.0 {
        let theta = x.acos();
        return if (theta / 2.0).cos() != 1.0 {
            (0.5 * odd * theta).sin() / (theta / 2.0).sin()
        } else if x > 0.0 {
            odd
        } else {
            parity(n)
        };
    }
    chebyshev_recurrence(x, n, x + x + 1.0, round)
}

/// The physicists' Hermite polynomial: H_{k+1} = 2x H_k - 2k H_{k-1}.
fn hermite_h_value(x: f64, n: i64, round: Rounding) -> f64 {
    if n < 0 {
        return 0.0;
    }
    recurrence(n, x + x, round, |k, p, q| (x + x) * q - 2.0 * k * p)
}

/// The probabilists' Hermite polynomial: He_{k+1} = x He_k - k He_{k-1}.
fn hermite_he_value(x: f64, n: i64, round: Rounding) -> f64 {
    if n < 0 {
        return 0.0;
    }
    recurrence(n, x, round, |k, p, q| x * q - k * p)
}

/// L_{k+1} = ((2k + 1 - x) L_k - k L_{k-1}) / (k + 1); 1 at x = 0.
fn laguerre_l_value(x: f64, n: i64, round: Rounding) -> f64 {
    if n < 0 {
        return 0.0;
    }
    if x == 0.0 {
        return 1.0;
    }
    recurrence(n, 1.0 - x, round, |k, p, q| {
        ((k + k + (1.0 - x)) * q - k * p) / (k + 1.0)
    })
}

/// P_{k+1} = ((2k + 1) x P_k - k P_{k-1}) / (k + 1); ±1 at x = ±1.
fn legendre_p_value(x: f64, n: i64, round: Rounding) -> f64 {
    if n < 0 {
        return 0.0;
    }
    if x.abs() == 1.0 {
        return if x > 0.0 { 1.0 } else { parity(n) };
    }
    recurrence(n, x, round, |k, p, q| {
        ((k + k + 1.0) * x * q - k * p) / (k + 1.0)
    })
}

/// One `pub fn name(x, n)` per polynomial: the kernel on (x, degree(n)),
/// or with `shifted`, on (2x - 1, degree(n)), as PyTorch's shifted forms
/// are.
macro_rules! polynomials {
    ($($(#[$doc:meta])* $name:ident => $kernel:ident $(, $shift:ident)?;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(x: &Tensor, n: &Tensor) -> Result<Tensor> {
                let round: Rounding = if zip_dtype(x, n, true) == DType::Float32 {
                    to_f32
                } else {
                    exact
                };
                real_zip(x, n, concat!(stringify!($name), "_cpu"), true, move |x, n| {
                    $(let x = polynomials!(@$shift x);)?
                    $kernel(x, degree(n), round)
                })
            }
        )*
    };
    (@shifted $x:ident) => { $x + $x - 1.0 };
}

polynomials! {
    /// The Chebyshev polynomial of the first kind Tₙ(x).
    chebyshev_polynomial_t => chebyshev_t_value;
    /// The Chebyshev polynomial of the second kind Uₙ(x).
    chebyshev_polynomial_u => chebyshev_u_value;
    /// The Chebyshev polynomial of the third kind Vₙ(x).
    chebyshev_polynomial_v => chebyshev_v_value;
    /// The Chebyshev polynomial of the fourth kind Wₙ(x).
    chebyshev_polynomial_w => chebyshev_w_value;
    /// Tₙ(2x - 1).
    shifted_chebyshev_polynomial_t => chebyshev_t_value, shifted;
    /// Uₙ(2x - 1).
    shifted_chebyshev_polynomial_u => chebyshev_u_value, shifted;
    /// Vₙ(2x - 1).
    shifted_chebyshev_polynomial_v => chebyshev_v_value, shifted;
    /// Wₙ(2x - 1).
    shifted_chebyshev_polynomial_w => chebyshev_w_value, shifted;
    /// The physicists' Hermite polynomial Hₙ(x).
    hermite_polynomial_h => hermite_h_value;
    /// The probabilists' Hermite polynomial Heₙ(x).
    hermite_polynomial_he => hermite_he_value;
    /// The Laguerre polynomial Lₙ(x).
    laguerre_polynomial_l => laguerre_l_value;
    /// The Legendre polynomial Pₙ(x).
    legendre_polynomial_p => legendre_p_value;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polynomial_identities_and_conventions() {
        // Tₙ(cos θ) = cos(nθ) on both sides of the switch to the closed form.
        let theta: f64 = 0.7;
        for n in [2, 5, 6, 7, 30] {
            let t = chebyshev_t_value(theta.cos(), n, exact);
            assert!((t - (n as f64 * theta).cos()).abs() < 1e-13, "{n}");
            let u = chebyshev_u_value(theta.cos(), n, exact);
            let expected = ((n + 1) as f64 * theta).sin() / theta.sin();
            assert!((u - expected).abs() < 1e-12, "{n}");
        }
        // Small degrees in closed form.
        let x = 0.3;
        assert_eq!(chebyshev_v_value(x, 1, exact), 2.0 * x - 1.0);
        assert_eq!(chebyshev_w_value(x, 1, exact), 2.0 * x + 1.0);
        assert!((hermite_h_value(x, 3, exact) - (8.0 * x * x * x - 12.0 * x)).abs() < 1e-15);
        assert!((hermite_he_value(x, 3, exact) - (x * x * x - 3.0 * x)).abs() < 1e-15);
        assert!((laguerre_l_value(x, 2, exact) - (x * x - 4.0 * x + 2.0) / 2.0).abs() < 1e-15);
        assert!((legendre_p_value(x, 2, exact) - (3.0 * x * x - 1.0) / 2.0).abs() < 1e-15);
        // PyTorch's conventions.
        assert_eq!(degree(2.9), 2);
        assert_eq!(degree(-0.5), 0);
        assert!(degree(f64::NAN) < 0 && degree(f64::INFINITY) < 0);
        assert_eq!(chebyshev_t_value(0.5, -1, exact), 0.0);
        assert_eq!(chebyshev_u_value(-1.0, 3, exact), -4.0);
        assert_eq!(chebyshev_v_value(-1.0, 2, exact), 5.0);
        assert_eq!(chebyshev_w_value(1.0, 2, exact), 5.0);
        assert_eq!(laguerre_l_value(0.0, 7, exact), 1.0);
        // Overflow turns the recurrence NaN, as in PyTorch, and stops it.
        assert!(chebyshev_t_value(3.0, 2000, exact).is_nan());
        // In float32 that happens by degree 100, as in PyTorch's float32 kernel.
        assert!(chebyshev_t_value(3.0, 100, exact).is_finite());
        assert!(chebyshev_t_value(3.0, 100, to_f32).is_nan());
    }
}
