//! The complex kernels of the `real_unary!` ops (`unary.rs`), over `Complex64`. Values,
//! branch cuts and the signs of zeros follow PyTorch, whose CPU kernels are
//! C99's (Annex G) but for `acos`, `expm1` and `reciprocal`, noted there.
//! The inverse functions use Kahan's formulas ("Branch cuts for complex
//! elementary functions", 1987): no cancellation, near 0 and the branch
//! points included.

use num_complex::{Complex32, Complex64 as C};
use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, LN_10, LN_2};

/// Past this modulus the asymptotic forms are exact to rounding, and
/// the general ones would overflow (they square the parts).
const LARGE: f64 = 1e150;

#[inline(always)]
pub fn widen(z: Complex32) -> C {
    C::new(z.re as f64, z.im as f64)
}

#[inline(always)]
pub fn narrow(z: C) -> Complex32 {
    Complex32::new(z.re as f32, z.im as f32)
}

/// `a * b` rounded, and the rounding error.
#[inline(always)]
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// `a + b` rounded, and the rounding error.
#[inline(always)]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `a + x^2 + y^2`, exact until the last rounding but for terms below
/// 2^-106 of the largest: accurate even when the sum cancels.
fn plus_squares(a: f64, x: f64, y: f64) -> f64 {
    let (hx, lx) = two_prod(x, x);
    let (hy, ly) = two_prod(y, y);
    let (s, e1) = two_sum(a, hx);
    let (s, e2) = two_sum(s, hy);
    s + (e1 + e2 + lx + ly)
}

/// `ln |x + iy|`, accurate relative to the result near |z| = 1 too.
fn ln_abs(x: f64, y: f64) -> f64 {
    let (x, y) = (x.abs(), y.abs());
    let (big, small) = if x >= y { (x, y) } else { (y, x) };
    if big.is_infinite() || small.is_infinite() {
        return f64::INFINITY;
    }
    if big < 2.0 {
        let r2 = big * big + small * small;
        if (0.5..=2.0).contains(&r2) {
            return 0.5 * plus_squares(-1.0, big, small).ln_1p();
        }
    } else if big > 1e300 {
        return (0.25 * big).hypot(0.25 * small).ln() + 2.0 * LN_2;
    }
    // NaN and 0 (-inf) fall through.
    big.hypot(small).ln()
}

/// Principal square root, each part to a few ulp (C99 special values).
pub fn sqrt(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y.is_infinite() {
        return C::new(f64::INFINITY, y);
    }
    if x.is_infinite() {
        return match (x > 0.0, y.is_nan()) {
            (true, true) => C::new(x, y),
            (true, false) => C::new(x, 0.0f64.copysign(y)),
            (false, true) => C::new(y, f64::INFINITY),
            (false, false) => C::new(0.0, f64::INFINITY.copysign(y)),
        };
    }
    if x.is_nan() || y.is_nan() {
        return C::new(f64::NAN, f64::NAN);
    }
    if x == 0.0 && y == 0.0 {
        return C::new(0.0, y);
    }
    let (ax, ay) = (x.abs(), y.abs());
    let m = ax.max(ay);
    // t = sqrt((|x| + |z|) / 2), scaled by an even power of two when
    // |z| would overflow or the sum lose bits below the normal range.
    let t = if m > 1e300 {
        let (sx, sy) = (0.25 * ax, 0.25 * ay);
        2.0 * (0.5 * (sx + sx.hypot(sy))).sqrt()
    } else if m < 1e-300 {
        const UP: f64 = 1.157_920_892_373_162e77; // 2^256
        const DOWN: f64 = 2.938_735_877_055_719e-39; // 2^-128
        let (sx, sy) = (UP * ax, UP * ay);
        DOWN * (0.5 * (sx + sx.hypot(sy))).sqrt()
    } else {
        (0.5 * (ax + ax.hypot(ay))).sqrt()
    };
    if x >= 0.0 {
        C::new(t, y / (2.0 * t))
    } else {
        C::new(ay / (2.0 * t), t.copysign(y))
    }
}

