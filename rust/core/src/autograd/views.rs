//! Views under autograd, as in PyTorch.
//!
//! A view remembers its root base (a view of a view shares the root), how
//! it was created, and the storage version its `grad_fn` was built at. Any
//! in-place write to the storage bumps that version, so the next time the
//! view's history is needed it is regenerated from the base's current
//! history as an `AsStridedBackward0` node, which maps the view's gradient
//! onto the base's elements it covers.
//!
//! An in-place op on a view rewrites the base's history: the base's new
//! `grad_fn` is a `CopySlices` node whose backward passes the gradient of
//! the untouched elements to the base's old history and the gradient of the
//! written elements to the op's node (which leads back to the old values of
//! the view, hence of the base).

use super::grad_mode::{is_grad_enabled, GradModeGuard};
use super::record;
use crate::ops::copy::contiguous;
use crate::ops::elementwise::{map_row_major, update};
use crate::ops::index::{index, index_put_zeros};
use crate::ops::shape::reshape;
use crate::ops::unary::{where_, zero_of};
use crate::tensor::layout::Shape;
use crate::tensor::{DType, Layout, Scalar, Tensor, ViewMeta};
use crate::{bail, grads, with_dtype, Result};
use std::collections::HashMap;

/// How a view was created: PyTorch refuses in-place writes through views
/// whose history could not be rewritten correctly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CreationMeta {
    #[default]
    Default,
    /// Created while grad mode was off.
    NoGradMode,
    /// Output `nr` of an op returning several views (`unbind`, `split`,
    /// `chunk`), named as PyTorch names the op in its message.
    MultipleOutputs { op: &'static str, nr: u32 },
    /// Output `nr` of a custom Function (a view made in its forward, or an
    /// input it returned as-is): an in-place write would rebase its history
    /// past the Function's backward. `multiple`: the Function has several
    /// differentiable outputs, refused as for `MultipleOutputs`.
    InCustomFunction { nr: u32, multiple: bool },
}

/// Marks `v` as a view of `base` (of `base`'s root when `base` is a view).
pub(crate) fn mark_view(v: &Tensor, base: &Tensor) {
    let root = base.view_base().unwrap_or_else(|| base.clone());
    let version = v.version();
    let creation = if is_grad_enabled() {
        CreationMeta::Default
    } else {
        CreationMeta::NoGradMode
    };
    v.meta().view = Some(Box::new(ViewMeta {
        base: root,
        version,
        creation,
    }));
}

/// Marks the views returned by one multi-view op (`op` is its node name).
pub fn mark_multiple_outputs(views: &[Tensor], op: &'static str) {
    if !is_grad_enabled() {
        // Views made in no_grad mode are refused as such.
        return;
    }
    let op = op.strip_suffix("Backward0").unwrap_or(op);
    for (nr, v) in views.iter().enumerate() {
        if let Some(view) = &mut v.meta().view {
            view.creation = CreationMeta::MultipleOutputs { op, nr: nr as u32 };
        }
    }
}

/// For each element of `view` (row-major), the row-major index of the
/// element of `base` at the same storage position.
fn positions(base: &Layout, view: &Layout) -> Result<Vec<i64>> {
    if base.is_contiguous() {
        let n = base.numel();
        return view
            .offsets()
            .map(|o| match o.checked_sub(base.offset) {
                Some(i) if i < n => Ok(i as i64),
                _ => bail!(Runtime, "view element outside of its base"),
            })
            .collect();
    }
    let mut at: HashMap<usize, i64> = HashMap::with_capacity(base.numel());
    for (i, o) in base.offsets().enumerate() {
        at.entry(o).or_insert(i as i64);
    }
    view.offsets()
        .map(|o| match at.get(&o) {
            Some(&i) => Ok(i),
            None => bail!(Runtime, "view element outside of its base"),
        })
        .collect()
}

