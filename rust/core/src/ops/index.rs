//! Indexing: slicing back-propagation, gathers with integer tensors and
//! boolean masks, and joining tensors.

use super::copy::{contiguous, try_cast};
use super::elementwise::{row, update};
use super::num::Arith;
use super::shape::slice;
use crate::autograd::record;
use crate::tensor::layout::{wrap_dim, wrap_dim_of_array, Layout, Strides};
use crate::tensor::storage::{try_buffer, try_collect, try_filled};
use crate::tensor::{DType, Scalar, Shape, Tensor};
use crate::{bail, grads, with_dtype, Result};

/// Zeros of `shape` with `g` written at positions `start, start+step, ...`
/// of `dim`: the gradient of a slice (and of `select`).
pub fn slice_backward(
    g: &Tensor,
    shape: &Shape,
    dim: usize,
    start: usize,
    step: usize,
) -> Result<Tensor> {
    let out = Tensor::full(shape, Scalar::Int(0), g.dtype())?;
    let count = g.shape()[dim];
    let mut l: Layout = out.layout().clone();
    if g.numel() > 0 {
        l.offset += start * l.strides[dim] as usize;
    }
    l.shape[dim] = count;
    l.strides[dim] *= step as isize;
    let window = out.alias(l);
    let src = try_cast(g, out.dtype())?;
    with_dtype!(out.dtype(), T => update::<T, T>(&window, &src, |_, s| s))?;
    record(
        "SliceBackwardBackward0",
        &[g],
        &out,
        || (),
        move |_, _, gg| Ok(grads![Some(slice(gg, dim, start, count, step)?)]),
    );
    Ok(out)
}

/// Storage offsets into `l` of `index`'s elements along `dim` (row-major
/// over `index`, whose other coordinates address `l` directly): the
/// geometry of `gather` and its adjoint `scatter_add`.
pub(super) fn gather_offsets(l: &Layout, dim: usize, index: &Tensor) -> Result<Vec<usize>> {
    let size = l.shape.get(dim).copied().unwrap_or(1) as i64;
    let stride = l.strides.get(dim).copied().unwrap_or(0);
    // Where each index element lands at position 0 along `dim`; a 0-d
    // index (or a 0-d source) has no other dims to place it.
    let mut strides: Strides = match l.ndim() == index.ndim() {
        true => l.strides.clone(),
        false => index.shape().iter().map(|_| 0).collect(),
    };
    if let Some(s) = strides.get_mut(dim) {
        *s = 0;
    }
    let mut offsets = Layout {
        shape: index.shape().into(),
        strides,
        offset: l.offset,
    }
    .offset_vec()?;
    // One pass turns each start into its element's offset.
    let out_of_bounds =
        contiguous(&try_cast(index, DType::Int64)?)?.with_contiguous(|positions: &[i64]| {
            for (offset, &v) in offsets.iter_mut().zip(positions) {
                if v < 0 || v >= size {
                    return Some(v);
                }
                *offset = (*offset as isize + v as isize * stride) as usize;
            }
            None
        });
    if let Some(v) = out_of_bounds {
        bail!(
            Runtime,
            "index {} is out of bounds for dimension {} with size {}",
            v,
            dim,
            size
        );
    }
    Ok(offsets)
}

/// An index tensor as int64: int32 indices are accepted wherever int64
/// ones are, as in PyTorch; other dtypes pass through to the callers'
/// checks.
pub(crate) fn int64_index(index: &Tensor) -> Result<Tensor> {
    match index.dtype() {
        DType::Int32 => try_cast(index, DType::Int64),
        _ => Ok(index.clone()),
    }
}

fn check_gather(t: &Tensor, dim: usize, index: &Tensor, op: &str) -> Result<()> {
    if index.dtype() != DType::Int64 {
        bail!(Runtime, "{op}(): Expected dtype int32/int64 for index");
    }
    if index.ndim() != t.ndim().max(1)
        && !(index.ndim() == 0 && t.ndim() <= 1)
        && !(t.ndim() == 0 && index.ndim() <= 1)
    {
        bail!(
            Runtime,
            "Index tensor must have the same number of dimensions as input tensor"
        );
    }
    // As in PyTorch, an empty index may be larger than `t` anywhere.
    let dims = if index.numel() == 0 {
        0
    } else {
        index.ndim().min(t.ndim())
    };
    for d in 0..dims {
        if d != dim && index.shape()[d] > t.shape()[d] {
            bail!(
                Runtime,
                "Size does not match at dimension {} expected index {} to be no larger than self {} apart from dimension {}",
                d,
                crate::tensor::layout::fmt_shape(index.shape()),
                crate::tensor::layout::fmt_shape(t.shape()),
                dim
            );
        }
    }
    Ok(())
}

/// `gather(dim, index)`: `out[i][j] = t[i][index[i][j]]` for `dim = 1`.
pub fn gather(t: &Tensor, dim: i64, index: &Tensor) -> Result<Tensor> {
    let d = wrap_dim(dim, t.ndim())?;
    let index = &int64_index(index)?;
    check_gather(t, d, index, "gather")?;
    let offsets = gather_offsets(t.layout(), d, index)?;
    let out = with_dtype!(t.dtype(), T => {
        let data = t.storage().read::<T>();
        let out: Vec<T> = try_collect(offsets.len(), offsets.iter().map(|&o| data[o]))?;
        Tensor::from_vec(out, index.shape())?
    });
    let (in_shape, idx): (Shape, Tensor) = (t.shape().into(), index.clone());
    record(
        "GatherBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| {
            Ok(grads![Some(super::scatter::scatter_add_zeros(
                g, d, &idx, &in_shape
            )?)])
        },
    );
    Ok(out)
}

/// Writes `src` (broadcast, cast) into the view `dst` in place.
pub fn assign(dst: &Tensor, src: &Tensor) -> Result<()> {
    let src = try_cast(src, dst.dtype())?;
    with_dtype!(dst.dtype(), T => update::<T, T>(dst, &src, |_, s| s))
}

