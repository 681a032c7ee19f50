//! View ops: new layouts over the same storage, sharing the version counter.
//! Each records a node whose backward maps the gradient back to the base.

use super::reduce::sum_to;
use crate::autograd::{is_grad_enabled, record, views};
use crate::tensor::layout::{
    contiguous_strides, fmt_shape, numel, wrap_dim, Layout, Shape, Strides,
};
use crate::tensor::storage::try_filled;
use crate::tensor::{DType, MemoryFormat, Scalar, Storage, Tensor};
use crate::{bail, grads, with_dtype, Result};
use std::sync::Arc;

/// An alias of `base` with `layout`, marked as a view of it.
pub(crate) fn make_view(base: &Tensor, layout: Layout) -> Tensor {
    let v = base.alias(layout);
    crate::autograd::views::mark_view(&v, base);
    v
}

/// Resolves one `-1` in a requested shape against `n` elements.
pub fn infer_shape(shape: &[i64], n: usize) -> Result<Shape> {
    let mut out: Shape = Shape::new();
    let mut infer = None;
    let mut known = 1usize;
    for (i, &d) in shape.iter().enumerate() {
        if d == -1 {
            if infer.is_some() {
                bail!(Runtime, "only one dimension can be inferred");
            }
            infer = Some(i);
            out.push(1);
        } else if d < 0 {
            bail!(Runtime, "invalid shape dimension {}", d);
        } else {
            // Saturates rather than wraps: a product past usize::MAX matches
            // no element count (and a 0 dim still makes it 0).
            known = known.saturating_mul(d as usize);
            out.push(d as usize);
        }
    }
    let shown = || {
        format!(
            "[{}]",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    match infer {
        Some(i) => {
            if known == 0 || n % known != 0 {
                bail!(
                    Runtime,
                    "shape '{}' is invalid for input of size {}",
                    shown(),
                    n
                );
            }
            out[i] = n / known;
        }
        None if known != n => bail!(
            Runtime,
            "shape '{}' is invalid for input of size {}",
            shown(),
            n
        ),
        None => {}
    }
    Ok(out)
}

/// `view`: fails when the layout cannot be reinterpreted without a copy.
pub fn view(t: &Tensor, shape: &[i64]) -> Result<Tensor> {
    let shape = infer_shape(shape, t.numel())?;
    let Some(strides) = t.layout().view_strides(&shape) else {
        bail!(
            Runtime,
            "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        );
    };
    Ok(reshape_alias(t, shape, strides))
}

fn reshape_alias(t: &Tensor, shape: Shape, strides: Strides) -> Tensor {
    let out = make_view(
        t,
        Layout {
            shape,
            strides,
            offset: t.storage_offset(),
        },
    );
    let in_shape: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
    record(
        "ViewBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(reshape(g, &in_shape)?)]),
    );
    out
}

/// `t.view(dtype)`: `t`'s memory read as elements of `dtype`. It shares
/// `t`'s storage and version counter but, as in PyTorch, has no history and
/// is no view for autograd. When the element sizes differ, the last dim
/// (which must have stride 1) grows or shrinks by their ratio.
pub fn view_dtype(t: &Tensor, dtype: DType) -> Result<Tensor> {
    let from = t.dtype();
    let (old, new) = (from.itemsize(), dtype.itemsize());
    let purpose = || {
        format!(
            "to view {} as {} (different element sizes)",
            from.scalar_type_name(),
            dtype.scalar_type_name()
        )
    };
    let l = t.layout();
    let mut layout = l.clone();
    if old != new {
        let n = l.ndim();
        if n == 0 {
            bail!(Runtime, "self.dim() cannot be 0 {}", purpose());
        }
        if l.strides[n - 1] != 1 {
            bail!(
                Runtime,
                "self.stride(-1) must be 1 {}, but got {}",
                purpose(),
                l.strides[n - 1]
            );
        }
        if old > new {
            let ratio = old / new;
            layout.shape[n - 1] *= ratio;
            layout.strides[..n - 1]
                .iter_mut()
                .for_each(|s| *s *= ratio as isize);
            layout.offset *= ratio;
        } else {
            let ratio = new / old;
            if l.shape[n - 1] % ratio != 0 {
                bail!(
                    Runtime,
                    "self.size(-1) must be divisible by {ratio} {}, but got {}",
                    purpose(),
                    l.shape[n - 1]
                );
            }
            if l.offset % ratio != 0 {
                bail!(
                    Runtime,
                    "self.storage_offset() must be divisible by {ratio} {}, but got {}",
                    purpose(),
                    l.offset
                );
            }
            if let Some((dim, s)) =
                (l.strides[..n - 1].iter().enumerate()).find(|(_, s)| *s % ratio as isize != 0)
            {
                bail!(
                    Runtime,
                    "self.stride({dim}) must be divisible by {ratio} {}, but got {s}",
                    purpose()
                );
            }
            layout.shape[n - 1] /= ratio;
            layout.strides[..n - 1]
                .iter_mut()
                .for_each(|s| *s /= ratio as isize);
            layout.offset /= ratio;
        }
    }
    if !t.storage().may_reinterpret_as(dtype) {
        bail!(
            Runtime,
            "cannot view {} as {}: {}",
            from.scalar_type_name(),
            dtype.scalar_type_name(),
            match from == DType::Bool || dtype == DType::Bool {
                true =>
                    "a bool tensor is viewed only as bool, as no other type keeps its bytes 0 or 1",
                false => "its memory is not aligned for the new element type",
            }
        );
    }
    Ok(t.alias_as(dtype, layout))
}

/// `reshape`: a view when possible, else a contiguous copy.
pub fn reshape(t: &Tensor, shape: &[i64]) -> Result<Tensor> {
    let target = infer_shape(shape, t.numel())?;
    match t.layout().view_strides(&target) {
        Some(strides) => Ok(reshape_alias(t, target, strides)),
        None => {
            let c = super::copy::clone(t)?;
            let strides = contiguous_strides(&target);
            Ok(reshape_alias(&c, target, strides))
        }
    }
}

/// `expand`: size-1 dimensions repeated with stride 0; `-1` keeps a size.
pub fn expand(t: &Tensor, sizes: &[i64]) -> Result<Tensor> {
    let lead = sizes
        .len()
        .checked_sub(t.ndim())
        .ok_or_else(|| too_few_sizes(t, sizes))?;
    let mut shape = Shape::new();
    for (i, &s) in sizes.iter().enumerate() {
        if s == -1 {
            if i < lead {
                bail!(Runtime, "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {}", i);
            }
            shape.push(t.shape()[i - lead]);
        } else if s < 0 {
            bail!(
                Runtime,
                "Trying to create tensor with negative dimension {}: {}",
                s,
                fmt_shape(t.shape())
            );
        } else {
            shape.push(s as usize);
        }
    }
    expand_to(t, &shape)
}

/// PyTorch's error for expanding `t` to fewer dimensions than it has.
pub(crate) fn too_few_sizes(t: &Tensor, sizes: &[i64]) -> crate::Error {
    let listed: Vec<String> = sizes.iter().map(i64::to_string).collect();
    crate::Error::Runtime(format!(
        "expand(ferrograd.{}{{{}}}, size=[{}]): the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
        t.dtype().legacy_name(),
        fmt_shape(t.shape()),
        listed.join(", "),
        sizes.len(),
        t.ndim()
    ))
}

/// PyTorch's error unless `shape` has at least `t`'s number of dimensions.
pub fn check_expandable(t: &Tensor, shape: &[usize]) -> Result<()> {
    if shape.len() < t.ndim() {
        let sizes: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        return Err(too_few_sizes(t, &sizes));
    }
    Ok(())
}

pub fn expand_to(t: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if t.shape() == shape {
        return Ok(make_view_recorded(t, t.layout().clone(), "ExpandBackward0"));
    }
    check_expandable(t, shape)?;
    let layout = t.layout().broadcast_to(shape)?;
    let out = make_view(t, layout);
    let in_shape: Shape = t.shape().into();
    record(
        "ExpandBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(sum_to(g, &in_shape)?)]),
    );
    Ok(out)
}

fn make_view_recorded(t: &Tensor, layout: Layout, name: &'static str) -> Tensor {
    let out = make_view(t, layout);
    record(
        name,
        &[t],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(g.clone())]),
    );
    out
}

/// A new tensor object over the same elements, attached to `t`'s history
/// through a pass-through node, as `Tensor(t)` and `as_subclass` give.
pub fn alias(t: &Tensor) -> Tensor {
    make_view_recorded(t, t.layout().clone(), "AliasBackward0")
}

/// `t.t_()`, `t.unsqueeze_(d)` and the other ops that change a tensor's
/// shape in place: the tensor that takes `t`'s place (see
/// [`Tensor::successor`]) laid out as the view `view(t)`. As in PyTorch the
/// storage's version is bumped, and while recording the view's node (its
/// input `t`'s old history) becomes the new `grad_fn`; a leaf that requires
/// grad is refused as for any in-place op.
pub fn restride_(t: &Tensor, view: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<Tensor> {
    t.check_inference_write()?;
    if is_grad_enabled() && t.requires_grad() {
        views::check_inplace(t)?;
    }
    let v = view(t)?;
    // Read before the bump, after which the view's history would be
    // regenerated from its base.
    let recorded = {
        let m = v.meta();
        m.grad_fn.clone().map(|f| (f, m.output_nr))
    };
    t.bump_version();
    let mut meta = t.meta().clone();
    if let Some((grad_fn, output_nr)) = recorded {
        meta.grad_fn = Some(grad_fn);
        meta.output_nr = output_nr;
        if let Some(view) = &mut meta.view {
            view.version = t.version();
        }
    }
    Ok(t.successor(v.storage().clone(), v.layout().clone(), meta))
}

/// `t.resize_(shape)`: the tensor that takes `t`'s place with `shape`,
/// dense in `format`, from `t`'s storage offset. Elements that were there
/// keep their values. A storage too small for the new shape is replaced by
/// a larger copy with zeros after the old elements, which the tensor's
/// other views no longer share.
pub fn resize_(t: &Tensor, shape: &[i64], format: Option<MemoryFormat>) -> Result<Tensor> {
    if t.requires_grad() {
        bail!(Runtime, "cannot resize variables that require grad");
    }
    t.check_inference_write()?;
    if shape.iter().any(|&d| d < 0) {
        // PyTorch's words: its size check multiplies the sizes as unsigned.
        bail!(Runtime, "numel: integer multiplication overflow");
    }
    let shape: Shape = shape.iter().map(|&d| d as usize).collect();
    crate::tensor::layout::check_numel(&shape)?;
    // As in PyTorch, a tensor that has the requested shape keeps its
    // strides unless a memory format is asked for, and its version: its
    // elements stay where they are.
    let same_shape = shape[..] == t.shape()[..];
    let format = match format {
        None if same_shape => return Ok(t.clone()),
        format => format.unwrap_or(MemoryFormat::Contiguous),
    };
    let strides = Layout::contiguous_in(&shape, &format.dim_order(shape.len())?).strides;
    let offset = t.storage_offset();
    let needed = match numel(&shape) {
        0 => 0,
        n => offset + n,
    };
    let old = t.storage();
    let storage = match needed <= old.len() {
        true => old.clone(),
        false => with_dtype!(t.dtype(), T => {
            let mut grown = try_filled(T::default(), needed)?;
            grown[..old.len()].copy_from_slice(&old.read::<T>());
            Arc::new(Storage::from_vec(grown))
        }),
    };
    if !same_shape {
        t.bump_version();
    }
    let layout = Layout {
        shape,
        strides,
        offset,
    };
    let meta = t.meta().clone();
    Ok(t.successor(storage, layout, meta))
}

/// `t.set_(source)` and `t.set_(source, offset, size, stride)`: the tensor
/// that takes `t`'s place over `source`'s storage, laid out as `source` or
/// as the given strided window of that storage. As in PyTorch it keeps
/// `t`'s version counter (bumped: the elements it shows change) and its
/// autograd record, stops being a view, and a leaf that requires grad is
/// refused outside `no_grad()`. PyTorch has no derivative for `set_`:
/// while recording, the tensor's `grad_fn` becomes a node whose backward
/// says so.
pub fn set_(t: &Tensor, source: &Tensor, window: Option<(&[i64], &[i64], i64)>) -> Result<Tensor> {
    t.check_inference_write()?;
    if source.dtype() != t.dtype() {
        bail!(
            Runtime,
            "Could not set tensor of type {} to a tensor of type {}",
            source.dtype().cpp_name(),
            t.dtype().cpp_name()
        );
    }
    if is_grad_enabled() && t.requires_grad() {
        views::check_inplace(t)?;
    }
    let layout = match window {
        None => source.layout().clone(),
        Some((size, stride, offset)) => {
            let _untracked = crate::autograd::GradModeGuard::new(false);
            as_strided(source, size, stride, Some(offset))?
                .layout()
                .clone()
        }
    };
    t.bump_version();
    let next = t.successor(source.storage().clone(), layout, t.record_without_view());
    record(
        "NotImplemented",
        &[t, source],
        &next,
        || (),
        |_, _, _| bail!(Runtime, "derivative for aten::set_ is not implemented"),
    );
    Ok(next)
}

pub fn permute(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let n = t.ndim();
    if dims.len() != n {
        bail!(
            Runtime,
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {} is not equal to len(dims) = {}",
            n,
            dims.len()
        );
    }
    let mut perm = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for &d in dims {
        let d = wrap_dim(d, n)?;
        if seen[d] {
            bail!(Runtime, "permute(): duplicate dims are not allowed.");
        }
        seen[d] = true;
        perm.push(d);
    }
    let l = t.layout();
    let layout = Layout {
        shape: perm.iter().map(|&d| l.shape[d]).collect(),
        strides: perm.iter().map(|&d| l.strides[d]).collect(),
        offset: l.offset,
    };
    let out = make_view(t, layout);
    let mut inverse = vec![0i64; n];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p] = i as i64;
    }
    record(
        "PermuteBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(permute(g, &inverse)?)]),
    );
    Ok(out)
}

