//! The node at the end of every path: adds a leaf's gradient into `.grad`.

use super::grad_mode::is_grad_enabled;
use super::node::{BackwardCtx, BackwardFn, Grads, NodeWith, OutputMeta};
use crate::ops;
use crate::tensor::layout::MemoryFormat;
use crate::tensor::{DType, GradDType, Tensor};
use crate::{bail, Result};
use std::sync::Arc;

pub struct AccumulateGrad {
    pub leaf: Tensor,
}

pub fn accumulate_grad_node(leaf: &Tensor) -> Arc<NodeWith<AccumulateGrad>> {
    let meta = OutputMeta {
        shape: leaf.shape().into(),
        dtype: leaf.dtype(),
    };
    Arc::new(NodeWith::new(
        "AccumulateGrad",
        Default::default(),
        smallvec::smallvec![meta],
        AccumulateGrad { leaf: leaf.clone() },
    ))
}

impl AccumulateGrad {
    /// The dtype the leaf's gradients are cast to when they arrive (`None`:
    /// kept as they come): its `grad_dtype`, read at each backward so that
    /// a change after the graph was recorded counts, as in PyTorch.
    /// `recorded` is the leaf's dtype when the graph was recorded.
    pub fn grad_dtype(&self, recorded: DType) -> Result<Option<DType>> {
        let dtype = match self.leaf.latest().meta().grad_dtype {
            GradDType::Own => return Ok(Some(recorded)),
            GradDType::Fixed(dtype) => dtype,
            GradDType::Any => return Ok(None),
        };
        if !dtype.is_differentiable() {
            bail!(
                Runtime,
                "a gradient cannot be cast to the grad_dtype {} of a leaf: only floating point and complex gradients are supported",
                dtype
            );
        }
        Ok(Some(dtype))
    }

    /// The leaf's `register_hook` hooks, in order, each seeing (and maybe
    /// replacing) the gradient the one before returned.
    pub fn run_tensor_hooks(&self, mut g: Tensor) -> Result<Tensor> {
        let hooks = match &self.leaf.latest().meta().leaf_hooks {
            Some(hooks) => hooks.on_grad.clone(),
            None => return Ok(g),
        };
        for (_, hook) in hooks {
            if let Some(new) = hook(&g)? {
                g = new;
            }
        }
        Ok(g)
    }
}

