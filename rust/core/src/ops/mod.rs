//! Ops, one file per family. Each op keeps its forward kernel, its
//! backward formula (written with ops, so `create_graph` differentiates it
//! again) and its `grad_fn` name together.

// Kernels are generic over element types including `bool`, where ordered
// comparisons are meaningful (false < true) and intended.
#![allow(clippy::bool_comparison)]

pub mod airy;
pub mod bessel;
pub mod binary;
pub mod complex;
mod complex_math;
pub mod conv;
pub mod copy;
pub mod creation;
mod double_double;
pub mod elementwise;
pub mod fastmath;
pub mod fft;
pub mod index;
pub mod index_put;
pub mod inplace;
pub mod linalg;
pub mod loss;
pub mod matmul;
pub mod norm;
pub mod num;
pub mod optim;
pub mod pad;
pub mod pointwise;
pub mod polynomial;
pub mod random;
pub mod reduce;
pub mod resize;
pub mod scan;
pub mod scatter;
pub mod shape;
pub mod sort;
pub mod special;
pub mod unary;

use crate::tensor::{DType, Tensor};
use crate::{bail, Result};

/// PyTorch's `result_type` over op operands: tensors with dimensions
/// decide the dtype; 0-d tensors and Python numbers only lift its category.
/// PyTorch's error for a kernel run on other than float32 or float64.
pub(crate) fn check_real_float(dtype: DType, kernel: &str) -> Result<()> {
    match dtype {
        DType::Float32 | DType::Float64 => Ok(()),
        _ => bail!(
            NotImplemented,
            "\"{kernel}\" not implemented for '{}'",
            dtype.scalar_type_name()
        ),
    }
}

pub fn result_type(operands: &[&Tensor]) -> DType {
    let (mut dims, mut zero, mut wrapped) = (None, None, None);
    for t in operands {
        let slot = if t.is_wrapped_number() {
            &mut wrapped
        } else if t.ndim() == 0 {
            &mut zero
        } else {
            &mut dims
        };
        // A wrapped number is stored at full width but promotes as the
        // default dtype of its kind (a Python float as float32).
        let dtype = match t.is_wrapped_number() {
            true => t.dtype().default_of_kind(),
            false => t.dtype(),
        };
        *slot = Some(match *slot {
            None => dtype,
            Some(d) => DType::promote(d, dtype),
        });
    }
    DType::result_type(dims, zero, wrapped)
}

/// `grads` as the smallvec a backward formula returns.
#[macro_export]
macro_rules! grads {
    ($($g:expr),* $(,)?) => {
        smallvec::smallvec![$($g),*]
    };
}