/// A window of `out` along `dim`: `len` positions from `start`.
fn window(out: &Tensor, dim: usize, start: usize, len: usize) -> Tensor {
    let mut l = out.layout().clone();
    l.offset += start * l.strides[dim] as usize;
    l.shape[dim] = len;
    out.alias(l)
}

/// `cat(tensors, dim)` (`CatBackward0`). As in PyTorch, 1-D empty tensors
/// are skipped whatever the other shapes are.
pub fn cat(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
    if tensors.is_empty() {
        bail!(
            Value,
            "ferrograd.cat(): expected a non-empty list of Tensors"
        );
    }
    if let Some(i) = tensors.iter().position(|t| t.ndim() == 0) {
        bail!(
            Runtime,
            "zero-dimensional tensor (at position {}) cannot be concatenated",
            i
        );
    }
    let skipped = |t: &Tensor| t.ndim() == 1 && t.numel() == 0;
    let reference = tensors.iter().find(|t| !skipped(t)).unwrap_or(&tensors[0]);
    let d = wrap_dim(dim, reference.ndim())?;
    let mut shape: Shape = reference.shape().into();
    shape[d] = 0;
    for (i, t) in tensors.iter().enumerate() {
        if skipped(t) && !reference.same(t) {
            continue;
        }
        if t.ndim() != shape.len() {
            bail!(
                Runtime,
                "Tensors must have same number of dimensions: got {} and {}",
                shape.len(),
                t.ndim()
            );
        }
        for k in 0..shape.len() {
            if k != d && t.shape()[k] != shape[k] {
                bail!(
                    Runtime,
                    "Sizes of tensors must match except in dimension {}. Expected size {} but got size {} for tensor number {} in the list.",
                    d,
                    shape[k],
                    t.shape()[k],
                    i
                );
            }
        }
        shape[d] += t.shape()[d];
    }
    let refs: Vec<&Tensor> = tensors.iter().collect();
    let out = Tensor::full(&shape, Scalar::Int(0), super::result_type(&refs))?;
    let mut spans = Vec::with_capacity(tensors.len());
    let mut at = 0;
    for t in tensors {
        if skipped(t) && !reference.same(t) {
            spans.push(None);
            continue;
        }
        let len = t.shape()[d];
        if t.numel() > 0 {
            assign(&window(&out, d, at, len), t)?;
        }
        spans.push(Some((at, len)));
        at += len;
    }
    record(
        "CatBackward0",
        &refs,
        &out,
        || (),
        move |_, _, g| {
            spans
                .iter()
                .map(|s| match *s {
                    // Empty pieces: no view (its offset could pass the storage's end).
                    Some((_, len)) if g.numel() == 0 || len == 0 => {
                        let mut shape: Shape = g.shape().into();
                        shape[d] = len;
                        Ok(Some(Tensor::full(&shape, Scalar::Int(0), g.dtype())?))
                    }
                    Some((start, len)) => Ok(Some(slice(g, d, start, len, 1)?)),
                    None => Ok(Some(Tensor::full(&[0], Scalar::Int(0), g.dtype())?)),
                })
                .collect()
        },
    );
    Ok(out)
}

/// `stack(tensors, dim)` (`StackBackward0`).
pub fn stack(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
    let Some(first) = tensors.first() else {
        bail!(Runtime, "stack expects a non-empty TensorList");
    };
    for (i, t) in tensors.iter().enumerate() {
        if t.shape() != first.shape() {
            bail!(
                Runtime,
                "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {}",
                crate::tensor::layout::fmt_shape(first.shape()),
                crate::tensor::layout::fmt_shape(t.shape()),
                i
            );
        }
    }
    let d = wrap_dim(dim, first.ndim() + 1)?;
    let parts = tensors
        .iter()
        .map(|t| super::shape::unsqueeze(&t.detach(), d as i64))
        .collect::<Result<Vec<_>>>()?;
    let out = cat(&parts, d as i64)?;
    let refs: Vec<&Tensor> = tensors.iter().collect();
    let (n, in_shape): (usize, Shape) = (tensors.len(), first.shape().into());
    record(
        "StackBackward0",
        &refs,
        &out,
        || (),
        move |_, _, g| {
            (0..n)
                .map(|i| {
                    if g.numel() == 0 {
                        // No view of an empty gradient (its offset could pass the end).
                        return Ok(Some(Tensor::full(&in_shape, Scalar::Int(0), g.dtype())?));
                    }
                    Ok(Some(super::shape::select(g, d as i64, i as i64)?))
                })
                .collect()
        },
    );
    Ok(out)
}

