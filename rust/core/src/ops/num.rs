//! Arithmetic traits over element types, so one generic kernel serves every
//! dtype an op supports.

use super::complex_math;
use crate::tensor::ScalarConvert;
use num_complex::{Complex32, Complex64};

/// Arithmetic every dtype has (bool: `+` is or, `*` is and, as in PyTorch).
pub trait Arith: ScalarConvert {
    fn zero() -> Self;
    fn one() -> Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
}

/// Floating and complex elements: the transcendental functions.
pub trait Float: Arith + std::ops::Neg<Output = Self> {
    type Real: RealFloat;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sqrt(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn tanh(self) -> Self;
    fn pow_el(self, e: Self) -> Self;
    fn conj(self) -> Self;
    fn abs_val(self) -> Self::Real;
    fn from_real(r: Self::Real) -> Self;
    fn from_f64(v: f64) -> Self;
}

/// Real floating elements.
pub trait RealFloat: Float<Real = Self> + PartialOrd {
    fn is_nan(self) -> bool;
    fn is_finite(self) -> bool;
    fn round_even(self) -> Self;
    fn to_f64(self) -> f64;
    fn erf(self) -> Self;
    /// ln(1 + z) for z in [0, 1].
    fn ln_1p_unit(self) -> Self;
}

/// Ordered elements (bool, int64, float32, float64).
pub trait Real: Arith + PartialOrd {
    /// NaN-propagating maximum and minimum, as PyTorch's `maximum`.
    fn max_nan(self, o: Self) -> Self;
    fn min_nan(self, o: Self) -> Self;
    fn is_nan_val(self) -> bool;
    /// How many low bits of [`Real::order_key`] can be set.
    const ORDER_KEY_BITS: u32;
    /// A key whose unsigned order is the order of `sort`: every NaN equal
    /// and above every number, and -0.0 equal to 0.0.
    fn order_key(self) -> u64;
}

macro_rules! arith_num {
    ($($t:ty: $zero:expr, $one:expr);*) => {$(
        impl Arith for $t {
            #[inline(always)] fn zero() -> Self { $zero }
            #[inline(always)] fn one() -> Self { $one }
            #[inline(always)] fn add(self, o: Self) -> Self { self + o }
            #[inline(always)] fn sub(self, o: Self) -> Self { self - o }
            #[inline(always)] fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)] fn div(self, o: Self) -> Self { self / o }
        }
    )*};
}
arith_num!(f32: 0.0, 1.0; f64: 0.0, 1.0; Complex32: Complex32::new(0.0, 0.0), Complex32::new(1.0, 0.0);
           Complex64: Complex64::new(0.0, 0.0), Complex64::new(1.0, 0.0));

macro_rules! arith_int {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn zero() -> Self {
                0
            }
            fn one() -> Self {
                1
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            /// Integer division truncates; division by zero is checked by callers.
            #[inline(always)]
            fn div(self, o: Self) -> Self {
                if o == 0 {
                    0
                } else {
                    self.wrapping_div(o)
                }
            }
        }
    )*};
}
arith_int!(u8, i8, i16, i32, i64);

impl Arith for bool {
    fn zero() -> Self {
        false
    }
    fn one() -> Self {
        true
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self ^ o
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        self & o
    }
}