pub fn transpose(t: &Tensor, d0: i64, d1: i64) -> Result<Tensor> {
    transpose_named(t, d0, d1, "TransposeBackward0")
}

/// `t.transpose_(d0, d1)` (`TransposeBackward1`), see [`restride_`].
pub fn transpose_(t: &Tensor, d0: i64, d1: i64) -> Result<Tensor> {
    restride_(t, |t| transpose_named(t, d0, d1, "TransposeBackward1"))
}

fn transpose_named(t: &Tensor, d0: i64, d1: i64, name: &'static str) -> Result<Tensor> {
    let n = t.ndim();
    let (a, b) = (wrap_dim(d0, n)?, wrap_dim(d1, n)?);
    if n == 0 {
        return Ok(make_view_recorded(t, t.layout().clone(), name));
    }
    let out = make_view(t, t.layout().transposed(a, b));
    record(
        name,
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(transpose(g, a as i64, b as i64)?)]),
    );
    Ok(out)
}

/// `t()`: transpose of a matrix; vectors and scalars are returned as views.
pub fn t(x: &Tensor) -> Result<Tensor> {
    t_named(x, "TBackward0")
}

/// `x.t_()` (`TBackward1`), see [`restride_`].
pub fn t_(x: &Tensor) -> Result<Tensor> {
    restride_(x, |x| t_named(x, "TBackward1"))
}

