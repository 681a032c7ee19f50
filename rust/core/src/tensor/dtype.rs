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
    pub const ALL: [DType; 6] = [
        DType::Bool,
        DType::Int64,
        DType::Float32,
        DType::Float64,
        DType::Complex64,
        DType::Complex128,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
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
            DType::Int64 => "LongTensor",
            DType::Float32 => "FloatTensor",
            DType::Float64 => "DoubleTensor",
            DType::Complex64 => "ComplexFloatTensor",
            DType::Complex128 => "ComplexDoubleTensor",
        }
    }

    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool => 1,
            DType::Int64 | DType::Float64 | DType::Complex64 => 8,
            DType::Float32 => 4,
            DType::Complex128 => 16,
        }
    }

    pub fn category(self) -> Category {
        match self {
            DType::Bool => Category::Bool,
            DType::Int64 => Category::Integral,
            DType::Float32 | DType::Float64 => Category::Floating,
            DType::Complex64 | DType::Complex128 => Category::Complex,
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

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn into_owner(v: Vec<Self>) -> Owner {
        Owner::Bool(v)
    }
}
impl Element for i64 {
    const DTYPE: DType = DType::Int64;
    fn into_owner(v: Vec<Self>) -> Owner {
        Owner::Int64(v)
    }
}
impl Element for f32 {
    const DTYPE: DType = DType::Float32;
    fn into_owner(v: Vec<Self>) -> Owner {
        Owner::Float32(v)
    }
}
impl Element for f64 {
    const DTYPE: DType = DType::Float64;
    fn into_owner(v: Vec<Self>) -> Owner {
        Owner::Float64(v)
    }
}
impl Element for Complex32 {
    const DTYPE: DType = DType::Complex64;
    fn into_owner(v: Vec<Self>) -> Owner {
        Owner::Complex64(v)
    }
}
impl Element for Complex64 {
    const DTYPE: DType = DType::Complex128;
    fn into_owner(v: Vec<Self>) -> Owner {
        Owner::Complex128(v)
    }
}

/// Runs `$body` with `$T` bound to the Rust element type of `$dtype`.
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::DType::Bool => {
                type $T = bool;
                $body
            }
            $crate::DType::Int64 => {
                type $T = i64;
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
        }
    };
}

#[cfg(test)]
mod tests {
    use super::DType::*;
    use super::*;

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