impl BackwardFn for AccumulateGrad {
    fn apply(&self, _ctx: &BackwardCtx<'_>, mut grads: Grads) -> Result<Grads> {
        let Some(g) = grads[0].take() else {
            return Ok(Grads::new());
        };
        // The leaf's successor when `x.data = y` or an in-place shape op
        // replaced it after this graph was recorded.
        // The leaf's `register_hook` hooks have run (the engine runs them
        // first, see `run_tensor_hooks`).
        let leaf = self.leaf.latest();
        accumulate_into(&leaf, g)?;
        let post = match &leaf.meta().leaf_hooks {
            Some(hooks) => hooks.post_accumulate.clone(),
            None => Vec::new(),
        };
        for (_, hook) in post {
            hook(&leaf)?;
        }
        Ok(Grads::new())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `t.grad += g`, never losing a contribution when backward calls run
/// concurrently. The lock is held only to take or store `.grad`, never while
/// computing: parallel kernels let a waiting thread run other engine work,
/// which could need the same lock. A gradient stored by another thread in
/// the meantime is merged on the next round. The first gradient is kept as
/// is when nothing else holds it, else copied; later ones are added in place
/// unless the graph of the gradient itself is being recorded or the stored
/// gradient's memory is read-only (a `.grad` set from a non-writable array).
pub fn accumulate_into(t: &Tensor, g: Tensor) -> Result<()> {
    // A gradient that is a view (the transposed gradient of a weight used
    // as `W.t()`) holds its base, which holds the same storage: detaching
    // drops that hold, so a view nothing else reads is kept, not copied.
    let g = if g.grad_fn().is_none() && g.view_base().is_some() {
        let detached = g.detach();
        drop(g);
        detached
    } else {
        g
    };
    // As in PyTorch, the first gradient is kept only outside `create_graph`
    // (else `.grad` would be the graph's own tensor, which other leaves'
    // `.grad` may share) and when it has the layout `.grad` must have;
    // otherwise it is copied into that layout. Expanded (stride-0)
    // gradients are therefore copied: in-place accumulation into them would
    // write one element many times.
    let mut ready_to_store = !is_grad_enabled() && is_sole_handle(&g) && has_grad_layout_of(t, &g);
    let mut pending = g;
    loop {
        let existing = {
            let mut meta = t.meta();
            match meta.grad.take() {
                None if ready_to_store => {
                    meta.grad = Some(pending);
                    return Ok(());
                }
                existing => existing,
            }
        };
        // `p.grad.data = new` replaced the stored gradient by a successor.
        pending = match existing.map(|e| e.latest()) {
            None => copy_in_grad_layout_of(t, &pending)?,
            Some(existing) if is_grad_enabled() || !existing.storage().is_writable() => {
                ops::binary::add(&existing, &pending)?
            }
            Some(existing) => {
                ops::binary::add_into(&existing, &pending)?;
                existing
            }
        };
        ready_to_store = true;
    }
}

/// Whether `leaf`'s `.grad` has strides of the leaf's own rather than
/// row-major ones: the leaf is dense in another order.
fn grad_takes_leaf_strides(leaf: &Tensor) -> bool {
    !leaf.is_contiguous() && leaf.layout().is_non_overlapping_and_dense()
}

/// Whether `g` has the layout PyTorch gives the `.grad` of `leaf`: the
/// leaf's own strides when it is dense (transposed, permuted,
/// channels-last), dims of size one aside, else row-major.
fn has_grad_layout_of(leaf: &Tensor, g: &Tensor) -> bool {
    if !grad_takes_leaf_strides(leaf) {
        return g.is_contiguous();
    }
    let (leaf, g) = (leaf.layout(), g.layout());
    let mut dims = g.shape.iter().zip(&g.strides).zip(&leaf.strides);
    g.shape == leaf.shape && dims.all(|((&n, &gs), &ls)| gs == ls || (n == 1 && gs != 0))
}

/// A copy of `g` in the layout PyTorch gives the `.grad` of `leaf` (see
/// [`has_grad_layout_of`]). Under grad mode (`create_graph=True`) it is
/// made as PyTorch makes it, a new tensor in that layout that `g` is copied
/// into, so its history is PyTorch's: `CopyBackwards`, whose first edge
/// (the new tensor's) is none.
fn copy_in_grad_layout_of(leaf: &Tensor, g: &Tensor) -> Result<Tensor> {
    if is_grad_enabled() && g.shape() == leaf.shape() {
        let copy = ops::creation::made_like(leaf, MemoryFormat::Preserve, |shape| {
            Ok(Tensor::zeros(shape, g.dtype()))
        })?;
        ops::inplace::copy_(&copy, g)?;
        return Ok(copy);
    }
    if !grad_takes_leaf_strides(leaf) || g.shape() != leaf.shape() {
        return ops::copy::clone(g);
    }
    let layout = leaf.layout();
    // The leaf's dims from outermost to innermost in memory: a row-major
    // copy of `g` permuted into that order, permuted back, has its strides.
    let mut order: Vec<usize> = (0..layout.shape.len()).collect();
    order.sort_by_key(|&d| std::cmp::Reverse(layout.strides[d]));
    let mut inverse = vec![0i64; order.len()];
    for (position, &d) in order.iter().enumerate() {
        inverse[d] = position as i64;
    }
    let order: Vec<i64> = order.iter().map(|&d| d as i64).collect();
    let copy = ops::copy::clone(&ops::shape::permute(g, &order)?)?;
    ops::shape::permute(&copy, &inverse)
}

/// Whether `g` is the only handle to a dense gradient and its storage, with
/// no history: it may be kept, or summed into, without a copy.
fn is_sole_handle(g: &Tensor) -> bool {
    is_sole_dense_handle(g) && g.is_leaf()
}

/// Whether `g` is dense and the only handle to itself and its storage.
pub(crate) fn is_sole_dense_handle(g: &Tensor) -> bool {
    Arc::strong_count(&g.0) == 1 && Arc::strong_count(g.storage()) == 1 && g.is_contiguous()
}