fn t_named(x: &Tensor, name: &'static str) -> Result<Tensor> {
    if x.ndim() > 2 {
        bail!(
            Runtime,
            "t() expects a tensor with <= 2 dimensions, but self is {}D",
            x.ndim()
        );
    }
    if x.ndim() < 2 {
        return Ok(make_view_recorded(x, x.layout().clone(), name));
    }
    let out = make_view(x, x.layout().transposed(0, 1));
    record(name, &[x], &out, || (), |_, _, g| Ok(grads![Some(t(g)?)]));
    Ok(out)
}

pub fn unsqueeze(t: &Tensor, dim: i64) -> Result<Tensor> {
    unsqueeze_named(t, dim, "UnsqueezeBackward0")
}

/// `t.unsqueeze_(dim)` (`UnsqueezeBackward1`), see [`restride_`].
pub fn unsqueeze_(t: &Tensor, dim: i64) -> Result<Tensor> {
    restride_(t, |t| unsqueeze_named(t, dim, "UnsqueezeBackward1"))
}

fn unsqueeze_named(t: &Tensor, dim: i64, name: &'static str) -> Result<Tensor> {
    let d = wrap_dim(dim, t.ndim() + 1)?;
    let mut l = t.layout().clone();
    let stride = if d < l.ndim() {
        l.strides[d] * l.shape[d] as isize
    } else {
        1
    };
    l.shape.insert(d, 1);
    l.strides.insert(d, stride);
    let out = make_view(t, l);
    record(
        name,
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(squeeze_dims(g, &[d])?)]),
    );
    Ok(out)
}