/// `1 / z` by Smith's algorithm, written as PyTorch's complex division
/// (`c10::complex::operator/=`) with numerator 1, so the results agree to
/// the bit (1 / 0 is inf + NaN i there).
pub fn reciprocal(z: C) -> C {
    let (a, b) = (1.0f64, 0.0f64);
    let (c, d) = (z.re, z.im);
    let (abs_c, abs_d) = (c.abs(), d.abs());
    if abs_c >= abs_d {
        if abs_c == 0.0 && abs_d == 0.0 {
            return C::new(a / abs_c, b / abs_d);
        }
        let rat = d / c;
        let scl = 1.0 / (c + d * rat);
        C::new((a + b * rat) * scl, (b - a * rat) * scl)
    } else {
        let rat = c / d;
        let scl = 1.0 / (d + c * rat);
        C::new((a * rat + b) * scl, (b * rat - a) * scl)
    }
}

/// `1 / sqrt(z)`, as PyTorch: the reciprocal of the root.
pub fn rsqrt(z: C) -> C {
    reciprocal(sqrt(z))
}

/// `2^z = 2^x cis(y ln 2)` (PyTorch takes `exp(z ln 2)`, which rounds
/// `x ln 2` first and so loses `|x|` ulps).
pub fn exp2(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        return C::new(x.exp2(), y);
    }
    if x.is_infinite() && !y.is_finite() {
        return if x > 0.0 {
            C::new(x, f64::NAN)
        } else {
            C::new(0.0, 0.0f64.copysign(y))
        };
    }
    let (mut s, mut c) = (y * LN_2).sin_cos();
    // 2^x overflows before 2^x cos(.) may: the factors are scaled by
    // 2^1000 (exactly) first, for as long as a finite result is possible.
    const TWO_1000: f64 = 1.071_508_607_186_267_3e301;
    let mut x = x;
    for _ in 0..2 {
        if x > 1000.0 {
            (s, c, x) = (s * TWO_1000, c * TWO_1000, x - 1000.0);
        }
    }
    let r = x.exp2();
    C::new(r * c, r * s)
}

/// `exp(z) - 1 = (expm1(x) cos y - 2 sin^2(y/2)) + i e^x sin y`,
/// PyTorch's formula (and special values: expm1(inf + 0i) = inf + NaN i).
pub fn expm1(z: C) -> C {
    let (x, y) = (z.re, z.im);
    let a = (0.5 * y).sin();
    C::new(x.exp_m1() * y.cos() - 2.0 * a * a, x.exp() * y.sin())
}

/// Principal logarithm, its real part accurate near |z| = 1 as well.
pub fn ln(z: C) -> C {
    C::new(ln_abs(z.re, z.im), z.im.atan2(z.re))
}

pub fn log2(z: C) -> C {
    let l = ln(z);
    C::new(l.re / LN_2, l.im / LN_2)
}

pub fn log10(z: C) -> C {
    let l = ln(z);
    C::new(l.re / LN_10, l.im / LN_10)
}

/// `log(1 + z)`: `Re = log1p(2x + x^2 + y^2) / 2`, the sum taken exactly,
/// wherever |1 + z| is within a factor sqrt(2) of 1, so that small z and
/// the circle |1 + z| = 1 keep their relative precision.
pub fn log1p(z: C) -> C {
    let (x, y) = (z.re, z.im);
    let im = y.atan2(1.0 + x);
    if x.abs() < 2.0 && y.abs() < 2.0 {
        let r = plus_squares(2.0 * x, x, y);
        if r == 0.0 && y == 0.0 {
            // z = +-0, returned as it is (PyTorch keeps the sign).
            return C::new(x, im);
        }
        if (-0.5..=1.0).contains(&r) {
            return C::new(0.5 * r.ln_1p(), im);
        }
    }
    C::new(ln_abs(1.0 + x, y), im)
}

/// Past this, e^x overflows, while e^x / 2 times a cosine or sine may
/// not: sinh and cosh, equal to e^|x| / 2 there, scale (as glibc does).
const HALF_EXP_SCALED: f64 = 709.0;

/// `(e^r / 2) a` and `(e^r / 2) b` for `r > 709`, without overflowing
/// before the products do.
fn half_exp_times(r: f64, a: f64, b: f64) -> (f64, f64) {
    let step = HALF_EXP_SCALED.exp();
    // Scaled up before halving, so that subnormal factors keep their bits.
    let (mut a, mut b, mut r) = (a * step * 0.5, b * step * 0.5, r - HALF_EXP_SCALED);
    if r > HALF_EXP_SCALED {
        a *= step;
        b *= step;
        r -= HALF_EXP_SCALED;
    }
    let e = r.exp();
    (a * e, b * e)
}