/// Views of consecutive pieces of `dim` with the given lengths, sharing one
/// multi-output node (`SplitBackward0` and friends): gradients of unused
/// pieces count as zeros.
pub fn split_sizes(
    t: &Tensor,
    dim: usize,
    sizes: &[usize],
    name: &'static str,
) -> Result<Vec<Tensor>> {
    let pieces = {
        let _no_grad = crate::autograd::GradModeGuard::new(false);
        let mut at = 0;
        sizes
            .iter()
            .map(|&len| {
                let p = slice(t, dim, at, len, 1);
                at += len;
                p
            })
            .collect::<Result<Vec<_>>>()?
    };
    crate::autograd::views::mark_multiple_outputs(&pieces, name);
    let shapes: Vec<Shape> = pieces.iter().map(|p| p.shape().into()).collect();
    let refs: Vec<&Tensor> = pieces.iter().collect();
    crate::autograd::record_multi(
        name,
        &[t],
        &refs,
        || (),
        move |_, _, grads| {
            let dtype = grads.iter().flatten().next().map(|g| g.dtype());
            let parts = grads
                .iter()
                .zip(&shapes)
                .map(|(g, s)| match g {
                    Some(g) => Ok(g.clone()),
                    None => Tensor::full(s, Scalar::Int(0), dtype.unwrap_or(DType::Float32)),
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(grads![Some(cat(&parts, dim as i64)?)])
        },
    );
    Ok(pieces)
}

/// `split(split_size, dim)`: pieces of `size` (the last may be shorter).
pub fn split(t: &Tensor, size: usize, dim: i64) -> Result<Vec<Tensor>> {
    if t.ndim() == 0 {
        bail!(Runtime, "split expects at least a 1-dimensional tensor");
    }
    let d = wrap_dim(dim, t.ndim())?;
    let n = t.shape()[d];
    if size == 0 && n > 0 {
        bail!(
            Runtime,
            "split_size can only be 0 if dimension size is 0, but got dimension size of {}",
            n
        );
    }
    let count = if size == 0 {
        1
    } else {
        n.div_ceil(size).max(1)
    };
    let sizes: Vec<usize> = (0..count)
        .map(|i| size.min(n - (i * size).min(n)))
        .collect();
    split_sizes(t, d, &sizes, "SplitBackward0")
}

/// `split([sizes], dim)` (`SplitWithSizesBackward0`).
pub fn split_with_sizes(t: &Tensor, sizes: &[i64], dim: i64) -> Result<Vec<Tensor>> {
    if t.ndim() == 0 {
        bail!(Runtime, "split expects at least a 1-dimensional tensor");
    }
    let d = wrap_dim(dim, t.ndim())?;
    let total: i64 = sizes.iter().sum();
    if sizes.iter().any(|&s| s < 0) || total != t.shape()[d] as i64 {
        bail!(
            Runtime,
            "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at dimension {}), but got split_sizes=[{}]",
            t.shape()[d],
            d,
            sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
        );
    }
    let sizes: Vec<usize> = sizes.iter().map(|&s| s as usize).collect();
    split_sizes(t, d, &sizes, "SplitWithSizesBackward0")
}

/// `chunk(chunks, dim)`: `split` with `ceil(size / chunks)`.
pub fn chunk(t: &Tensor, chunks: i64, dim: i64) -> Result<Vec<Tensor>> {
    if t.ndim() == 0 {
        bail!(Runtime, "chunk expects at least a 1-dimensional tensor");
    }
    if chunks <= 0 {
        bail!(
            Runtime,
            "chunk expects `chunks` to be greater than 0, got: {}",
            chunks
        );
    }
    let d = wrap_dim(dim, t.ndim())?;
    let size = t.shape()[d].div_ceil(chunks as usize);
    split(t, size, d as i64)
}

/// `unbind(dim)`: every position of `dim`, the dim removed (`UnbindBackward0`).
pub fn unbind(t: &Tensor, dim: i64) -> Result<Vec<Tensor>> {
    let d = wrap_dim_of_array(dim, t.ndim())?;
    let pieces = {
        let _no_grad = crate::autograd::GradModeGuard::new(false);
        (0..t.shape()[d])
            .map(|i| super::shape::select(t, d as i64, i as i64))
            .collect::<Result<Vec<_>>>()?
    };
    crate::autograd::views::mark_multiple_outputs(&pieces, "UnbindBackward0");
    let shape: Shape = pieces.first().map(|p| p.shape().into()).unwrap_or_default();
    let refs: Vec<&Tensor> = pieces.iter().collect();
    crate::autograd::record_multi(
        "UnbindBackward0",
        &[t],
        &refs,
        || (),
        move |_, _, grads| {
            let dtype = grads.iter().flatten().next().map(|g| g.dtype());
            let parts = grads
                .iter()
                .map(|g| match g {
                    Some(g) => Ok(g.clone()),
                    None => Tensor::full(&shape, Scalar::Int(0), dtype.unwrap_or(DType::Float32)),
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(grads![Some(stack(&parts, d as i64)?)])
        },
    );
    Ok(pieces)
}

/// Coordinates of the true elements of a bool tensor, one int64 tensor per
/// dimension (what a boolean mask index selects).
fn mask_coordinates(mask: &Tensor) -> Vec<Tensor> {
    let shape = mask.shape();
    let vals = mask.to_vec::<bool>();
    let strides = crate::tensor::layout::contiguous_strides(shape);
    let hits: Vec<usize> = (0..vals.len()).filter(|&i| vals[i]).collect();
    (0..shape.len())
        .map(|d| {
            let coords = hits
                .iter()
                .map(|&i| ((i as isize / strides[d]) as usize % shape[d]) as i64)
                .collect();
            Tensor::from_vec(coords, &[hits.len()]).expect("sized")
        })
        .collect()
}

/// PyTorch's `index(tensor, indices)` argument checks: masks become int64
/// coordinates; the result has one optional int64 index per dimension.
pub fn normalize_indices(t: &Tensor, indices: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
    let mut out: Vec<Option<Tensor>> = Vec::with_capacity(t.ndim());
    for idx in indices {
        match idx {
            // A uint8 index is a mask, as in PyTorch.
            Some(m) if matches!(m.dtype(), DType::Bool | DType::UInt8) => {
                let m = &try_cast(m, DType::Bool)?;
                let at = out.len();
                for (k, &s) in m.shape().iter().enumerate() {
                    if at + k >= t.ndim() {
                        bail!(
                            Index,
                            "too many indices for tensor of dimension {}",
                            t.ndim()
                        );
                    }
                    if t.shape()[at + k] != s {
                        bail!(
                            Index,
                            "The shape of the mask {} at index {} does not match the shape of the indexed tensor {} at index {}",
                            crate::tensor::layout::fmt_shape(m.shape()),
                            k,
                            crate::tensor::layout::fmt_shape(t.shape()),
                            at + k
                        );
                    }
                }
                if m.ndim() == 0 {
                    bail!(
                        Index,
                        "a 0-d mask index is only supported from Python indexing"
                    );
                }
                out.extend(mask_coordinates(m).into_iter().map(Some));
            }
            Some(i) if i.dtype() == DType::Int32 => out.push(Some(try_cast(i, DType::Int64)?)),
            Some(i) if i.dtype() != DType::Int64 => bail!(
                Index,
                "tensors used as indices must be long, int, byte or bool tensors"
            ),
            other => out.push(other.clone()),
        }
    }
    if out.len() > t.ndim() {
        bail!(
            Index,
            "too many indices for tensor of dimension {}",
            t.ndim()
        );
    }
    out.resize(t.ndim(), None);
    Ok(out)
}

/// Where advanced indexing reads (or writes): per broadcast index position a
/// base offset, and the layout of the un-indexed dims relative to it.
struct Plan {
    bases: Vec<usize>,
    rest: Layout,
    /// Output shape in `[broadcast, rest]` order.
    flat_shape: Shape,
    /// Permutation from `[broadcast, rest]` to PyTorch's output order (when
    /// the indexed dims are adjacent they stay in place).
    perm: Option<Vec<i64>>,
}

impl Plan {
    /// Calls `body(start, len, stride)` for every row of the indexed
    /// elements, in output order: the rows of `rest` from each base.
    fn for_rows(&self, mut body: impl FnMut(usize, usize, isize)) -> Result<()> {
        let [rest] = Layout::coalesced([&self.rest]);
        let (starts, len, stride) = rest.rows();
        // Rows of no elements have nothing to visit, and their offsets may
        // lie past the end of an empty storage.
        if len == 0 {
            return Ok(());
        }
        let starts = starts.offset_vec()?;
        for &b in &self.bases {
            for &s in &starts {
                body(b + s, len, stride);
            }
        }
        Ok(())
    }
}

fn plan(l: &Layout, indices: &[Option<Tensor>]) -> Result<Plan> {
    let adv: Vec<usize> = (0..indices.len())
        .filter(|&d| indices[d].is_some())
        .collect();
    let rest: Vec<usize> = (0..l.ndim()).filter(|d| !adv.contains(d)).collect();
    let mut bshape = Shape::new();
    for &d in &adv {
        let s = indices[d].as_ref().expect("advanced").shape();
        bshape = crate::tensor::layout::broadcast_shapes(&bshape, s).map_err(|_| {
            let shapes: Vec<String> = adv
                .iter()
                .map(|&d| {
                    crate::tensor::layout::fmt_shape(indices[d].as_ref().expect("advanced").shape())
                })
                .collect();
            crate::Error::Index(format!(
                "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                shapes.join(", ")
            ))
        })?;
    }
    let nb = crate::tensor::layout::numel(&bshape);
    let mut bases = try_buffer(nb)?;
    bases.resize(nb, l.offset as isize);
    for &d in &adv {
        let idx = indices[d].as_ref().expect("advanced");
        let vals = idx.to_vec::<i64>();
        let bl = Layout::contiguous(idx.shape()).broadcast_to(&bshape)?;
        let size = l.shape[d] as i64;
        for (b, o) in bases.iter_mut().zip(bl.offsets()) {
            *b += index_position(vals[o], d, size)? as isize * l.strides[d];
        }
    }
    let rest_layout = Layout {
        shape: rest.iter().map(|&d| l.shape[d]).collect(),
        strides: rest.iter().map(|&d| l.strides[d]).collect(),
        offset: 0,
    };
    let mut flat_shape = bshape.clone();
    flat_shape.extend(rest_layout.shape.iter().copied());
    let adjacent = adv.windows(2).all(|w| w[1] == w[0] + 1);
    let before = adv.first().copied().unwrap_or(0);
    let perm = (adjacent && before > 0).then(|| {
        // [B..., rest_before..., rest_after...] -> [rest_before..., B..., rest_after...]
        let (nbd, n) = (bshape.len(), flat_shape.len());
        let mut p: Vec<i64> = (nbd..nbd + before).map(|i| i as i64).collect();
        p.extend((0..nbd).map(|i| i as i64));
        p.extend((nbd + before..n).map(|i| i as i64));
        p
    });
    Ok(Plan {
        bases: bases.into_iter().map(|b| b as usize).collect(),
        rest: rest_layout,
        flat_shape,
        perm,
    })
}

fn inverse(perm: &[i64]) -> Vec<i64> {
    let mut inv = vec![0i64; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p as usize] = i as i64;
    }
    inv
}

/// Advanced indexing with normalized indices (one optional int64 tensor per
/// dim): a copy (`IndexBackward0`).
pub fn index(t: &Tensor, indices: &[Option<Tensor>]) -> Result<Tensor> {
    let indices = normalize_indices(t, indices)?;
    let out = match single_index_gather(t.shape(), &indices)? {
        Some(step) => resample_rows(&t.detach(), &step, None)?,
        None => {
            let p = plan(t.layout(), &indices)?;
            let flat = with_dtype!(t.dtype(), T => {
                let data = t.storage().read::<T>();
                let numel = crate::tensor::layout::numel(&p.flat_shape);
                let mut out: Vec<T> = try_buffer(numel)?;
                p.for_rows(|start, len, stride| match stride {
                    1 => out.extend_from_slice(&data[start..start + len]),
                    _ => out.extend(row(start, len, stride).map(|o| data[o])),
                })?;
                Tensor::from_vec(out, &p.flat_shape)?
            });
            match &p.perm {
                Some(perm) => super::copy::clone(&super::shape::permute(&flat, perm)?)?.detach(),
                None => flat,
            }
        }
    };
    let in_shape: Shape = t.shape().into();
    record(
        "IndexBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(index_put_zeros(g, &in_shape, &indices)?)]),
    );
    Ok(out)
}

/// Zeros of `shape` with `values` accumulated at `indices` (normalized):
/// the gradient of `index`; its own gradient is `index` again.
pub fn index_put_zeros(
    values: &Tensor,
    shape: &[usize],
    indices: &[Option<Tensor>],
) -> Result<Tensor> {
    let gather = single_index_gather(shape, indices)?.filter(|step| {
        let mut gathered: Shape = shape.into();
        gathered[step.dim] = step.terms[0].0.len();
        values.shape() == &gathered[..]
    });
    let out = match gather {
        Some(step) => resample_rows(&values.detach(), &step, Some(shape[step.dim]))?,
        _ => {
            let out = Tensor::full(shape, Scalar::Int(0), values.dtype())?;
            put(&out, indices, values, true)?;
            out
        }
    };
    let idx = indices.to_vec();
    record(
        "IndexPutBackward0",
        &[values],
        &out,
        || (),
        move |_, _, gg| Ok(grads![Some(index(gg, &idx)?)]),
    );
    Ok(out)
}

/// Indexing by one 1-d index tensor (`x[:, idx]`, `index_select`) as a
/// gather along its dim, which copies whole runs rather than walking a
/// plan's rows; `None` for any other indexing. Checks the bounds.
fn single_index_gather(shape: &[usize], indices: &[Option<Tensor>]) -> Result<Option<Resample>> {
    let mut given = indices
        .iter()
        .enumerate()
        .filter_map(|(d, i)| Some((d, i.as_ref()?)));
    let (Some((dim, idx)), None) = (given.next(), given.next()) else {
        return Ok(None);
    };
    if idx.ndim() != 1 || dim >= shape.len() {
        return Ok(None);
    }
    let size = shape[dim] as i64;
    let positions = idx
        .to_vec::<i64>()
        .into_iter()
        .map(|v| index_position(v, dim, size))
        .collect::<Result<Vec<i64>>>()?;
    Ok(Some(Resample::gather(dim, positions)))
}

/// Index `v` into dim `dim` of `size` elements, negatives counted from the
/// end, as a position; out of range is an `IndexError`.
fn index_position(v: i64, dim: usize, size: i64) -> Result<i64> {
    if v < -size || v >= size {
        bail!(
            Index,
            "index {} is out of bounds for dimension {} with size {}",
            v,
            dim,
            size
        );
    }
    Ok(if v < 0 { v + size } else { v })
}

/// One step of [`resample`]: along `dim`, each output position a weighted
/// sum of input positions, one term per (positions, weights) pair; no
/// weights means weight 1.
#[derive(Clone)]
pub struct Resample {
    pub dim: usize,
    pub terms: Vec<(Vec<i64>, Option<Vec<f64>>)>,
}

impl Resample {
    /// Output position `i` copies input position `positions[i]`.
    pub fn gather(dim: usize, positions: Vec<i64>) -> Resample {
        Resample {
            dim,
            terms: vec![(positions, None)],
        }
    }
}

/// `t` resampled along one dim after another (padding by reflection,
/// nearest and linear interpolation), recorded as one node `name` whose
/// gradient sends every term's weighted share back to its source.
pub fn resample(t: &Tensor, steps: Vec<Resample>, name: &'static str) -> Result<Tensor> {
    let mut x = t.detach();
    let mut sizes = Vec::with_capacity(steps.len());
    for step in &steps {
        sizes.push(x.shape()[step.dim]);
        x = resample_rows(&x, step, None)?;
    }
    let steps: std::sync::Arc<[(Resample, usize)]> = steps.into_iter().zip(sizes).collect();
    record(
        name,
        &[t],
        &x,
        || (),
        move |_, _, g| {
            let mut g = g.clone();
            for (step, size) in steps.iter().rev() {
                g = resample_rows(&g, step, Some(*size))?;
            }
            Ok(grads![Some(g)])
        },
    );
    Ok(x)
}

/// The (outer, inner) extents around `dim`: `x` is `outer` blocks of
/// `shape[dim]` rows of `inner` elements.
fn step_blocks(shape: &[usize], dim: usize) -> (usize, usize) {
    (
        shape[..dim].iter().product(),
        shape[dim + 1..].iter().product(),
    )
}

/// One step of [`resample`] as a kernel. With `adjoint_rows` None, each
/// output row along the dim is the weighted sum of the input rows its terms
/// name; with `Some(rows)`, the adjoint: each input row added, weighted, to
/// the rows it was read from, giving `rows` rows. Each is the other's
/// gradient.
fn resample_rows(x: &Tensor, step: &Resample, adjoint_rows: Option<usize>) -> Result<Tensor> {
    let (outer, inner) = step_blocks(x.shape(), step.dim);
    let in_rows = x.shape()[step.dim];
    let picks = step
        .terms
        .first()
        .map_or(0, |(positions, _)| positions.len());
    let out_rows = adjoint_rows.unwrap_or(picks);
    let mut shape: Shape = x.shape().into();
    shape[step.dim] = out_rows;
    let source = super::copy::contiguous(&x.detach())?;
    let out = with_dtype!(x.dtype(), T => {
        let terms = typed_terms::<T>(step);
        let mut out = try_filled(T::zero(), outer * out_rows * inner)?;
        source.with_contiguous(|src: &[T]| {
            let block = |first: usize, dst: &mut [T]| {
                let blocks = dst.chunks_mut(out_rows * inner);
                for (b, dst) in (first / (out_rows * inner).max(1)..).zip(blocks) {
                    let src = &src[b * in_rows * inner..(b + 1) * in_rows * inner];
                    match adjoint_rows {
                        None => add_rows::<T, false>(dst, src, inner, &terms),
                        Some(_) => add_rows::<T, true>(dst, src, inner, &terms),
                    }
                }
            };
            run_blocks(&mut out, out_rows * inner, block);
        });
        Tensor::from_vec(out, &shape)?
    });
    let name = match adjoint_rows {
        None => "ResampleBackward0",
        Some(_) => "ResampleBackward1",
    };
    let step = step.clone();
    let back_rows = match adjoint_rows {
        None => Some(in_rows),
        Some(_) => None,
    };
    record(
        name,
        &[x],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(resample_rows(g, &step, back_rows)?)]),
    );
    Ok(out)
}

/// One block of [`resample_rows`]: for each term's (output row, input
/// row) pair, the input row added, weighted, to the output row; `ADJOINT`
/// swaps which side of the pair is written.
fn add_rows<T: Arith, const ADJOINT: bool>(
    dst: &mut [T],
    src: &[T],
    inner: usize,
    terms: &[(Vec<usize>, Option<Vec<T>>)],
) {
    if let ([(positions, None)], false) = (terms, ADJOINT) {
        // A plain gather copies: adding to zero would turn -0.0 into 0.0.
        match inner {
            1 => dst
                .iter_mut()
                .zip(positions)
                .for_each(|(d, &p)| *d = src[p]),
            _ => {
                for (to, &p) in dst.chunks_exact_mut(inner).zip(positions) {
                    to.copy_from_slice(&src[p * inner..(p + 1) * inner]);
                }
            }
        }
        return;
    }
    if inner == 1 {
        return add_elements::<T, ADJOINT>(dst, src, terms);
    }
    for (positions, weights) in terms {
        for (o, &p) in positions.iter().enumerate() {
            let (to, from) = if ADJOINT { (p, o) } else { (o, p) };
            let to = &mut dst[to * inner..(to + 1) * inner];
            let from = &src[from * inner..(from + 1) * inner];
            match weights {
                Some(w) => to
                    .iter_mut()
                    .zip(from)
                    .for_each(|(d, &v)| *d = d.add(v.mul(w[o]))),
                None => to.iter_mut().zip(from).for_each(|(d, &v)| *d = d.add(v)),
            }
        }
    }
}

/// [`add_rows`] along the last dim, where a row is one element: a gather
/// (or, for the adjoint, a scatter-add) through the positions, without a
/// slice per element.
fn add_elements<T: Arith, const ADJOINT: bool>(
    dst: &mut [T],
    src: &[T],
    terms: &[(Vec<usize>, Option<Vec<T>>)],
) {
    for (positions, weights) in terms {
        match (weights, ADJOINT) {
            (None, false) => {
                for (d, &p) in dst.iter_mut().zip(positions) {
                    *d = d.add(src[p]);
                }
            }
            (Some(w), false) => {
                for ((d, &p), &w) in dst.iter_mut().zip(positions).zip(w) {
                    *d = d.add(src[p].mul(w));
                }
            }
            (None, true) => {
                for (&v, &p) in src.iter().zip(positions) {
                    dst[p] = dst[p].add(v);
                }
            }
            (Some(w), true) => {
                for ((&v, &p), &w) in src.iter().zip(positions).zip(w) {
                    dst[p] = dst[p].add(v.mul(w));
                }
            }
        }
    }
}

/// A step's positions as `usize` and weights in the element type.
fn typed_terms<T: Arith>(step: &Resample) -> Vec<(Vec<usize>, Option<Vec<T>>)> {
    step.terms
        .iter()
        .map(|(positions, weights)| {
            let weights = weights.as_ref().map(|w| {
                w.iter()
                    .map(|&w| T::from_scalar(crate::Scalar::Float(w)))
                    .collect()
            });
            (positions.iter().map(|&p| p as usize).collect(), weights)
        })
        .collect()
}

/// `block(first, blocks)` over `out` in whole blocks of `block_len`, spread
/// over the pool when large.
fn run_blocks<T: Send>(out: &mut [T], block_len: usize, block: impl Fn(usize, &mut [T]) + Sync) {
    if block_len == 0 {
        return;
    }
    if out.len() >= super::elementwise::PARALLEL_MIN_ELEMENTS {
        crate::parallel::for_each_span_mut(out, block_len, block);
    } else {
        block(0, out);
    }
}

/// Writes (or with `accumulate` adds) `values`, broadcast to the indexed
/// shape, into `dst` at `indices`, in place and without history.
pub fn put(
    dst: &Tensor,
    indices: &[Option<Tensor>],
    values: &Tensor,
    accumulate: bool,
) -> Result<()> {
    let indices = normalize_indices(dst, indices)?;
    let p = plan(dst.layout(), &indices)?;
    let out_shape: Shape = match &p.perm {
        Some(perm) => perm.iter().map(|&i| p.flat_shape[i as usize]).collect(),
        None => p.flat_shape.clone(),
    };
    let v = super::shape::expand_to(&try_cast(&values.detach(), dst.dtype())?, &out_shape)
        .map_err(|_| {
            crate::Error::Runtime(format!(
                "shape mismatch: value tensor of shape {:?} cannot be broadcast to indexing result of shape {:?}",
                values.shape(),
                &out_shape[..]
            ))
        })?;
    let v = match &p.perm {
        Some(perm) => super::shape::permute(&v, &inverse(perm))?,
        None => v,
    };
    // An empty selection writes nothing; its rows may start past the end
    // of an empty storage.
    if v.numel() == 0 {
        dst.bump_version();
        return Ok(());
    }
    with_dtype!(dst.dtype(), T => {
        let vals = v.to_vec::<T>();
        let mut data = dst.storage().write::<T>()?;
        let mut done = 0;
        p.for_rows(|start, len, stride| {
            let src = &vals[done..done + len];
            match (stride, accumulate) {
                (1, true) => data[start..start + len]
                    .iter_mut()
                    .zip(src)
                    .for_each(|(d, &x)| *d = d.add(x)),
                (1, false) => data[start..start + len].copy_from_slice(src),
                _ => {
                    for (o, &x) in row(start, len, stride).zip(src) {
                        data[o] = if accumulate { data[o].add(x) } else { x };
                    }
                }
            }
            done += len;
        })?;
    });
    dst.bump_version();
    Ok(())
}

/// `index_select(dim, index)` (`IndexSelectBackward0`).
pub fn index_select(t: &Tensor, dim: i64, idx: &Tensor) -> Result<Tensor> {
    let d = wrap_dim(dim, t.ndim())?;
    if idx.ndim() > 1 {
        bail!(Index, "index_select(): Index is supposed to be a vector");
    }
    let idx = &int64_index(idx)?;
    if idx.dtype() != DType::Int64 {
        bail!(Runtime, "index_select(): Expected dtype int64 for index");
    }
    let mut indices: Vec<Option<Tensor>> = vec![None; t.ndim()];
    let flat = super::shape::reshape(&idx.detach(), &[-1])?;
    // Unlike `t[idx]`, negative indices are out of range too.
    let size = t.shape().get(d).map_or(1, |&s| s as i64);
    if flat.to_vec::<i64>().iter().any(|&i| i < 0 || i >= size) {
        bail!(Index, "index out of range in self");
    }
    if t.ndim() == 0 {
        return super::shape::reshape(
            &index_select(&super::shape::reshape(t, &[1])?, 0, idx)?,
            &[],
        );
    }
    indices[d] = Some(flat);
    let out = index(&t.detach(), &indices)?;
    let in_shape: Shape = t.shape().into();
    record(
        "IndexSelectBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(index_put_zeros(g, &in_shape, &indices)?)]),
    );
    Ok(out)
}

/// `masked_fill(mask, value)` out of place (`MaskedFillBackward0`).
pub fn masked_fill(t: &Tensor, mask: &Tensor, value: crate::Scalar) -> Result<Tensor> {
    if mask.dtype() != DType::Bool {
        bail!(
            Runtime,
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            mask.dtype().cpp_name()
        );
    }
    let fill = Tensor::scalar(value.checked_to(t.dtype())?, t.dtype());
    let out = super::unary::where_(mask, &fill, &t.detach())?;
    if out.shape() != t.shape() {
        bail!(
            Runtime,
            "output with shape {} doesn't match the broadcast shape {}",
            crate::tensor::layout::fmt_shape(t.shape()),
            crate::tensor::layout::fmt_shape(out.shape())
        );
    }
    let m = mask.clone();
    record(
        "MaskedFillBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| {
            let zero = super::unary::zero_of(g);
            Ok(grads![Some(super::unary::where_(&m, &zero, g)?)])
        },
    );
    Ok(out)
}

