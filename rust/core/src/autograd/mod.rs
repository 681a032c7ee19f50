//! The autograd graph: nodes and edges, saved tensors, grad modes and the
//! backward engine.

pub mod accumulate;
pub mod anomaly;
pub mod engine;
pub mod forward;
pub mod grad_mode;
pub mod node;
pub mod saved;
pub mod views;

pub use engine::{backward, grad, grad_since};
pub use grad_mode::{is_grad_enabled, is_inference_mode_enabled, set_grad_enabled, GradModeGuard};
pub use node::{
    any_requires_grad, needs_input_grad, record, record_multi, BackwardCtx, BackwardFn, Edge,
    Grads, Node, NodeMark, NodeWith,
};
pub use saved::{PackedSaved, SavedTensor, SavedTensorsHooks};

use crate::tensor::Tensor;
use crate::{bail, Result};
use std::sync::Arc;

/// Whether a backward formula must compute with differentiable ops rather
/// than fused kernels: its ops are recorded (`create_graph`) or give
/// tangents (a dual level is open).
pub fn formulas_differentiable() -> bool {
    is_grad_enabled() || forward::is_active()
}

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
                accumulate::accumulate_into(&Tensor(inner), g.clone())?;
            }
            Ok(None)
        }),
    );
    t.meta().retains_grad = true;
    Ok(())
}

/// Identifies a registered hook, for removal.
static NEXT_HOOK_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A fresh hook id.
pub fn next_hook_id() -> u64 {
    NEXT_HOOK_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// `t.register_hook(fn)`: `hook` sees (and may replace) the gradient
/// computed for `t` during every backward. Returns an id for removal.
pub fn register_hook(t: &Tensor, hook: node::GradHook) -> Result<u64> {
    if !t.requires_grad() {
        bail!(
            Runtime,
            "cannot register a hook on a tensor that doesn't require gradient"
        );
    }
    let id = next_hook_id();
    match t.grad_fn() {
        Some(node) => node.add_tensor_hook(id, t.output_nr(), hook),
        None => t.meta().leaf_hooks_mut().on_grad.push((id, hook)),
    }
    Ok(id)
}

/// `t.register_post_accumulate_grad_hook(fn)`: runs after a leaf's `.grad`
/// was updated.
pub fn register_post_accumulate_grad_hook(
    t: &Tensor,
    hook: node::PostAccumulateHook,
) -> Result<u64> {
    if !t.requires_grad() {
        bail!(
            Runtime,
            "cannot register a hook on a tensor that doesn't require gradient"
        );
    }
    if !t.is_leaf() {
        bail!(
            Runtime,
            "post accumulate grad hooks cannot be registered on non-leaf tensors"
        );
    }
    let id = next_hook_id();
    t.meta().leaf_hooks_mut().post_accumulate.push((id, hook));
    Ok(id)
}

/// Removes a hook registered on `t`; false when it was already removed.
pub fn remove_hook(t: &Tensor, id: u64) -> bool {
    let mut m = t.meta();
    if let Some(hooks) = &mut m.leaf_hooks {
        let before = hooks.on_grad.len() + hooks.post_accumulate.len();
        hooks.on_grad.retain(|(i, _)| *i != id);
        hooks.post_accumulate.retain(|(i, _)| *i != id);
        if hooks.on_grad.len() + hooks.post_accumulate.len() != before {
            return true;
        }
    }
    let node = m.grad_fn.clone();
    drop(m);
    node.is_some_and(|n| n.remove_hook(id))
}