/// Removes the given size-1 dimensions (others are left alone).
pub fn squeeze_dims(t: &Tensor, dims: &[usize]) -> Result<Tensor> {
    squeeze_dims_named(t, dims, "SqueezeBackward0")
}

fn squeeze_dims_named(t: &Tensor, dims: &[usize], name: &'static str) -> Result<Tensor> {
    let l = t.layout();
    let keep: Vec<usize> = (0..l.ndim())
        .filter(|d| !(dims.contains(d) && l.shape[*d] == 1))
        .collect();
    let layout = Layout {
        shape: keep.iter().map(|&d| l.shape[d]).collect(),
        strides: keep.iter().map(|&d| l.strides[d]).collect(),
        offset: l.offset,
    };
    let in_shape: Vec<i64> = l.shape.iter().map(|&d| d as i64).collect();
    let out = make_view(t, layout);
    record(
        name,
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(reshape(g, &in_shape)?)]),
    );
    Ok(out)
}

/// The dims `squeeze` is asked for, in the form it was called with:
/// PyTorch names the node by the form.
pub enum SqueezeDims<'a> {
    All,
    One(i64),
    Listed(&'a [i64]),
}

/// `squeeze()`, `squeeze(dim)` or `squeeze(dims)` (`SqueezeBackward0`,
/// `1` and `2`).
pub fn squeeze(t: &Tensor, dims: SqueezeDims<'_>) -> Result<Tensor> {
    squeeze_named(
        t,
        dims,
        ["SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2"],
    )
}