/// The value of a 0-d tensor given to `masked_fill`.
pub fn masked_fill_value(value: &Tensor) -> Result<crate::Scalar> {
    if value.ndim() != 0 {
        bail!(
            Runtime,
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
            value.ndim()
        );
    }
    value.item()
}

/// `masked_fill(mask, value)` with a 0-d tensor `value`, which gets the sum
/// of the gradient where `mask` holds (`MaskedFillBackward1`).
pub fn masked_fill_tensor(t: &Tensor, mask: &Tensor, value: &Tensor) -> Result<Tensor> {
    let out = masked_fill(&t.detach(), mask, masked_fill_value(value)?)?;
    record(
        "MaskedFillBackward1",
        &[t, value],
        &out,
        || mask.clone(),
        |_, m, g| {
            let zero = super::unary::zero_of(g);
            let to_value = super::unary::where_(m, g, &zero)?;
            Ok(grads![
                Some(super::unary::where_(m, &zero, g)?),
                Some(super::reduce::sum(&to_value, &[], false)?)
            ])
        },
    );
    Ok(out)
}

/// `flip(dims)`: a reversed copy (`FlipBackward0`).
pub fn flip(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let dims = super::reduce::reduce_dims_exact(dims, t.ndim())?;
    let mut l = t.layout().clone();
    if t.numel() > 0 {
        for &d in &dims {
            let s = l.strides[d];
            l.offset = (l.offset as isize + (l.shape[d] as isize - 1) * s) as usize;
            l.strides[d] = -s;
        }
    }
    let reversed = t.alias(l);
    let out =
        with_dtype!(t.dtype(), T => super::elementwise::map_row_major::<T, T>(&reversed, |x| x)?);
    let back: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
    record(
        "FlipBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(flip(g, &back)?)]),
    );
    Ok(out)
}