/// Where a view lies in its base.
enum Geometry {
    /// The base is contiguous and on the view's storage, and the view does
    /// not overlap itself (every view written in place): the view is a
    /// strided window of any contiguous tensor of the base's shape, so
    /// gradients move by strided copies.
    Window(Window),
    /// Any other view, by the flat base index of each view element.
    Indexed(Positions),
}

#[derive(Clone)]
struct Window {
    /// The view's layout, its offset counted from the base's first element.
    layout: Layout,
    base_shape: Shape,
}

struct Positions {
    /// Flat base index of each view element, shape `[view.numel()]`.
    index: Tensor,
    view_shape: Vec<i64>,
    base_shape: Vec<i64>,
}

impl Geometry {
    fn new(base: &Tensor, view: &Tensor) -> Result<Geometry> {
        if let Some(layout) = window_in(base, view) {
            return Ok(Geometry::Window(Window {
                layout,
                base_shape: base.shape().into(),
            }));
        }
        let pos = positions(base.layout(), view.layout())?;
        let n = pos.len();
        let dims = |t: &Tensor| t.shape().iter().map(|&d| d as i64).collect();
        Ok(Geometry::Indexed(Positions {
            index: Tensor::from_vec(pos, &[n])?,
            view_shape: dims(view),
            base_shape: dims(base),
        }))
    }

    /// The gradient of the base from the gradient of the view: `g` added
    /// at the view's positions into zeros (overlapping views add up).
    fn scatter(&self, g: &Tensor) -> Result<Tensor> {
        match self {
            Geometry::Window(w) => w.scatter(g),
            Geometry::Indexed(p) => {
                let out =
                    index_put_zeros(&reshape(g, &[-1])?, &[p.numel()], &[Some(p.index.clone())])?;
                reshape(&out, &p.base_shape)
            }
        }
    }

    /// The view's part of a gradient of the base.
    fn gather(&self, g: &Tensor) -> Result<Tensor> {
        match self {
            Geometry::Window(w) => w.gather(g),
            Geometry::Indexed(p) => {
                let flat = reshape(g, &[-1])?;
                reshape(&index(&flat, &[Some(p.index.clone())])?, &p.view_shape)
            }
        }
    }

    /// A gradient of the base with the view's elements set to zero.
    fn cleared(&self, g: &Tensor) -> Result<Tensor> {
        match self {
            Geometry::Window(w) => w.cleared(g),
            Geometry::Indexed(p) => {
                let mask = Tensor::full(&[p.numel()], Scalar::Int(0), DType::Bool)?;
                let ones = Tensor::full(&[1], Scalar::Bool(true), DType::Bool)?;
                crate::ops::index::put(&mask, &[Some(p.index.clone())], &ones, false)?;
                where_(&reshape(&mask, &p.base_shape)?, &zero_of(g), g)
            }
        }
    }
}

impl Positions {
    fn numel(&self) -> usize {
        self.base_shape.iter().product::<i64>() as usize
    }
}

/// The view's layout counted from the base's first element, when the base
/// is contiguous on the view's storage and the view does not overlap itself.
fn window_in(base: &Tensor, view: &Tensor) -> Option<Layout> {
    let (lb, lv) = (base.layout(), view.layout());
    if !lb.is_contiguous()
        || !std::sync::Arc::ptr_eq(base.storage(), view.storage())
        || !lv.is_non_overlapping()
        || lv.strides.iter().any(|&s| s < 0)
    {
        return None;
    }
    let mut window = lv.clone();
    if lv.numel() == 0 {
        window.offset = 0;
        return Some(window);
    }
    let last = lv.offset
        + lv.shape
            .iter()
            .zip(&lv.strides)
            .map(|(&n, &s)| (n - 1) * s as usize)
            .sum::<usize>();
    if lv.offset < lb.offset || last >= lb.offset + lb.numel() {
        return None;
    }
    window.offset -= lb.offset;
    Some(window)
}