/// `sinh(x) cos(y) + i cosh(x) sin(y)`, C99's special values.
pub fn sinh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        return C::new(x.sinh(), y);
    }
    if !y.is_finite() {
        if x == 0.0 {
            return C::new(x, f64::NAN);
        }
        if x.is_infinite() {
            return C::new(f64::INFINITY, f64::NAN);
        }
    }
    if x.abs() > HALF_EXP_SCALED {
        let (re, im) = half_exp_times(x.abs(), y.cos(), y.sin());
        return C::new(if x < 0.0 { -re } else { re }, im);
    }
    C::new(x.sinh() * y.cos(), x.cosh() * y.sin())
}

/// `cosh(x) cos(y) + i sinh(x) sin(y)`, C99's special values.
pub fn cosh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        // sinh(x) * y, with an infinite x too; y itself beside a NaN.
        let im = if x.is_sign_negative() && !x.is_nan() {
            -y
        } else {
            y
        };
        return C::new(x.cosh(), im);
    }
    if !y.is_finite() {
        if x == 0.0 {
            return C::new(f64::NAN, 0.0);
        }
        if x.is_infinite() {
            return C::new(f64::INFINITY, f64::NAN);
        }
    }
    if x.abs() > HALF_EXP_SCALED {
        let (re, im) = half_exp_times(x.abs(), y.cos(), y.sin());
        return C::new(re, if x < 0.0 { -im } else { im });
    }
    C::new(x.cosh() * y.cos(), x.sinh() * y.sin())
}

/// `tanh(x + iy) = (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y)`:
/// the denominator is a sum of squares, so nothing cancels. C99's special
/// values, with `tanh(+-0 + i inf) = +-0 + NaN i` (C11's DR 471).
pub fn tanh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_nan() {
        return C::new(x, if y == 0.0 { y } else { f64::NAN });
    }
    if x.is_infinite() {
        // A zero with the sign of sin y cos y, or of y where that has none.
        let im = if y.is_finite() { (2.0 * y).sin() } else { y };
        return C::new(1.0f64.copysign(x), 0.0f64.copysign(im));
    }
    if !y.is_finite() {
        return C::new(if x == 0.0 { x } else { f64::NAN }, f64::NAN);
    }
    // tanh x is 1 to rounding past 22, and the imaginary part is
    // 4 sin y cos y e^(-2|x|) to rounding; cosh^2 would overflow past 355.
    if x.abs() > 22.0 {
        let (s, c) = y.sin_cos();
        return C::new(1.0f64.copysign(x), 4.0 * s * c * (-2.0 * x.abs()).exp());
    }
    let (s, c) = y.sin_cos();
    let sh = x.sinh();
    let den = sh * sh + c * c;
    C::new(sh * x.cosh() / den, s * c / den)
}

/// `sin(z) = -i sinh(iz)` (C99's definition, and its special values).
pub fn sin(z: C) -> C {
    if z.im.is_infinite() && !z.re.is_finite() {
        // NaN + inf i: C99 leaves the infinity's sign open; PyTorch's is +.
        return C::new(f64::NAN, f64::INFINITY);
    }
    let w = sinh(C::new(-z.im, z.re));
    C::new(w.im, -w.re)
}

/// `cos(z) = cosh(iz)`.
pub fn cos(z: C) -> C {
    cosh(C::new(-z.im, z.re))
}

/// `tan(z) = -i tanh(iz)`.
pub fn tan(z: C) -> C {
    let w = tanh(C::new(-z.im, z.re));
    C::new(w.im, -w.re)
}

/// `asinh` of `x + iy` with `x, y >= 0` (sign bits clear).
fn asinh_first_quadrant(x: f64, y: f64) -> (f64, f64) {
    if x.is_infinite() {
        let im = if y.is_nan() {
            y
        } else if y.is_infinite() {
            FRAC_PI_4
        } else {
            0.0
        };
        return (x, im);
    }
    if y.is_infinite() {
        return (y, if x.is_nan() { x } else { FRAC_PI_2 });
    }
    if x.is_nan() || y.is_nan() {
        return (f64::NAN, if y == 0.0 { y } else { f64::NAN });
    }
    if x.max(y) > LARGE {
        // asinh(z) = log(2z) + O(z^-2)
        return (ln_abs(x, y) + LN_2, y.atan2(x));
    }
    if x.max(y) < 1e-150 {
        // asinh(z) = z + O(z^3), exact where the roots below would
        // lose the bits of subnormal parts.
        return (x, y);
    }
    // asinh(z) = -i asin(iz), Kahan's asin with the roots of
    // 1 -+ iz = (1 + y) - ix and (1 - y) + ix: every product below is
    // of two non-negative factors, so nothing cancels.
    let s1 = sqrt(C::new(1.0 + y, -x));
    let s2 = sqrt(C::new(1.0 - y, x));
    let re = libm::asinh(s1.re * s2.im - s1.im * s2.re);
    let im = y.atan2(s1.re * s2.re - s1.im * s2.im);
    (re, im)
}