/// `roll(shifts, dims)`: elements moved `shifts[i]` places along `dims[i]`,
/// those pushed past the end coming back at the start (`RollBackward0`).
/// Without dims the flattened tensor rolls by one shift.
pub fn roll(t: &Tensor, shifts: &[i64], dims: &[i64]) -> Result<Tensor> {
    if shifts.is_empty() {
        bail!(Runtime, "`shifts` required");
    }
    if shifts.len() != dims.len() && !(dims.is_empty() && shifts.len() == 1) {
        bail!(
            Runtime,
            "shifts and dimensions must align. shifts: {}, dims:{}",
            shifts.len(),
            dims.len()
        );
    }
    let x = t.detach();
    let out = if dims.is_empty() {
        let flat = super::shape::reshape(&x, &[-1])?;
        let rolled = rolled_copy(&flat, shifts, &[0])?;
        let shape: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
        super::shape::reshape(&rolled, &shape)?
    } else {
        rolled_copy(&x, shifts, dims)?
    };
    let (back, dims) = (shifts.iter().map(|s| -s).collect::<Vec<_>>(), dims.to_vec());
    record(
        "RollBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(roll(g, &back, &dims)?)]),
    );
    Ok(out)
}

/// `t` rolled along each of `dims` by the matching shift: the two pieces
/// of each dim swapped, as one new tensor.
fn rolled_copy(t: &Tensor, shifts: &[i64], dims: &[i64]) -> Result<Tensor> {
    let mut out = t.clone();
    let mut moved = false;
    for (&shift, &dim) in shifts.iter().zip(dims) {
        let d = wrap_dim_of_array(dim, t.ndim())?;
        let n = t.shape()[d];
        let k = match n {
            0 => 0,
            _ => shift.rem_euclid(n as i64) as usize,
        };
        if k > 0 {
            out = cat(
                &[slice(&out, d, n - k, k, 1)?, slice(&out, d, 0, n - k, 1)?],
                d as i64,
            )?;
            moved = true;
        }
    }
    match moved {
        true => Ok(out),
        // Nothing moved: still a copy, as the result never aliases `t`.
        false => super::copy::clone(t),
    }
}

