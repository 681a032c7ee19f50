//! The autograd graph: nodes and edges, saved tensors, grad modes and the
//! backward engine.

pub mod accumulate;
pub mod engine;
pub mod grad_mode;
pub mod node;
pub mod saved;

pub use engine::{backward, grad};
pub use grad_mode::{is_grad_enabled, set_grad_enabled, GradModeGuard};
pub use node::{
    any_requires_grad, record, record_multi, BackwardCtx, BackwardFn, Edge, Grads, Node,
};
pub use saved::SavedTensor;

use crate::tensor::Tensor;
use crate::{bail, Result};
use std::sync::Arc;

/// `t.retain_grad()`: a non-leaf keeps its gradient in `.grad` after
/// backward (leaves always do).
pub fn retain_grad(t: &Tensor) -> Result<()> {
    if !t.requires_grad() {
        bail!(
            Runtime,
            "can't retain_grad on Tensor that has requires_grad=False"
        );
    }
    let Some(node) = t.grad_fn() else {
        return Ok(());
    };
    if t.retains_grad() {
        return Ok(());
    }
    let weak = Arc::downgrade(&t.0);
    node.set_retain_grad_hook(
        t.output_nr(),
        Arc::new(move |g: &Tensor| {
            if let Some(inner) = weak.upgrade() {
                let t = Tensor(inner);
                let mut meta = t.meta();
                meta.grad = Some(match meta.grad.take() {
                    None => crate::ops::copy::clone(g)?,
                    Some(old) => crate::ops::binary::add(&old, g)?,
                });
            }
            Ok(None)
        }),
    );
    t.meta().retains_grad = true;
    Ok(())
}
