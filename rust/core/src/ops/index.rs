//! Indexing: slicing back-propagation, gathers with integer tensors and
//! boolean masks, and joining tensors.

use super::copy::cast;
use super::elementwise::update;
use super::num::Arith;
use super::shape::slice;
use crate::autograd::record;
use crate::tensor::layout::{wrap_dim, Layout};
use crate::tensor::{DType, Shape, Tensor};
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
    let out = Tensor::zeros(shape, g.dtype());
    let count = g.shape()[dim];
    let mut l: Layout = out.layout().clone();
    if count > 0 {
        l.offset += start * l.strides[dim] as usize;
    }
    l.shape[dim] = count;
    l.strides[dim] *= step as isize;
    let window = out.alias(l);
    let src = cast(g, out.dtype());
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
fn gather_offsets(l: &Layout, dim: usize, index: &Tensor) -> Result<Vec<usize>> {
    let ishape = index.shape();
    let ndim = ishape.len();
    let size = l.shape.get(dim).copied().unwrap_or(1) as i64;
    let mut pos = vec![0usize; ndim];
    let mut out = Vec::with_capacity(index.numel());
    for v in cast(index, DType::Int64).to_vec::<i64>() {
        if v < 0 || v >= size {
            bail!(
                Runtime,
                "index {} is out of bounds for dimension {} with size {}",
                v,
                dim,
                size
            );
        }
        let mut off = l.offset as isize;
        for d in 0..ndim {
            let p = if d == dim { v as usize } else { pos[d] };
            off += p as isize * l.strides[d];
        }
        out.push(off as usize);
        for d in (0..ndim).rev() {
            pos[d] += 1;
            if pos[d] < ishape[d] {
                break;
            }
            pos[d] = 0;
        }
    }
    Ok(out)
}

fn check_gather(t: &Tensor, dim: usize, index: &Tensor, op: &str) -> Result<()> {
    if index.dtype() != DType::Int64 {
        bail!(Runtime, "{op}(): Expected dtype int64 for index");
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
    for d in 0..index.ndim().min(t.ndim()) {
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
    check_gather(t, d, index, "gather")?;
    let offsets = gather_offsets(t.layout(), d, index)?;
    let out = with_dtype!(t.dtype(), T => {
        let data = t.storage().read::<T>();
        Tensor::from_vec(offsets.iter().map(|&o| data[o]).collect::<Vec<T>>(), index.shape())?
    });
    let (in_shape, idx): (Shape, Tensor) = (t.shape().into(), index.clone());
    record(
        "GatherBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(scatter_add_zeros(g, d, &idx, &in_shape)?)]),
    );
    Ok(out)
}

/// Zeros of `shape` with `src` added at `index` along `dim`: the gradient
/// of `gather` (and of `max(dim)`); its own gradient is a gather.
pub fn scatter_add_zeros(
    src: &Tensor,
    dim: usize,
    index: &Tensor,
    shape: &[usize],
) -> Result<Tensor> {
    let out = Tensor::zeros(shape, src.dtype());
    let offsets = gather_offsets(out.layout(), dim, index)?;
    with_dtype!(src.dtype(), T => {
        let vals = src.to_vec::<T>();
        let mut data = out.storage().write::<T>();
        for (&o, v) in offsets.iter().zip(vals) {
            data[o] = data[o].add(v);
        }
    });
    let idx = index.clone();
    record(
        "ScatterAddBackward0",
        &[src],
        &out,
        || (),
        move |_, _, gg| Ok(grads![Some(gather(gg, dim as i64, &idx)?)]),
    );
    Ok(out)
}