/// `t.squeeze_(...)` (`SqueezeBackward3`, `4` and `5`), see [`restride_`].
pub fn squeeze_(t: &Tensor, dims: SqueezeDims<'_>) -> Result<Tensor> {
    restride_(t, |t| {
        squeeze_named(
            t,
            dims,
            ["SqueezeBackward3", "SqueezeBackward4", "SqueezeBackward5"],
        )
    })
}

/// `names`: the node's name for each form of [`SqueezeDims`], in order.
fn squeeze_named(t: &Tensor, dims: SqueezeDims<'_>, names: [&'static str; 3]) -> Result<Tensor> {
    let wrap = |d: &i64| wrap_dim(*d, t.ndim());
    let (dims, name): (Vec<usize>, _) = match dims {
        SqueezeDims::All => ((0..t.ndim()).collect(), names[0]),
        SqueezeDims::One(d) => (vec![wrap(&d)?], names[1]),
        SqueezeDims::Listed(ds) => (ds.iter().map(wrap).collect::<Result<_>>()?, names[2]),
    };
    squeeze_dims_named(t, &dims, name)
}

/// `narrow(dim, start, length)`: a slice of one dimension.
pub fn narrow(t: &Tensor, dim: i64, start: i64, length: i64) -> Result<Tensor> {
    if t.ndim() == 0 {
        bail!(Runtime, "narrow() cannot be applied to a 0-dim tensor.");
    }
    let d = wrap_dim(dim, t.ndim())?;
    let size = t.shape()[d] as i64;
    let start = if start < 0 { start + size } else { start };
    if start < 0 || start > size {
        bail!(
            Index,
            "start out of range (expected to be in range of [{}, {}], but got {})",
            -size,
            size,
            start
        );
    }
    if length < 0 || start + length > size {
        bail!(
            Runtime,
            "start ({}) + length ({}) exceeds dimension size ({}).",
            start,
            length,
            size
        );
    }
    slice(t, d, start as usize, length as usize, 1)
}

