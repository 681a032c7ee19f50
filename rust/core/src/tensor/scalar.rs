//! Python-style scalars and exact conversion between element types.

use super::dtype::{DType, Element};
use num_complex::{Complex32, Complex64};

/// A number as Python holds it: the variant keeps its category exact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Complex(Complex64),
}

impl Scalar {
    /// The dtype a Python scalar of this kind takes (a float takes the
    /// default float dtype, float32 unless changed).
    pub fn default_dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::Int64,
            Scalar::Float(_) => DType::default_float(),
            Scalar::Complex(_) => DType::default_complex(),
        }
    }

    /// The dtype a wrapped number (a Python scalar operand) is stored in:
    /// the widest of its kind, so that its value reaches a float64 or
    /// complex128 kernel unrounded. Type promotion still treats it as its
    /// [`Scalar::default_dtype`].
    pub fn wrapped_dtype(self) -> DType {
        match self {
            Scalar::Float(_) => DType::Float64,
            Scalar::Complex(_) => DType::Complex128,
            other => other.default_dtype(),
        }
    }

    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as i64 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
            Scalar::Complex(c) => c.re,
        }
    }

    pub fn as_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => b as i64,
            Scalar::Int(i) => i,
            Scalar::Float(f) => f as i64,
            Scalar::Complex(c) => c.re as i64,
        }
    }

    pub fn as_bool(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::Float(f) => f != 0.0,
            Scalar::Complex(c) => c.re != 0.0 || c.im != 0.0,
        }
    }

    pub fn as_complex(self) -> Complex64 {
        match self {
            Scalar::Complex(c) => c,
            s => Complex64::new(s.as_f64(), 0.0),
        }
    }

    /// The value as an element of `dtype`, with PyTorch's checked scalar
    /// conversion: an error where it does not fit (a complex one needs a
    /// zero imaginary part), except that integers down to -255 wrap into
    /// uint8. Floats truncate towards zero into integer dtypes.
    pub fn checked_to(self, dtype: DType) -> crate::Result<Scalar> {
        if dtype.is_complex() {
            return Ok(self);
        }
        let real = match self {
            Scalar::Complex(c) if c.im != 0.0 => return Err(overflow(dtype)),
            Scalar::Complex(c) => Scalar::Float(c.re),
            s => s,
        };
        let (low, high) = match dtype {
            DType::UInt8 => (0.0, u8::MAX as f64),
            DType::Int8 => (i8::MIN as f64, i8::MAX as f64),
            DType::Int16 => (i16::MIN as f64, i16::MAX as f64),
            DType::Int32 => (i32::MIN as f64, i32::MAX as f64),
            DType::Int64 => (i64::MIN as f64, i64::MAX as f64),
            DType::Float32 => {
                let f = real.as_f64();
                return match f.is_finite() && f.abs() > f32::MAX as f64 {
                    true => Err(overflow(dtype)),
                    false => Ok(real),
                };
            }
            _ => return Ok(real),
        };
        match real {
            Scalar::Int(i) if dtype == DType::UInt8 && (-255..=255).contains(&i) => Ok(real),
            Scalar::Int(i) if (low..=high).contains(&(i as f64)) => Ok(real),
            Scalar::Float(f) if (low..=high).contains(&f) => Ok(Scalar::Int(f as i64)),
            Scalar::Bool(_) => Ok(real),
            _ => Err(overflow(dtype)),
        }
    }
}

/// PyTorch's error for a scalar that does not fit `dtype`, naming its C++ type.
fn overflow(dtype: DType) -> crate::Error {
    let name = match dtype {
        DType::Bool => "bool",
        DType::UInt8 => "uint8_t",
        DType::Int8 => "int8_t",
        DType::Int16 => "int16_t",
        DType::Int32 => "int",
        DType::Int64 => "int64_t",
        DType::Float32 => "float",
        DType::Float64 => "double",
        DType::Complex64 => "c10::complex<float>",
        DType::Complex128 => "c10::complex<double>",
    };
    crate::Error::Runtime(format!(
        "value cannot be converted to type {name} without overflow"
    ))
}

/// Exact round trip through [`Scalar`]; lossy only where the target is
/// narrower, as a C cast would be.
pub trait ScalarConvert: Element {
    fn to_scalar(self) -> Scalar;
    fn from_scalar(s: Scalar) -> Self;
}

impl ScalarConvert for bool {
    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }
    fn from_scalar(s: Scalar) -> Self {
        s.as_bool()
    }
}
macro_rules! scalar_int {
    ($($t:ty),*) => {$(
        impl ScalarConvert for $t {
            fn to_scalar(self) -> Scalar {
                Scalar::Int(self as i64)
            }
            /// Integers keep their low bits, as a C cast does; floats
            /// saturate (so an infinite reduction identity is the extreme).
            fn from_scalar(s: Scalar) -> Self {
                match s {
                    Scalar::Float(f) => f as $t,
                    Scalar::Complex(c) => c.re as $t,
                    other => other.as_i64() as $t,
                }
            }
        }
    )*};
}
scalar_int!(u8, i8, i16, i32, i64);
impl ScalarConvert for f32 {
    fn to_scalar(self) -> Scalar {
        Scalar::Float(self as f64)
    }
    fn from_scalar(s: Scalar) -> Self {
        s.as_f64() as f32
    }
}
impl ScalarConvert for f64 {
    fn to_scalar(self) -> Scalar {
        Scalar::Float(self)
    }
    fn from_scalar(s: Scalar) -> Self {
        s.as_f64()
    }
}
impl ScalarConvert for Complex32 {
    fn to_scalar(self) -> Scalar {
        Scalar::Complex(Complex64::new(self.re as f64, self.im as f64))
    }
    fn from_scalar(s: Scalar) -> Self {
        let c = s.as_complex();
        Complex32::new(c.re as f32, c.im as f32)
    }
}
impl ScalarConvert for Complex64 {
    fn to_scalar(self) -> Scalar {
        Scalar::Complex(self)
    }
    fn from_scalar(s: Scalar) -> Self {
        s.as_complex()
    }
}
