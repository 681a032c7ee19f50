//! Element types and PyTorch's type-promotion rules.

use super::storage::Owner;
use num_complex::{Complex32, Complex64};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether new floating tensors default to float64 (`set_default_dtype`).
/// Process-wide, as in PyTorch; read with a relaxed load on creation paths.
static DEFAULT_IS_DOUBLE: AtomicBool = AtomicBool::new(false);

#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    UInt8,
    Int8,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    Complex64,
    Complex128,
}

/// Coarse kinds, ordered: a higher category always wins in promotion.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Category {
    Bool,
    Integral,
    Floating,
    Complex,
}

impl DType {
    pub const ALL: [DType; 10] = [
        DType::Bool,
        DType::UInt8,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::Float32,
        DType::Float64,
        DType::Complex64,
        DType::Complex128,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::UInt8 => "uint8",
            DType::Int8 => "int8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
        }
    }

    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The legacy type name used in PyTorch's error messages.
    pub fn legacy_name(self) -> &'static str {
        match self {
            DType::Bool => "BoolTensor",
            DType::UInt8 => "ByteTensor",
            DType::Int8 => "CharTensor",
            DType::Int16 => "ShortTensor",
            DType::Int32 => "IntTensor",
            DType::Int64 => "LongTensor",
            DType::Float32 => "FloatTensor",
            DType::Float64 => "DoubleTensor",
            DType::Complex64 => "ComplexFloatTensor",
            DType::Complex128 => "ComplexDoubleTensor",
        }
    }

    /// PyTorch's name of the scalar type, as its "not implemented for"
    /// messages print it.
    pub fn scalar_type_name(self) -> &'static str {
        match self {
            DType::Bool => "Bool",
            DType::UInt8 => "Byte",
            DType::Int8 => "Char",
            DType::Int16 => "Short",
            DType::Int32 => "Int",
            DType::Int64 => "Long",
            DType::Float32 => "Float",
            DType::Float64 => "Double",
            DType::Complex64 => "ComplexFloat",
            DType::Complex128 => "ComplexDouble",
        }
    }

    /// The C++ element type PyTorch's messages name (`mm`, `masked_fill_`).
    pub fn cpp_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::UInt8 => "unsigned char",
            DType::Int8 => "signed char",
            DType::Int16 => "short int",
            DType::Int32 => "int",
            DType::Int64 => "long int",
            DType::Float32 => "float",
            DType::Float64 => "double",
            DType::Complex64 => "c10::complex<float>",
            DType::Complex128 => "c10::complex<double>",
        }
    }

    pub fn itemsize(self) -> usize {
        crate::with_dtype!(self, T => std::mem::size_of::<T>())
    }

    /// The alignment of one element: a complex number is aligned as its
    /// parts are.
    pub fn alignment(self) -> usize {
        match self.is_complex() {
            true => self.itemsize() / 2,
            false => self.itemsize(),
        }
    }

    pub fn category(self) -> Category {
        match self {
            DType::Bool => Category::Bool,
            DType::UInt8 | DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64 => {
                Category::Integral
            }
            DType::Float32 | DType::Float64 => Category::Floating,
            DType::Complex64 | DType::Complex128 => Category::Complex,
        }
    }

    /// Integer dtypes, and bool too when `include_bool` (PyTorch's
    /// `is_integral`).
    pub fn is_integral(self, include_bool: bool) -> bool {
        match self.category() {
            Category::Integral => true,
            Category::Bool => include_bool,
            _ => false,
        }
    }

    pub fn is_floating_point(self) -> bool {
        self.category() == Category::Floating
    }

    pub fn is_complex(self) -> bool {
        self.category() == Category::Complex
    }

    /// Only floating and complex tensors can require gradients.
    pub fn is_differentiable(self) -> bool {
        self.category() >= Category::Floating
    }

    /// The real counterpart of a complex dtype (`complex64` -> `float32`).
    pub fn to_real(self) -> DType {
        match self {
            DType::Complex64 => DType::Float32,
            DType::Complex128 => DType::Float64,
            d => d,
        }
    }

    /// The dtype new floating tensors take when none is given: float32
    /// unless [`DType::set_default_float`] chose float64.
    pub fn default_float() -> DType {
        if DEFAULT_IS_DOUBLE.load(Ordering::Relaxed) {
            DType::Float64
        } else {
            DType::Float32
        }
    }

    /// The complex counterpart of [`DType::default_float`].
    pub fn default_complex() -> DType {
        DType::default_float().to_complex()
    }

    /// `set_default_dtype`: only float32 and float64 can be the default.
    pub fn set_default_float(dtype: DType) -> crate::Result<()> {
        match dtype {
            DType::Float32 | DType::Float64 => {
                DEFAULT_IS_DOUBLE.store(dtype == DType::Float64, Ordering::Relaxed);
                Ok(())
            }
            _ => crate::bail!(
                Type,
                "only floating-point types are supported as the default type"
            ),
        }
    }

    /// The dtype a Python scalar of this dtype's kind takes: the default
    /// float or complex dtype for those kinds, else itself.
    pub fn default_of_kind(self) -> DType {
        match self.category() {
            Category::Floating => DType::default_float(),
            Category::Complex => DType::default_complex(),
            _ => self,
        }
    }

    /// The complex counterpart of a real floating dtype.
    pub fn to_complex(self) -> DType {
        match self {
            DType::Float64 | DType::Complex128 => DType::Complex128,
            _ => DType::Complex64,
        }
    }

    /// `torch.promote_types`.
    pub fn promote(a: DType, b: DType) -> DType {
        if a == b {
            return a;
        }
        let (hi, lo) = if a.category() >= b.category() {
            (a, b)
        } else {
            (b, a)
        };
        if hi.category() == lo.category() {
            // uint8 and int8 hold no common range: both fit in int16.
            if matches!(
                (a, b),
                (DType::UInt8, DType::Int8) | (DType::Int8, DType::UInt8)
            ) {
                return DType::Int16;
            }
            return a.max(b);
        }
        // float64 with complex64 widens the complex to complex128.
        if hi == DType::Complex64 && lo == DType::Float64 {
            return DType::Complex128;
        }
        hi
    }

    /// The dtype of a result whose inputs fall in three priority classes:
    /// tensors with dimensions, 0-d tensors, and Python scalars. A lower
    /// class can raise the category but never the width (PyTorch's rule).
    pub fn result_type(
        dims: Option<DType>,
        zero_dim: Option<DType>,
        scalars: Option<DType>,
    ) -> DType {
        let lower = combine_categories(zero_dim, scalars);
        combine_categories(dims, lower).unwrap_or_else(DType::default_float)
    }
}