macro_rules! real_float {
    ($($t:ty: $bits:ty, $exp:path, $tanh:path, $erf:path, $ln_1p_unit:path);*) => {$(
        impl Float for $t {
            type Real = $t;
            #[inline(always)] fn exp(self) -> Self { $exp(self) }
            #[inline(always)] fn ln(self) -> Self { <$t>::ln(self) }
            #[inline(always)] fn sqrt(self) -> Self { <$t>::sqrt(self) }
            #[inline(always)] fn sin(self) -> Self { <$t>::sin(self) }
            #[inline(always)] fn cos(self) -> Self { <$t>::cos(self) }
            #[inline(always)] fn tan(self) -> Self { <$t>::tan(self) }
            #[inline(always)] fn tanh(self) -> Self { $tanh(self) }
            #[inline(always)] fn pow_el(self, e: Self) -> Self { <$t>::powf(self, e) }
            #[inline(always)] fn conj(self) -> Self { self }
            #[inline(always)] fn abs_val(self) -> Self { <$t>::abs(self) }
            #[inline(always)] fn from_real(r: Self) -> Self { r }
            #[inline(always)] fn from_f64(v: f64) -> Self { v as $t }
        }
        impl RealFloat for $t {
            #[inline(always)] fn is_nan(self) -> bool { <$t>::is_nan(self) }
            #[inline(always)] fn is_finite(self) -> bool { <$t>::is_finite(self) }
            #[inline(always)] fn round_even(self) -> Self { <$t>::round_ties_even(self) }
            #[inline(always)] fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)] fn erf(self) -> Self { $erf(self) }
            #[inline(always)] fn ln_1p_unit(self) -> Self { $ln_1p_unit(self) }
        }
        impl Real for $t {
            #[inline(always)] fn max_nan(self, o: Self) -> Self { if self.is_nan() || o.is_nan() { <$t>::NAN } else if self >= o { self } else { o } }
            #[inline(always)] fn min_nan(self, o: Self) -> Self { if self.is_nan() || o.is_nan() { <$t>::NAN } else if self <= o { self } else { o } }
            #[inline(always)] fn is_nan_val(self) -> bool { self.is_nan() }
            const ORDER_KEY_BITS: u32 = <$bits>::BITS;
            #[inline(always)]
            fn order_key(self) -> u64 {
                // Adding 0.0 turns -0.0 into 0.0. Flipping every bit of a
                // negative number and the sign bit of a positive one makes
                // the unsigned order of the bits the order of the values.
                let bits = if self.is_nan() { <$t>::NAN } else { self + 0.0 }.to_bits();
                let sign = 1 << (<$bits>::BITS - 1);
                (if bits & sign != 0 { !bits } else { bits | sign }) as u64
            }
        }
    )*};
}
// float32 uses the vectorisable approximations (within 2 ulp); float64
// keeps libm, whose accuracy gradient checks rely on.
real_float!(
    f32: u32, super::fastmath::exp_f32, super::fastmath::tanh_f32, super::fastmath::erf_f32,
        super::fastmath::ln_1p_unit_f32;
    f64: u64, f64::exp, f64::tanh, libm::erf, f64::ln_1p
);

// The functions with branch cuts, poles or special values come from
// `complex_math` (C99's values, no cancellation), complex64 computed in
// complex128 and rounded once.
macro_rules! complex_float {
    ($($t:ty: $r:ty, $widen:path, $narrow:path);*) => {$(
        impl Float for $t {
            type Real = $r;
            #[inline(always)] fn exp(self) -> Self { <$t>::exp(self) }
            fn ln(self) -> Self { $narrow(complex_math::ln($widen(self))) }
            fn sqrt(self) -> Self { $narrow(complex_math::sqrt($widen(self))) }
            fn sin(self) -> Self { $narrow(complex_math::sin($widen(self))) }
            fn cos(self) -> Self { $narrow(complex_math::cos($widen(self))) }
            fn tan(self) -> Self { $narrow(complex_math::tan($widen(self))) }
            fn tanh(self) -> Self { $narrow(complex_math::tanh($widen(self))) }
            #[inline(always)] fn pow_el(self, e: Self) -> Self { <$t>::powc(self, e) }
            #[inline(always)] fn conj(self) -> Self { <$t>::conj(&self) }
            #[inline(always)] fn abs_val(self) -> $r { self.norm() }
            #[inline(always)] fn from_real(r: $r) -> Self { <$t>::new(r, 0.0) }
            #[inline(always)] fn from_f64(v: f64) -> Self { <$t>::new(v as $r, 0.0) }
        }
    )*};
}
complex_float!(
    Complex32: f32, complex_math::widen, complex_math::narrow;
    Complex64: f64, std::convert::identity, std::convert::identity
);

