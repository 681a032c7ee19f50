//! Branch-free `exp`, `tanh`, `erf`, `erfc` and `ln_1p` for float32 that the compiler
//! vectorises: libm's scalar calls cost most of the time of large elementwise kernels.
//! Each stays within 2 ulp of the correctly rounded result (tested below).

const LOG2_E: f32 = std::f32::consts::LOG2_E;
// ln 2 split so that `n * LN2_HI` is exact for the |n| we meet.
const LN2_HI: f32 = 0.693_145_75;
const LN2_LO: f32 = 1.428_606_8e-6;

/// `2^n` for an integer `n` in the normal exponent range.
#[inline(always)]
fn pow2i(n: i32) -> f32 {
    f32::from_bits(((n + 127) as u32) << 23)
}

/// Adding and subtracting 1.5 * 2^23 rounds to the nearest integer with
/// plain SSE2 arithmetic (`f32::round` is a libm call there).
const ROUNDER: f32 = 12_582_912.0;

/// e^x: range reduction x = n ln2 + r with |r| <= ln2/2, a degree-7 Taylor
/// polynomial for e^r, and the scale 2^n applied in two halves so that
/// results in the subnormal range stay exact.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    let xc = x.clamp(-104.0, 89.0);
    let shifted = xc * LOG2_E + ROUNDER;
    let n = shifted - ROUNDER;
    // The integer n sits in the low mantissa bits of `shifted`; reading it
    // there avoids a float-to-int conversion that does not vectorise.
    let ni = shifted.to_bits() as i32 - ROUNDER.to_bits() as i32;
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0
                        + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    let half = ni >> 1;
    let y = p * pow2i(half) * pow2i(ni - half);
    if x.is_nan() {
        x
    } else if x > 88.722_84 {
        f32::INFINITY
    } else {
        y
    }
}

/// e^x - 1 for 0 <= x <= 89: x = n ln2 + r with |r| <= ln2/2, then
/// e^x - 1 = 2^n (e^r - 1) + (2^n - 1). For small x (n = 0) that is e^r - 1
/// itself, computed as r + r^2 q(r) so that it keeps full relative precision.
#[inline(always)]
fn expm1_nonneg_f32(x: f32) -> f32 {
    let shifted = x * LOG2_E + ROUNDER;
    let n = shifted - ROUNDER;
    let ni = shifted.to_bits() as i32 - ROUNDER.to_bits() as i32;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    // Taylor series of (e^r - 1 - r) / r^2 through r^6, the first omitted
    // term below 0.02 ulp for |r| <= ln2/2; evaluated by Estrin's scheme,
    // whose shorter dependency chain lets more elements overlap in flight.
    let r2 = r * r;
    let r4 = r2 * r2;
    let q = ((0.5 + r * (1.0 / 6.0)) + r2 * (1.0 / 24.0 + r * (1.0 / 120.0)))
        + r4 * ((1.0 / 720.0 + r * (1.0 / 5040.0)) + r2 * (1.0 / 40320.0));
    let em = r + r2 * q;
    let scale = pow2i(ni);
    scale * em + (scale - 1.0)
}

/// tanh(x) = sign(x) u / (u + 2) with u = e^(2|x|) - 1: one polynomial and
/// one division for every x, with no cancellation near zero.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    // tanh rounds to 1 in float32 from |x| > 9.01; the clamp keeps u finite.
    // Written as a comparison so that NaN passes through to the result.
    let a = x.abs();
    let a = if a > 10.0 { 10.0 } else { a };
    let u = expm1_nonneg_f32(2.0 * a);
    (u / (u + 2.0)).copysign(x)
}

/// erf(x) = x P(x^2) for |x| < 0.8, else 1 - e^(-x^2) t Q(t) with
/// t = 1 / (1 + |x|/2); both polynomials are least-squares fits of relative
/// error (about 1e-8 before float32 rounding). Both sides are computed and
/// one selected, so the loop has no branch.
#[inline(always)]
pub fn erf_f32(x: f32) -> f32 {
    const NEAR: [f32; 6] = [
        std::f32::consts::FRAC_2_SQRT_PI,
        -0.376_126_1,
        0.112_832_55,
        -0.026_827_581,
        0.005_098_199_5,
        -0.000_662_281_1,
    ];
    const FAR: [f32; 8] = [
        0.282_336_95,
        0.278_331_34,
        0.271_425_37,
        0.090_066_76,
        0.251_962_1,
        -0.161_448_03,
        -0.055_107_83,
        0.042_588_26,
    ];
    // erf rounds to 1 in float32 from |x| > 3.92; the clamp keeps e^(-x^2)
    // in range. Written as a comparison so that NaN passes through.
    let a = x.abs();
    let a = if a > 10.0 { 10.0 } else { a };
    let u = a * a;
    let near = a * NEAR.iter().rev().fold(0.0, |p, &c| p * u + c);
    let t = 1.0 / (1.0 + 0.5 * a);
    let far = 1.0 - exp_f32(-u) * t * FAR.iter().rev().fold(0.0, |q, &c| q * t + c);
    let r = if a < 0.8 { near } else { far };
    r.copysign(x)
}