fn combine_categories(higher: Option<DType>, lower: Option<DType>) -> Option<DType> {
    let (h, l) = match (higher, lower) {
        (None, x) | (x, None) => return x,
        (Some(h), Some(l)) => (h, l),
    };
    Some(match (h.category(), l.category()) {
        (Category::Complex, _) => h,
        (Category::Floating, Category::Complex) => h.to_complex(),
        (_, Category::Complex) => l,
        (Category::Floating, _) => h,
        (Category::Bool, _) | (_, Category::Floating) => DType::promote(h, l),
        _ => h,
    })
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ferrograd.{}", self.name())
    }
}

/// A Rust type that can be stored in a tensor.
pub trait Element: Copy + Send + Sync + Default + PartialEq + fmt::Debug + 'static {
    const DTYPE: DType;
    /// Wraps a `Vec` of this type as the owner of a storage buffer.
    fn into_owner(v: Vec<Self>) -> Owner;
}

macro_rules! element {
    ($($t:ty => $variant:ident),*) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            fn into_owner(v: Vec<Self>) -> Owner {
                Owner::$variant(v)
            }
        }
    )*};
}
element!(bool => Bool, u8 => UInt8, i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64,
         f32 => Float32, f64 => Float64, Complex32 => Complex64, Complex64 => Complex128);

