//! Reductions over dimensions.

use super::copy::cast;
use super::num::Arith;
use super::shape::{expand_to, reshape};
use crate::autograd::record;
use crate::tensor::layout::{wrap_dim, Layout, Shape};
use crate::tensor::{DType, Element, Scalar, Tensor};
use crate::{bail, grads, with_dtype, Result};
use rayon::prelude::*;

/// Sorted, de-duplicated dimensions to reduce; empty means all.
pub fn reduce_dims(dims: &[i64], ndim: usize) -> Result<Vec<usize>> {
    if dims.is_empty() {
        return Ok((0..ndim).collect());
    }
    let mut out = Vec::with_capacity(dims.len());
    for &d in dims {
        let w = wrap_dim(d, ndim)?;
        if out.contains(&w) {
            bail!(
                Runtime,
                "dim {} appears multiple times in the list of dims",
                w
            );
        }
        out.push(w);
    }
    out.sort_unstable();
    Ok(out)
}

/// The output shape of reducing `dims` of `shape`.
pub fn reduced_shape(shape: &[usize], dims: &[usize], keepdim: bool) -> Shape {
    let mut out = Shape::new();
    for (i, &s) in shape.iter().enumerate() {
        if dims.contains(&i) {
            if keepdim {
                out.push(1);
            }
        } else {
            out.push(s);
        }
    }
    out
}

/// Folds each group of elements that `dims` collapses: `fold` within a
/// group, `combine` for partial results computed in parallel.
pub fn reduce<T: Element, O: Element>(
    t: &Tensor,
    dims: &[usize],
    keepdim: bool,
    init: O,
    fold: impl Fn(O, T) -> O + Sync + Send,
    combine: impl Fn(O, O) -> O + Sync + Send,
) -> Tensor {
    let l = t.layout();
    let out_shape = reduced_shape(&l.shape, dims, keepdim);
    let data = t.storage().read::<T>();
    let outer_dims: Vec<usize> = (0..l.ndim()).filter(|d| !dims.contains(d)).collect();
    let outer = Layout {
        shape: outer_dims.iter().map(|&d| l.shape[d]).collect(),
        strides: outer_dims.iter().map(|&d| l.strides[d]).collect(),
        offset: l.offset,
    };
    let inner = Layout {
        shape: dims.iter().map(|&d| l.shape[d]).collect(),
        strides: dims.iter().map(|&d| l.strides[d]).collect(),
        offset: 0,
    };
    let inner_n = inner.numel();
    let inner_contiguous = inner.is_contiguous();
    let group = |base: usize| -> O {
        if inner_n == 0 {
            init
        } else if inner_contiguous {
            data[base..base + inner_n]
                .iter()
                .fold(init, |acc, &x| fold(acc, x))
        } else {
            inner
                .offsets()
                .fold(init, |acc, o| fold(acc, data[base + o]))
        }
    };
    let out: Vec<O> = if outer.numel() == 1
        && inner_contiguous
        && inner_n >= super::elementwise::PARALLEL_MIN_ELEMENTS
    {
        let base = outer.offset;
        vec![data[base..base + inner_n]
            .par_chunks(1 << 14)
            .map(|c| c.iter().fold(init, |acc, &x| fold(acc, x)))
            .reduce(|| init, &combine)]
    } else if outer.numel() >= 64 && t.numel() >= super::elementwise::PARALLEL_MIN_ELEMENTS {
        let bases: Vec<usize> = outer.offsets().collect();
        bases.par_iter().map(|&b| group(b)).collect()
    } else {
        outer.offsets().map(group).collect()
    };
    drop(data);
    Tensor::from_vec(out, &out_shape).expect("reduced shape")
}

/// The dtype `sum` produces: integers and bools sum to int64.
fn sum_dtype(d: DType) -> DType {
    if d.is_differentiable() {
        d
    } else {
        DType::Int64
    }
}

/// Sum without recording history.
fn sum_raw(t: &Tensor, dims: &[usize], keepdim: bool) -> Tensor {
    let dtype = sum_dtype(t.dtype());
    let t = cast(t, dtype);
    with_dtype!(dtype, T => reduce::<T, T>(&t, dims, keepdim, T::zero(), |a, x| a.add(x), |a, b| a.add(b)))
}

/// `sum(dim, keepdim)`; `dims` empty means every dimension.
pub fn sum(t: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor> {
    let name = if dims.is_empty() {
        "SumBackward0"
    } else {
        "SumBackward1"
    };
    let dims = reduce_dims(dims, t.ndim())?;
    let out = sum_raw(t, &dims, keepdim);
    let in_shape: Shape = t.shape().into();
    record(
        name,
        &[t],
        &out,
        || (),
        move |_, _, g| {
            Ok(grads![Some(expand_to(
                &unsqueeze_reduced(g, &in_shape, &dims, keepdim)?,
                &in_shape
            )?)])
        },
    );
    Ok(out)
}

/// `g` (shaped like a reduction's result) with reduced dims put back as 1s.
pub fn unsqueeze_reduced(
    g: &Tensor,
    in_shape: &[usize],
    dims: &[usize],
    keepdim: bool,
) -> Result<Tensor> {
    if keepdim {
        return Ok(g.clone());
    }
    let shape: Vec<i64> = reduced_shape(in_shape, dims, true)
        .iter()
        .map(|&d| d as i64)
        .collect();
    reshape(g, &shape)
}

/// `mean(dim, keepdim)` for floating tensors.
pub fn mean(t: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor> {
    if !t.dtype().is_differentiable() {
        bail!(
            Runtime,
            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
            super::binary::dtype_display(t.dtype())
        );
    }
    let name = if dims.is_empty() {
        "MeanBackward0"
    } else {
        "MeanBackward1"
    };
    let dims = reduce_dims(dims, t.ndim())?;
    let count = Tensor::wrapped_number(Scalar::Int(
        dims.iter().map(|&d| t.shape()[d]).product::<usize>() as i64,
    ));
    let out = super::binary::div(&sum_raw(t, &dims, keepdim), &count)?;
    let in_shape: Shape = t.shape().into();
    record(
        name,
        &[t],
        &out,
        || (),
        move |_, _, g| {
            let g = super::binary::div(g, &count)?;
            Ok(grads![Some(expand_to(
                &unsqueeze_reduced(&g, &in_shape, &dims, keepdim)?,
                &in_shape
            )?)])
        },
    );
    Ok(out)
}

/// Sums `t` down to `shape` (undoing broadcasting): the gradient of expand.
pub fn sum_to(t: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if t.shape() == shape {
        return Ok(t.clone());
    }
    let lead = t.ndim() - shape.len();
    let dims: Vec<i64> = (0..t.ndim())
        .filter(|&d| d < lead || (shape[d - lead] == 1 && t.shape()[d] != 1))
        .map(|d| d as i64)
        .collect();
    let s = sum(t, &dims, true)?;
    let target: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    reshape(&s, &target)
}