/// e^y for -104 <= y <= 0 in double precision, to about 1e-11 relative:
/// y = n ln2 + r with |r| <= ln2/2 and e^r by its Taylor series through
/// r^9. Only `erfc_f32` needs it, whose float32 result hides the rest.
#[inline(always)]
fn exp_nonpos_f64(y: f64) -> f64 {
    const ROUNDER: f64 = 6_755_399_441_055_744.0; // 1.5 * 2^52
    const LN2_HI: f64 = 0.693_147_180_369_123_8;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    let shifted = y * std::f64::consts::LOG2_E + ROUNDER;
    let n = shifted - ROUNDER;
    let ni = shifted.to_bits() as i64 - ROUNDER.to_bits() as i64;
    // 1/k! for k = 0..=9: multiplied, not divided (a division per term
    // took most of the kernel's time).
    const TAYLOR: [f64; 10] = [
        1.0,
        1.0,
        1.0 / 2.0,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5040.0,
        1.0 / 40320.0,
        1.0 / 362_880.0,
    ];
    let r = (y - n * LN2_HI) - n * LN2_LO;
    let p = TAYLOR.iter().rev().fold(0.0, |p, &c| p * r + c);
    p * f64::from_bits(((ni + 1023) as u64) << 52)
}

/// erfc(x) = 1 - x P(x^2) for |x| < 0.8, else e^(-x^2) t R(t) with
/// t = 1 / (1 + |x|/2), and 2 - erfc(|x|) for negative x. Evaluated in
/// double precision, where x^2 is exact and the fits (least squares of
/// relative error, about 6e-11 and 5e-11) leave the float32 result
/// correctly rounded but for rare halfway cases, down to the subnormal tail
/// (erfc underflows to 0 from x > 10.06). Both sides are computed and one
/// selected, so the loop has no branch.
#[inline(always)]
pub fn erfc_f32(x: f32) -> f32 {
    const NEAR: [f64; 7] = [
        1.128_379_167_027_447,
        -0.376_126_378_832_877_03,
        0.112_837_664_947_473_24,
        -0.026_863_822_366_797_255,
        0.005_213_459_887_934_542,
        -0.000_830_343_035_120_9,
        9.149_706_260_942_747e-5,
    ];
    const FAR: [f64; 11] = [
        0.282_096_342_055_292_27,
        0.282_043_005_815_411_1,
        0.247_599_188_209_620_74,
        0.169_686_365_365_263_5,
        0.120_831_179_335_242_54,
        -0.145_089_761_834_362_48,
        0.308_961_462_340_344_4,
        -0.691_846_525_100_009_8,
        0.692_390_358_154_417_3,
        -0.329_402_151_356_856_73,
        0.062_733_467_246_872_38,
    ];
    // The clamp keeps e^(-x^2) in range where the result has underflowed
    // anyway; written as a comparison so that NaN passes through.
    let a = f64::from(x.abs());
    let a = if a > 10.1 { 10.1 } else { a };
    let u = a * a;
    let near = 1.0 - a * NEAR.iter().rev().fold(0.0, |p, &c| p * u + c);
    let t = 1.0 / (1.0 + 0.5 * a);
    let far = exp_nonpos_f64(-u) * t * FAR.iter().rev().fold(0.0, |q, &c| q * t + c);
    let tail = if a < 0.8 { near } else { far };
    let r = if x < 0.0 { 2.0 - tail } else { tail };
    r as f32
}

