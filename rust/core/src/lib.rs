//! ferrograd's core: strided tensors over shared storage, kernels, and the
//! autograd graph with its parallel backward engine. No Python in here: the
//! bindings crate converts arguments, releases the GIL and maps [`Error`]s.

pub mod alloc;
pub mod autograd;
pub mod error;
pub mod ops;
pub mod parallel;
pub mod stream;
pub mod tensor;

pub use error::{Error, Result};
pub use tensor::{DType, Scalar, Tensor};

#[global_allocator]
static ALLOCATOR: alloc::CachingAllocator = alloc::CachingAllocator;