/// Runs `$body` with `$T` bound to the Rust element type of `$dtype`.
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
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
            $crate::DType::Complex64 => {
                type $T = num_complex::Complex32;
                $body
            }
            $crate::DType::Complex128 => {
                type $T = num_complex::Complex64;
                $body
            }
            integer => $crate::with_integer!(integer, $T => $body, unreachable!("every other dtype is an integer")),
        }
    };
}

#[cfg(test)]
mod tests {
    use super::DType::*;
    use super::*;

    #[test]
    fn all_lists_the_dtypes_in_declaration_order() {
        for (i, d) in DType::ALL.iter().enumerate() {
            assert_eq!(*d as usize, i);
        }
    }

    // Tests run in parallel threads of one process, so this one only tries
    // the choices that leave the process-wide default as it is.
    #[test]
    fn only_real_floats_can_be_the_default() {
        for bad in [Bool, Int64, Complex64, Complex128] {
            let err = DType::set_default_float(bad).unwrap_err();
            assert!(matches!(err, crate::Error::Type(_)));
        }
        assert_eq!(DType::default_float(), Float32);
        assert_eq!(DType::default_complex(), Complex64);
        assert_eq!(Float64.default_of_kind(), Float32);
        assert_eq!(Complex128.default_of_kind(), Complex64);
        assert_eq!(Int64.default_of_kind(), Int64);
    }

    #[test]
    fn promotion_follows_torch() {
        assert_eq!(DType::promote(Int64, Float32), Float32);
        assert_eq!(DType::promote(Float32, Float64), Float64);
        assert_eq!(DType::promote(Bool, Int64), Int64);
        assert_eq!(DType::promote(Float64, Complex64), Complex128);
        assert_eq!(DType::promote(Float32, Complex64), Complex64);
        assert_eq!(DType::promote(UInt8, Int8), Int16);
        assert_eq!(DType::promote(Int8, UInt8), Int16);
        assert_eq!(DType::promote(UInt8, Int16), Int16);
        assert_eq!(DType::promote(Int32, Int64), Int64);
        assert_eq!(DType::promote(Bool, UInt8), UInt8);
        assert_eq!(DType::promote(Int32, Float32), Float32);
    }

    #[test]
    fn narrow_integers_convert_as_pytorch() {
        use crate::tensor::{Scalar, ScalarConvert};
        // Integers wrap; floats saturate, so infinite identities are extremes.
        assert_eq!(u8::from_scalar(Scalar::Int(300)), 44);
        assert_eq!(i8::from_scalar(Scalar::Int(-129)), 127);
        assert_eq!(i8::from_scalar(Scalar::Float(f64::INFINITY)), i8::MAX);
        assert_eq!(i16::from_scalar(Scalar::Float(f64::NEG_INFINITY)), i16::MIN);
        assert_eq!(i32::from_scalar(Scalar::Float(-2.7)), -2);
        assert_eq!(Int32.itemsize(), 4);
        assert!(Int8.is_integral(false) && !Bool.is_integral(false) && Bool.is_integral(true));
    }

    #[test]
    fn scalars_do_not_widen_tensors() {
        // float32 tensor * Python float stays float32.
        assert_eq!(
            DType::result_type(Some(Float32), None, Some(Float32)),
            Float32
        );
        // int64 tensor * Python float becomes the default float dtype.
        assert_eq!(
            DType::result_type(Some(Int64), None, Some(Float32)),
            Float32
        );
        // float64 0-d tensor does not widen a float32 tensor...
        assert_eq!(
            DType::result_type(Some(Float32), Some(Float64), None),
            Float32
        );
        // ...but a float 0-d tensor lifts an integer tensor.
        assert_eq!(
            DType::result_type(Some(Int64), Some(Float64), None),
            Float64
        );
        assert_eq!(DType::result_type(Some(Bool), None, Some(Int64)), Int64);
        assert_eq!(
            DType::result_type(Some(Float64), None, Some(Complex64)),
            Complex128
        );
    }
}