/// Elements `start, start+step, ...` (`count` of them) along `dim`.
pub fn slice(t: &Tensor, dim: usize, start: usize, count: usize, step: usize) -> Result<Tensor> {
    let mut l = t.layout().clone();
    if count > 0 {
        l.offset = (l.offset as isize + start as isize * l.strides[dim]) as usize;
    }
    l.shape[dim] = count;
    l.strides[dim] *= step as isize;
    let out = make_view(t, l);
    let in_shape: Shape = t.shape().into();
    record(
        "SliceBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| {
            Ok(grads![Some(super::index::slice_backward(
                g, &in_shape, dim, start, step
            )?)])
        },
    );
    Ok(out)
}

/// `t.select(dim, index)` as called by name, with that op's message for an
/// index out of range (`t[i]`, through [`select`], reports the bounds).
pub fn select_by_name(t: &Tensor, dim: i64, index: i64) -> Result<Tensor> {
    select_reporting(t, dim, index, |d, _| {
        format!(
            "select(): index {index} out of range for tensor of size {:?} at dimension {d}",
            t.shape()
        )
    })
}

/// `select(dim, index)`: drops `dim`, keeping one position.
pub fn select(t: &Tensor, dim: i64, index: i64) -> Result<Tensor> {
    select_reporting(t, dim, index, |d, size| {
        format!("index {index} is out of bounds for dimension {d} with size {size}")
    })
}

/// [`select`], with `out_of_range(dim, size)` the message of an `IndexError`
/// for an index outside `dim`.
fn select_reporting(
    t: &Tensor,
    dim: i64,
    index: i64,
    out_of_range: impl Fn(usize, i64) -> String,
) -> Result<Tensor> {
    if t.ndim() == 0 {
        bail!(Index, "select() cannot be applied to a 0-dim tensor.");
    }
    let d = wrap_dim(dim, t.ndim())?;
    let size = t.shape()[d] as i64;
    if index < -size || index >= size {
        return Err(crate::Error::Index(out_of_range(d, size)));
    }
    let i = if index < 0 { index + size } else { index } as usize;
    let mut l = t.layout().clone();
    l.offset = (l.offset as isize + i as isize * l.strides[d]) as usize;
    l.shape.remove(d);
    l.strides.remove(d);
    let out = make_view(t, l);
    let in_shape: Shape = t.shape().into();
    record(
        "SelectBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| {
            let g = unsqueeze(g, d as i64)?;
            Ok(grads![Some(super::index::slice_backward(
                &g, &in_shape, d, i, 1
            )?)])
        },
    );
    Ok(out)
}

pub fn flatten(t: &Tensor, start: i64, end: i64) -> Result<Tensor> {
    let (s, e) = (wrap_dim(start, t.ndim())?, wrap_dim(end, t.ndim())?);
    if t.ndim() == 0 {
        return reshape(t, &[1]);
    }
    if s > e {
        bail!(
            Runtime,
            "flatten() has invalid args: start_dim cannot come after end_dim"
        );
    }
    let mut shape: Vec<i64> = t.shape()[..s].iter().map(|&d| d as i64).collect();
    shape.push(numel(&t.shape()[s..=e]) as i64);
    shape.extend(t.shape()[e + 1..].iter().map(|&d| d as i64));
    reshape(t, &shape)
}

/// Where diagonal `offset` of a matrix layout lies: a 1-D layout.
/// The diagonal `offset` of the matrices spanned by dims `d1` and `d2`:
/// those dims dropped and the diagonal appended as the last dim.
fn diagonal_layout(l: &Layout, offset: i64, d1: usize, d2: usize) -> Layout {
    let (rows, cols) = (l.shape[d1] as i64, l.shape[d2] as i64);
    let (s1, s2) = (l.strides[d1], l.strides[d2]);
    let len = if offset >= 0 {
        rows.min(cols - offset)
    } else {
        (rows + offset).min(cols)
    }
    .max(0) as usize;
    let start = match (len, offset >= 0) {
        (0, _) => 0,
        (_, true) => offset as isize * s2,
        (_, false) => -offset as isize * s1,
    };
    let kept = (0..l.ndim()).filter(|&d| d != d1 && d != d2);
    let mut shape: Shape = kept.clone().map(|d| l.shape[d]).collect();
    let mut strides: Strides = kept.map(|d| l.strides[d]).collect();
    shape.push(len);
    strides.push(s1 + s2);
    Layout {
        shape,
        strides,
        offset: (l.offset as isize + start) as usize,
    }
}