/// `asinh`, odd and conjugate-symmetric: the first quadrant's value
/// with the signs of `z`'s parts (which places the branch cuts).
pub fn asinh(z: C) -> C {
    let (re, im) = asinh_first_quadrant(z.re.abs(), z.im.abs());
    C::new(re.copysign(z.re), im.copysign(z.im))
}

/// `asin(z) = -i asinh(iz)` (C99's definition).
pub fn asin(z: C) -> C {
    let w = asinh(C::new(-z.im, z.re));
    C::new(w.im, -w.re)
}

/// `acos`: Kahan's formula, accurate near 1 too (PyTorch takes
/// `pi/2 - asin(z)`, which loses digits there, and whose imaginary part
/// is +0 where C99's is -0, on (-1, 1) + 0i: PyTorch's signs are kept).
pub fn acos(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if !x.is_finite() || !y.is_finite() {
        let w = asin(z);
        return C::new(FRAC_PI_2 - w.re, -w.im);
    }
    if x.abs().max(y.abs()) > LARGE {
        // acos(z) = -i log(2z) + O(z^-2), in the half plane of y.
        return C::new(y.abs().atan2(x), -(ln_abs(x, y) + LN_2).copysign(y));
    }
    if x.abs().max(y.abs()) < 1e-150 {
        // acos(z) = pi/2 - z + O(z^3), exact for subnormal parts too.
        return C::new(FRAC_PI_2 - x, if y == 0.0 { 0.0 } else { -y });
    }
    let s1 = sqrt(C::new(1.0 - x, -y));
    let s2 = sqrt(C::new(1.0 + x, y));
    let re = 2.0 * s1.re.atan2(s2.re);
    let im = libm::asinh(s2.re * s1.im - s2.im * s1.re);
    C::new(re, if im == 0.0 { 0.0 } else { im })
}

/// `acosh(z) = +-i acos(z)`, the sign that makes the real part
/// non-negative: |Im acos(z)| + i Re acos(z) with the sign of Im z.
pub fn acosh(z: C) -> C {
    let w = acos(z);
    C::new(w.im.abs(), w.re.copysign(z.im))
}

/// `atanh` of `x + iy` with `x, y >= 0` (sign bits clear).
fn atanh_first_quadrant(x: f64, y: f64) -> (f64, f64) {
    if x.is_nan() || y.is_nan() {
        if y.is_infinite() {
            return (0.0, FRAC_PI_2);
        }
        if x.is_infinite() || x == 0.0 {
            return (0.0, f64::NAN);
        }
        return (f64::NAN, f64::NAN);
    }
    if x.max(y) > LARGE {
        // atanh(z) = 1/z + O(z^-3) + i pi/2: Re = x / |z|^2.
        let re = if x.is_infinite() || y.is_infinite() {
            0.0
        } else {
            let h = (0.5 * x).hypot(0.5 * y);
            0.5 * ((0.5 * x / h) / h)
        };
        return (re, FRAC_PI_2);
    }
    // Re = log(|1 + z|^2 / |1 - z|^2) / 4 = log1p(4x / |1 - z|^2) / 4,
    // Im = arg((1 + z)(1 - conj z)) / 2.
    let re = if (1.0 - x).abs().max(y) < 1e-100 {
        // Near the pole at 1, where |1 - z|^2 would underflow.
        0.5 * (ln_abs(1.0 + x, y) - ln_abs(1.0 - x, y))
    } else {
        0.25 * (4.0 * x / ((1.0 - x) * (1.0 - x) + y * y)).ln_1p()
    };
    let im = 0.5 * (2.0 * y).atan2((1.0 - x) * (1.0 + x) - y * y);
    (re, im)
}

/// `atanh`, odd and conjugate-symmetric (C99 special values).
pub fn atanh(z: C) -> C {
    let (re, im) = atanh_first_quadrant(z.re.abs(), z.im.abs());
    C::new(re.copysign(z.re), im.copysign(z.im))
}

/// `atan(z) = -i atanh(iz)` (C99's definition).
pub fn atan(z: C) -> C {
    let w = atanh(C::new(-z.im, z.re));
    C::new(w.im, -w.re)
}