macro_rules! real_int {
    ($($t:ty: $bits:expr, $to_key:expr);*) => {$(
        impl Real for $t {
            fn max_nan(self, o: Self) -> Self {
                self.max(o)
            }
            fn min_nan(self, o: Self) -> Self {
                self.min(o)
            }
            fn is_nan_val(self) -> bool {
                false
            }
            const ORDER_KEY_BITS: u32 = $bits;
            fn order_key(self) -> u64 {
                $to_key(self)
            }
        }
    )*};
}
// Signed values shifted by the sign bit, so the key's unsigned order is theirs.
real_int!(u8: 8, |x: u8| x as u64;
          i8: 8, |x: i8| (x as u8 ^ 0x80) as u64;
          i16: 16, |x: i16| (x as u16 ^ 0x8000) as u64;
          i32: 32, |x: i32| (x as u32 ^ 0x8000_0000) as u64;
          i64: 64, |x: i64| (x as u64) ^ (1 << 63));

impl Real for bool {
    fn max_nan(self, o: Self) -> Self {
        self | o
    }
    fn min_nan(self, o: Self) -> Self {
        self & o
    }
    fn is_nan_val(self) -> bool {
        false
    }
    const ORDER_KEY_BITS: u32 = 1;
    fn order_key(self) -> u64 {
        self as u64
    }
}

/// Runs `$body` with `$T` bound to the element type of a floating or complex
/// `$dtype`; other dtypes produce `$err`.
#[macro_export]
macro_rules! with_float {
    ($dtype:expr, $T:ident => $body:expr, $err:expr) => {
        match $dtype {
            $crate::DType::Float32 => {
                type $T = f32;
                $body
            }
            $crate::DType::Float64 => {
                type $T = f64;
                $body
            }
            $crate::DType::Complex64 => {
                type $T = num_complex::Complex32;
                $body
            }
            $crate::DType::Complex128 => {
                type $T = num_complex::Complex64;
                $body
            }
            _ => $err,
        }
    };
}

/// Runs `$body` with `$T` bound to a real floating element type.
#[macro_export]
macro_rules! with_real_float {
    ($dtype:expr, $T:ident => $body:expr, $err:expr) => {
        match $dtype {
            $crate::DType::Float32 => {
                type $T = f32;
                $body
            }
            $crate::DType::Float64 => {
                type $T = f64;
                $body
            }
            _ => $err,
        }
    };
}

/// Runs `$body` with `$T` bound to the element type of an integer `$dtype`
/// (not bool); other dtypes produce `$err`.
#[macro_export]
macro_rules! with_integer {
    ($dtype:expr, $T:ident => $body:expr, $err:expr) => {
        match $dtype {
            $crate::DType::UInt8 => {
                type $T = u8;
                $body
            }
            $crate::DType::Int8 => {
                type $T = i8;
                $body
            }
            $crate::DType::Int16 => {
                type $T = i16;
                $body
            }
            $crate::DType::Int32 => {
                type $T = i32;
                $body
            }
            $crate::DType::Int64 => {
                type $T = i64;
                $body
            }
            _ => $err,
        }
    };
}

/// Runs `$body` with `$T` bound to an ordered (non-complex) element type.
#[macro_export]
macro_rules! with_real {
    ($dtype:expr, $T:ident => $body:expr, $err:expr) => {
        match $dtype {
            $crate::DType::Bool => {
                type $T = bool;
                $body
            }
            $crate::DType::Float32 => {
                type $T = f32;
                $body
            }
            $crate::DType::Float64 => {
                type $T = f64;
                $body
            }
            integer => $crate::with_integer!(integer, $T => $body, $err),
        }
    };
}