/// ln(1 + z) for 0 <= z <= 1 (softplus's `ln(1 + e^-|x|)`): 1 + z = 2^k m
/// with m within a factor sqrt(2) of 1, and ln m = 2 atanh(s) with
/// s = (m - 1) / (m + 1), |s| <= 0.172, by its series through s^9. For
/// k = 0, m - 1 is z itself, so small z keep their precision.
#[inline(always)]
pub fn ln_1p_unit_f32(z: f32) -> f32 {
    let above = z > std::f32::consts::SQRT_2 - 1.0;
    let f = if above { (z - 1.0) * 0.5 } else { z };
    let k = if above { std::f32::consts::LN_2 } else { 0.0 };
    let s = f / (2.0 + f);
    let s2 = s * s;
    let q = 1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0)));
    let two_s = 2.0 * s;
    k + (two_s + two_s * s2 * q)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulp_distance(a: f32, b: f32) -> u32 {
        if a == b {
            return 0;
        }
        let (ia, ib) = (a.to_bits() as i64, b.to_bits() as i64);
        if (ia < 0) != (ib < 0) {
            return u32::MAX;
        }
        (ia - ib).unsigned_abs() as u32
    }

    fn sweep(lo: f32, hi: f32, n: usize) -> impl Iterator<Item = f32> {
        (0..=n).map(move |i| lo + (hi - lo) * i as f32 / n as f32)
    }

    #[test]
    fn exp_is_within_two_ulp() {
        for x in sweep(-103.0, 88.7, 200_000) {
            let want = (x as f64).exp() as f32;
            assert!(
                ulp_distance(exp_f32(x), want) <= 2,
                "exp({x}) = {} want {want}",
                exp_f32(x)
            );
        }
        assert_eq!(exp_f32(100.0), f32::INFINITY);
        assert_eq!(exp_f32(-200.0), 0.0);
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
    }

    #[test]
    fn erf_is_within_two_ulp() {
        let tiny = (-126..0).map(|e| 2f32.powi(e));
        for x in sweep(-6.0, 6.0, 400_000).chain(tiny) {
            for x in [x, -x] {
                let want = libm::erf(x as f64) as f32;
                assert!(
                    ulp_distance(erf_f32(x), want) <= 2,
                    "erf({x}) = {} want {want}",
                    erf_f32(x)
                );
            }
        }
        assert_eq!(erf_f32(f32::INFINITY), 1.0);
        assert_eq!(erf_f32(f32::NEG_INFINITY), -1.0);
        assert!(erf_f32(f32::NAN).is_nan());
        assert_eq!(erf_f32(0.0), 0.0);
    }

    #[test]
    fn erfc_is_within_one_ulp() {
        let tiny = (-126..0).map(|e| 2f32.powi(e));
        for x in sweep(-11.0, 11.0, 800_000).chain(tiny) {
            for x in [x, -x] {
                let want = libm::erfc(x as f64) as f32;
                assert!(
                    ulp_distance(erfc_f32(x), want) <= 1,
                    "erfc({x}) = {} want {want}",
                    erfc_f32(x)
                );
            }
        }
        assert_eq!(erfc_f32(f32::INFINITY), 0.0);
        assert_eq!(erfc_f32(f32::NEG_INFINITY), 2.0);
        assert_eq!(erfc_f32(0.0), 1.0);
        assert_eq!(erfc_f32(-0.0), 1.0);
        assert!(erfc_f32(f32::NAN).is_nan());
    }

    #[test]
    fn ln_1p_unit_is_within_two_ulp() {
        let tiny = (-149..0).map(|e| 2f32.powi(e));
        for z in sweep(0.0, 1.0, 400_000).chain(tiny) {
            let want = (z as f64).ln_1p() as f32;
            assert!(
                ulp_distance(ln_1p_unit_f32(z), want) <= 2,
                "ln_1p({z}) = {} want {want}",
                ln_1p_unit_f32(z)
            );
        }
        assert!(ln_1p_unit_f32(f32::NAN).is_nan());
    }

    #[test]
    fn tanh_is_within_two_ulp() {
        for x in sweep(-12.0, 12.0, 200_000).chain(sweep(-1e-3, 1e-3, 10_000)) {
            let want = (x as f64).tanh() as f32;
            assert!(
                ulp_distance(tanh_f32(x), want) <= 2,
                "tanh({x}) = {} want {want}",
                tanh_f32(x)
            );
        }
        for e in -149..0 {
            for m in 0..64 {
                let x = (1.0 + m as f32 / 64.0) * 2f32.powi(e);
                for x in [x, -x] {
                    let want = (x as f64).tanh() as f32;
                    assert!(ulp_distance(tanh_f32(x), want) <= 2, "tanh({x})");
                }
            }
        }
        assert_eq!(tanh_f32(50.0), 1.0);
        assert_eq!(tanh_f32(-50.0), -1.0);
        assert!(tanh_f32(f32::NAN).is_nan());
        assert_eq!(tanh_f32(0.0), 0.0);
    }
}