impl Window {
    /// `g`'s elements in the window as a new tensor (`g` is shaped like
    /// the base).
    fn gather(&self, g: &Tensor) -> Result<Tensor> {
        let dense = contiguous(g)?;
        let mut at = self.layout.clone();
        at.offset += dense.storage_offset();
        let out = with_dtype!(g.dtype(), T => map_row_major::<T, T>(&dense.alias(at), |x| x)?);
        self.record_adjoint("AsStridedBackward0", &dense, &out, Window::scatter);
        Ok(out)
    }

    /// Zeros of the base's shape with `g` (shaped like the view) in the
    /// window.
    fn scatter(&self, g: &Tensor) -> Result<Tensor> {
        let out = Tensor::full(&self.base_shape, Scalar::Int(0), g.dtype())?;
        self.write(&out, g)?;
        self.record_adjoint("AsStridedScatterBackward0", g, &out, Window::gather);
        Ok(out)
    }

    /// A copy of `g` (shaped like the base) with zeros in the window.
    fn cleared(&self, g: &Tensor) -> Result<Tensor> {
        let out = with_dtype!(g.dtype(), T => map_row_major::<T, T>(g, |x| x)?);
        self.write(&out, &zero_of(g))?;
        self.record_adjoint("AsStridedScatterBackward0", g, &out, Window::cleared);
        Ok(out)
    }

    /// Copies `src` into the window of the fresh contiguous `base`.
    fn write(&self, base: &Tensor, src: &Tensor) -> Result<()> {
        let target = base.alias(self.layout.clone());
        with_dtype!(base.dtype(), T => update::<T, T>(&target, src, |_, s| s))
    }

    /// Records `out = op(input)` for double backward; `adjoint` is the
    /// op's transpose.
    fn record_adjoint(
        &self,
        name: &'static str,
        input: &Tensor,
        out: &Tensor,
        adjoint: fn(&Window, &Tensor) -> Result<Tensor>,
    ) {
        let window = self.clone();
        record(
            name,
            &[input],
            out,
            || (),
            move |_, _, gg| Ok(grads![Some(adjoint(&window, gg)?)]),
        );
    }
}

/// Rebuilds a view's `grad_fn` from its base's current history when the
/// storage was written in place since it was built.
pub(crate) fn refresh(v: &Tensor) {
    let (base, creation, built_at) = {
        let m = v.meta();
        match &m.view {
            Some(view) => (view.base.clone(), view.creation, view.version),
            None => return,
        }
    };
    let version = v.version();
    if version == built_at {
        return;
    }
    let node = if creation == CreationMeta::NoGradMode || !base.requires_grad() {
        None
    } else {
        regenerated(&base, v)
    };
    let mut m = v.meta();
    match &mut m.view {
        Some(view) if view.version == built_at => view.version = version,
        _ => return,
    }
    let old = match m.retains_grad {
        true => m.grad_fn.take().map(|f| (f, m.output_nr)),
        false => None,
    };
    m.grad_fn = node.clone();
    m.output_nr = 0;
    drop(m);
    if let (Some(old), Some(new)) = (old, node) {
        old.0.move_retain_grad_hook(old.1, &new, 0);
    }
}

/// `AsStridedBackward0` from `base` to an alias laid out as `v`.
fn regenerated(base: &Tensor, v: &Tensor) -> Option<std::sync::Arc<crate::autograd::Node>> {
    let out = base.alias(v.layout().clone());
    let _grad = GradModeGuard::new(true);
    record_as_strided(base, &out).ok()?;
    out.grad_fn()
}

/// Records `out`, an alias of elements of `input` in any layout (possibly
/// overlapping itself), as `AsStridedBackward0`: its gradient is added at
/// the positions of `input` it reads. Fails when `out` reads storage
/// outside `input`'s elements.
pub(crate) fn record_as_strided(input: &Tensor, out: &Tensor) -> Result<()> {
    if !is_grad_enabled() || !input.requires_grad() {
        return Ok(());
    }
    let Ok(geometry) = Geometry::new(input, out) else {
        bail!(
            Runtime,
            "as_strided: the view reads storage outside the elements of its input, which ferrograd cannot differentiate; take the view of the tensor that holds those elements"
        );
    };
    record(
        "AsStridedBackward0",
        &[input],
        out,
        || (),
        move |_, _, g| Ok(grads![Some(geometry.scatter(g)?)]),
    );
    Ok(())
}