/// Zeros of `shape` with `values` on the diagonal `offset` of dims `d1`
/// and `d2` (no history).
fn embed_diagonal(
    values: &Tensor,
    shape: &[usize],
    offset: i64,
    d1: usize,
    d2: usize,
) -> Result<Tensor> {
    crate::tensor::layout::check_numel(shape)?;
    let out = Tensor::full(shape, Scalar::Int(0), values.dtype())?;
    let window = out.alias(diagonal_layout(out.layout(), offset, d1, d2));
    crate::with_dtype!(out.dtype(), T => super::elementwise::update::<T, T>(&window, values, |_, s| s))?;
    Ok(out)
}

/// `diagonal(offset, dim1, dim2)`: a view of the diagonals of the matrices
/// dims `dim1` and `dim2` span, as the last dim.
pub fn diagonal(t: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
    let (d1, d2) = (wrap_dim(dim1, t.ndim())?, wrap_dim(dim2, t.ndim())?);
    if d1 == d2 {
        bail!(
            Runtime,
            "diagonal dimensions cannot be identical {dim1}, {dim2}"
        );
    }
    let out = make_view(t, diagonal_layout(t.layout(), offset, d1, d2));
    let in_shape: Shape = t.shape().into();
    record(
        "DiagonalBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| {
            Ok(grads![Some(diagonal_backward(
                g, &in_shape, offset, d1, d2
            )?)])
        },
    );
    Ok(out)
}

fn diagonal_backward(
    g: &Tensor,
    shape: &Shape,
    offset: i64,
    d1: usize,
    d2: usize,
) -> Result<Tensor> {
    let out = embed_diagonal(g, shape, offset, d1, d2)?;
    record(
        "DiagonalBackwardBackward0",
        &[g],
        &out,
        || (),
        move |_, _, gg| Ok(grads![Some(diagonal(gg, offset, d1 as i64, d2 as i64)?)]),
    );
    Ok(out)
}

/// `unfold(dimension, size, step)`: a view of the windows of `size`
/// elements every `step` along `dimension`, which becomes the window
/// count; the window is the new last dim.
/// `t`'s storage read with `size` and `stride` from `storage_offset` (`t`'s
/// own offset when `None`): a view, which may overlap itself (a sliding
/// window), whose gradient adds up at every position it reads.
/// `t.as_strided_(size, stride, storage_offset)`, see [`restride_`].
pub fn as_strided_(
    t: &Tensor,
    size: &[i64],
    stride: &[i64],
    storage_offset: Option<i64>,
) -> Result<Tensor> {
    restride_(t, |t| as_strided(t, size, stride, storage_offset))
}

pub fn as_strided(
    t: &Tensor,
    size: &[i64],
    stride: &[i64],
    storage_offset: Option<i64>,
) -> Result<Tensor> {
    if size.len() != stride.len() {
        bail!(Runtime, "mismatch in length of strides and shape");
    }
    if size.iter().any(|&n| n < 0) {
        bail!(
            Runtime,
            "Storage size calculation overflowed with sizes={size:?} and strides={stride:?}"
        );
    }
    if stride.iter().any(|&s| s < 0) {
        bail!(
            Runtime,
            "as_strided: Negative strides are not supported at the moment, got strides: {stride:?}"
        );
    }
    let offset = storage_offset.unwrap_or(t.storage_offset() as i64);
    if offset < 0 {
        bail!(Runtime, "Tensor: invalid storage offset {offset}");
    }
    let itemsize = t.dtype().itemsize() as i128;
    // In elements of `t`'s dtype (the storage may be reinterpreted).
    let storage = t.storage();
    let available = (storage.len() * storage.dtype().itemsize()) as i128 / itemsize;
    let needed = match size.contains(&0) {
        true => 0,
        false => {
            let last: i128 = size
                .iter()
                .zip(stride)
                .map(|(&n, &s)| (n as i128 - 1) * s as i128)
                .sum();
            offset as i128 + last + 1
        }
    };
    if needed > available {
        bail!(
            Runtime,
            "setStorage: sizes {size:?}, strides {stride:?}, storage offset {offset}, and itemsize {itemsize} requiring a storage size of {} are out of bounds for storage of size {}",
            needed * itemsize,
            available * itemsize
        );
    }
    let layout = Layout {
        shape: size.iter().map(|&n| n as usize).collect(),
        strides: stride.iter().map(|&s| s as isize).collect(),
        offset: offset as usize,
    };
    crate::tensor::layout::check_numel(&layout.shape)?;
    let out = make_view(t, layout);
    crate::autograd::views::record_as_strided(t, &out)?;
    Ok(out)
}