/// `tril(diagonal)` / `triu(diagonal)`: zeros above (below) a diagonal.
fn triangle(t: &Tensor, k: i64, lower: bool) -> Result<Tensor> {
    let name = if lower { "tril" } else { "triu" };
    if t.ndim() < 2 {
        bail!(
            Runtime,
            "{}: input tensor must have at least 2 dimensions",
            name
        );
    }
    let (r, c) = (t.shape()[t.ndim() - 2], t.shape()[t.ndim() - 1]);
    // Row `i` keeps the columns `j` with `j - i <= k` (lower) or `>= k`.
    let kept = move |i: usize| {
        let edge = (i as i64 + k).clamp(-1, c as i64);
        if lower {
            0..(edge + 1).clamp(0, c as i64) as usize
        } else {
            edge.max(0) as usize..c
        }
    };
    let x = super::copy::contiguous(&t.detach())?;
    let out = with_dtype!(x.dtype(), T => {
        let triangles = x.with_contiguous(|src: &[T]| {
            let mut out = try_filled(T::default(), src.len())?;
            if c > 0 {
                crate::parallel::for_each_span_mut(&mut out, c, |start, span| {
                    for (n, row) in span.chunks_mut(c).enumerate() {
                        let at = start + n * c;
                        let cols = kept((at / c) % r);
                        row[cols.clone()].copy_from_slice(&src[at..][cols]);
                    }
                });
            }
            Ok(out)
        })?;
        Tensor::from_vec(triangles, t.shape())?
    });
    record(
        if lower {
            "TrilBackward0"
        } else {
            "TriuBackward0"
        },
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(triangle(g, k, lower)?)]),
    );
    Ok(out)
}