const MULTIPLE_VIEWS: &str = "This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.";

/// The errors PyTorch raises before an in-place op that records history on
/// `t`.
pub fn check_inplace(t: &Tensor) -> Result<()> {
    let (base, creation) = {
        match &t.meta().view {
            Some(view) => (Some(view.base.clone()), view.creation),
            None => (None, CreationMeta::Default),
        }
    };
    if let Some(base) = base {
        match creation {
            CreationMeta::Default => {}
            CreationMeta::MultipleOutputs { op, nr } => bail!(
                Runtime,
                "Output {nr} of {op} is a view and is being modified inplace. {MULTIPLE_VIEWS}"
            ),
            CreationMeta::NoGradMode => bail!(
                Runtime,
                "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked)."
            ),
            CreationMeta::InCustomFunction { nr, multiple } => {
                // PyTorch names the Function, not its node.
                let node = t.meta().grad_fn.clone();
                let name = node.as_ref().map_or("", |n| n.name());
                let name = name.strip_suffix("Backward").unwrap_or(name);
                if multiple {
                    bail!(Runtime, "Output {nr} of {name} is a view and is being modified inplace. {MULTIPLE_VIEWS}");
                }
                bail!(
                    Runtime,
                    "Output {nr} of {name} is a view and is being modified inplace. This view was created inside a custom Function (or because an input was returned as-is) and the autograd logic to handle view+inplace would override the custom backward associated with the custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function."
                )
            }
        }
        // The view's own flag: a view of a tensor without grad that was
        // itself made to require grad is refused too.
        if t.requires_grad() && base.is_leaf() {
            bail!(
                Runtime,
                "a view of a leaf Variable that requires grad is being used in an in-place operation."
            );
        }
    }
    if t.requires_grad() && t.is_leaf() {
        bail!(
            Runtime,
            "a leaf Variable that requires grad is being used in an in-place operation."
        );
    }
    Ok(())
}

/// After `out` (recorded by the op) was written into the view `v`: the
/// base's history becomes `CopySlices` of its old history and `out`.
pub(crate) fn copy_slices(base: &Tensor, v: &Tensor, out: &Tensor) -> Result<()> {
    let geometry = Geometry::new(base, v)?;
    record(
        "CopySlices",
        &[base, out],
        base,
        || (),
        move |_, _, g| {
            Ok(grads![
                // The written elements' old values no longer reach the output.
                Some(geometry.cleared(g)?),
                Some(geometry.gather(g)?)
            ])
        },
    );
    Ok(())
}

/// An input a custom Function returned as-is, as PyTorch returns it: a new
/// alias that is a view of the input.
pub fn view_as_self(input: &Tensor) -> Tensor {
    let v = input.detach();
    mark_view(&v, input);
    v
}

/// Output `nr` of a custom Function with `multiple` differentiable outputs,
/// when it is a view: writing it in place is refused (see
/// [`CreationMeta::InCustomFunction`]).
pub fn mark_custom_function_output(v: &Tensor, nr: u32, multiple: bool) {
    if let Some(view) = &mut v.meta().view {
        view.creation = CreationMeta::InCustomFunction { nr, multiple };
    }
}

/// Makes output `nr` of a custom Function's `node` the history of `t`, an
/// input its forward wrote in place. On a view, as for built-in in-place
/// ops, the base's history becomes `CopySlices` (the view's is regenerated
/// from it, the write having bumped the version); the Function's tangents
/// are set apart from this.
pub fn rebase_history(
    t: &Tensor,
    node: std::sync::Arc<crate::autograd::Node>,
    nr: u32,
) -> Result<()> {
    let Some(base) = t.view_base() else {
        t.set_grad_fn(node, nr);
        return Ok(());
    };
    let out = t.detach();
    out.set_grad_fn(node, nr);
    super::forward::without_tangents(|| copy_slices(&base, t, &out))
}
