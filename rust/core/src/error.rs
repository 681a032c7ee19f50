//! One error type for the whole core; the bindings map each variant to the
//! Python exception PyTorch raises for the same mistake.

use thiserror::Error;

#[derive(Debug, Clone, Error)]
pub enum Error {
    /// Autograd and shape/dtype errors: PyTorch raises `RuntimeError`.
    #[error("{0}")]
    Runtime(String),
    /// Out-of-range indices and dimensions: `IndexError`.
    #[error("{0}")]
    Index(String),
    /// Wrong argument types: `TypeError`.
    #[error("{0}")]
    Type(String),
    /// Bad argument values: `ValueError`.
    #[error("{0}")]
    Value(String),
    /// A matrix a decomposition cannot handle (singular, not positive
    /// definite): `torch.linalg.LinAlgError`, a `RuntimeError`.
    #[error("{0}")]
    LinAlg(String),
    /// A kernel missing for a dtype: `NotImplementedError`.
    #[error("{0}")]
    NotImplemented(String),
    /// An error raised by user code (a Python hook or custom Function)
    /// while the engine ran; the bindings re-raise the original exception.
    #[error("{message}")]
    External {
        message: String,
        payload: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    },
}

pub type Result<T> = std::result::Result<T, Error>;

/// `bail!(Runtime, "...", args)` returns early with a formatted error.
#[macro_export]
macro_rules! bail {
    ($kind:ident, $($fmt:tt)+) => {
        return Err($crate::Error::$kind(format!($($fmt)+)))
    };
}

pub const GRAPH_FREED: &str = "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.";