pub fn tril(t: &Tensor, diagonal: i64) -> Result<Tensor> {
    triangle(t, diagonal, true)
}

pub fn triu(t: &Tensor, diagonal: i64) -> Result<Tensor> {
    triangle(t, diagonal, false)
}

/// `repeat(sizes)`: `t` tiled `sizes[i]` times along each dim (`RepeatBackward0`).
pub fn repeat(t: &Tensor, sizes: &[i64]) -> Result<Tensor> {
    if sizes.len() < t.ndim() {
        bail!(
            Runtime,
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        );
    }
    if let Some(&s) = sizes.iter().find(|&&s| s < 0) {
        bail!(
            Runtime,
            "Trying to create tensor with negative dimension {}: [{}]",
            s,
            sizes
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let lead = sizes.len() - t.ndim();
    let src: Vec<usize> = std::iter::repeat_n(1, lead)
        .chain(t.shape().iter().copied())
        .collect();
    // [1, s0, 1, s1, ...] expanded to [r0, s0, r1, s1, ...], then merged.
    let interleaved: Vec<i64> = src.iter().flat_map(|&s| [1, s as i64]).collect();
    let tiled: Shape = sizes
        .iter()
        .zip(&src)
        .flat_map(|(&r, &s)| [r as usize, s])
        .collect();
    // The output has as many elements as `tiled`: checked first, so that
    // no size below can overflow.
    crate::tensor::layout::check_numel(&tiled)?;
    let out_shape: Vec<i64> = sizes
        .iter()
        .zip(&src)
        .map(|(&r, &s)| r * s as i64)
        .collect();
    let x = super::shape::reshape(&t.detach(), &interleaved)?;
    let out = super::copy::clone(&super::shape::expand_to(&x, &tiled)?)?;
    let out = super::shape::reshape(&out, &out_shape)?.detach();
    let in_shape: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
    let tiled_i64: Vec<i64> = tiled.iter().map(|&d| d as i64).collect();
    let rep_dims: Vec<i64> = (0..sizes.len()).map(|i| 2 * i as i64).collect();
    record(
        "RepeatBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| {
            let g = super::shape::reshape(g, &tiled_i64)?;
            let g = super::reduce::sum(&g, &rep_dims, false)?;
            Ok(grads![Some(super::shape::reshape(&g, &in_shape)?)])
        },
    );
    Ok(out)
}

/// `movedim(source, destination)`: a permutation view (`PermuteBackward0`).
pub fn movedim(t: &Tensor, source: &[i64], destination: &[i64]) -> Result<Tensor> {
    let n = t.ndim();
    if source.len() != destination.len() {
        bail!(
            Runtime,
            "movedim: Invalid source or destination dims: source ({:?} dims) should contain the same number of dims as destination ({:?} dims)",
            source,
            destination
        );
    }
    let src_raw: Vec<usize> = source
        .iter()
        .map(|&d| wrap_dim(d, n))
        .collect::<Result<_>>()?;
    let dst_raw: Vec<usize> = destination
        .iter()
        .map(|&d| wrap_dim(d, n))
        .collect::<Result<_>>()?;
    for (dims, given, name) in [
        (&src_raw, source, "source"),
        (&dst_raw, destination, "destination"),
    ] {
        if (1..dims.len()).any(|i| dims[..i].contains(&dims[i])) {
            bail!(Runtime, "movedim: repeated dim in `{}` ({:?})", name, given);
        }
    }
    // A 0-d tensor takes dim 0 (or -1) and has nothing to move.
    if n == 0 {
        return super::shape::permute(t, &[]);
    }
    let mut perm: Vec<Option<usize>> = vec![None; n];
    for (&s, &d) in src_raw.iter().zip(&dst_raw) {
        perm[d] = Some(s);
    }
    let mut rest = (0..n).filter(|d| !src_raw.contains(d));
    let perm: Vec<i64> = perm
        .into_iter()
        .map(|p| p.unwrap_or_else(|| rest.next().expect("counted")) as i64)
        .collect();
    super::shape::permute(t, &perm)
}