pub fn unfold(t: &Tensor, dimension: i64, size: i64, step: i64) -> Result<Tensor> {
    let d = wrap_dim(dimension, t.ndim().max(1))?;
    let l = t.layout();
    let length = l.shape.get(d).copied().unwrap_or(1) as i64;
    if size < 0 || size > length {
        bail!(
            Runtime,
            "maximum size for tensor at dimension {d} is {length} but size is {size}"
        );
    }
    if step <= 0 {
        bail!(Runtime, "step is {step} but must be > 0");
    }
    let layout = if t.ndim() == 0 {
        Layout {
            shape: Shape::from_slice(&[size as usize]),
            strides: Strides::from_slice(&[1]),
            offset: l.offset,
        }
    } else {
        let mut window = l.clone();
        window.shape[d] = ((length - size) / step + 1) as usize;
        window.strides[d] = l.strides[d] * step as isize;
        window.shape.push(size as usize);
        window.strides.push(l.strides[d]);
        window
    };
    let out = make_view(t, layout);
    let in_shape: Shape = t.shape().into();
    record(
        "UnfoldBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(unfold_backward(g, &in_shape, d, step)?)]),
    );
    Ok(out)
}

/// The gradient of `unfold`: each window's gradient added back where the
/// window was read. Element `k` of every window lands on positions `k`,
/// `k + step`, ... of the dim, which never overlap, so the windows are
/// added one element offset at a time.
fn unfold_backward(g: &Tensor, shape: &Shape, d: usize, step: i64) -> Result<Tensor> {
    let out = Tensor::full(shape, Scalar::Int(0), g.dtype())?;
    if shape.is_empty() && g.numel() == 1 {
        crate::with_dtype!(out.dtype(), T => super::elementwise::update::<T, T>(&out, &reshape(g, &[])?, |_, s| s))?;
    } else if !shape.is_empty() {
        let size = *g.shape().last().expect("a window dim");
        let windows = g.shape()[d];
        let stride = out.layout().strides[d];
        for k in 0..size {
            let mut at = out.layout().clone();
            at.shape[d] = windows;
            at.strides[d] = stride * step as isize;
            at.offset = (at.offset as isize + k as isize * stride) as usize;
            let part = select(g, -1, k as i64)?;
            crate::with_dtype!(out.dtype(), T => super::elementwise::update::<T, T>(&out.alias(at), &part, super::num::Arith::add))?;
        }
    }
    let (dim, size) = (d as i64, g.shape().last().copied().unwrap_or(1) as i64);
    record(
        "UnfoldBackwardBackward0",
        &[g],
        &out,
        || (),
        move |_, _, gg| Ok(grads![Some(unfold(gg, dim, size, step)?)]),
    );
    Ok(out)
}

/// `diag`: a vector becomes a matrix with it on diagonal `offset`; a
/// matrix gives a copy of that diagonal.
pub fn diag(t: &Tensor, offset: i64) -> Result<Tensor> {
    match t.ndim() {
        1 => {
            let n = t.shape()[0] + offset.unsigned_abs() as usize;
            let out = embed_diagonal(t, &[n, n], offset, 0, 1)?;
            record(
                "DiagEmbedBackward0",
                &[t],
                &out,
                || (),
                move |_, _, g| Ok(grads![Some(diagonal(g, offset, 0, 1)?)]),
            );
            Ok(out)
        }
        2 => super::copy::clone(&diagonal(t, offset, 0, 1)?),
        _ => bail!(
            Runtime,
            "diag(): Supports 1D or 2D tensors. Got {}D",
            t.ndim()
        ),
    }
}
