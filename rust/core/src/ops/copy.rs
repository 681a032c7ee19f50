//! Copies and dtype conversion.

use super::elementwise::{map, map_row_major};
use crate::autograd::record;
use crate::grads;
use crate::tensor::{DType, Layout, MemoryFormat, ScalarConvert, Tensor};
use crate::{with_dtype, Result};

/// Converts elements without recording history (kernels' operand casts).
/// A dense permuted tensor keeps its memory order, as in PyTorch.
pub fn try_cast(t: &Tensor, dtype: DType) -> Result<Tensor> {
    if t.dtype() == dtype {
        return Ok(t.clone());
    }
    with_dtype!(t.dtype(), A => with_dtype!(dtype, O => map::<A, O>(t, |x| O::from_scalar(x.to_scalar()))))
}

/// `t.to(dtype)`: differentiable, returns `t` itself when nothing changes.
pub fn to_dtype(t: &Tensor, dtype: DType) -> Result<Tensor> {
    if t.dtype() == dtype {
        return Ok(t.clone());
    }
    let out = try_cast(t, dtype)?;
    if dtype.is_differentiable() {
        let src = t.dtype();
        record(
            "ToCopyBackward0",
            &[t],
            &out,
            || (),
            move |_, _, g| Ok(grads![Some(to_dtype(g, src)?)]),
        );
    }
    Ok(out)
}

/// A contiguous copy of `t` with history: `t.contiguous()` and the
/// kernels that need their operand's elements in row-major order.
pub fn clone(t: &Tensor) -> Result<Tensor> {
    let out = with_dtype!(t.dtype(), T => map_row_major::<T, T>(t, |x| x))?;
    record_clone(t, &out);
    Ok(out)
}

/// `t.clone()` (`preserve_format`): a copy with history that keeps the
/// memory order of a dense tensor (transposed, permuted, channels-last),
/// and is row-major otherwise.
fn clone_preserving(t: &Tensor) -> Result<Tensor> {
    let out = with_dtype!(t.dtype(), T => map::<T, T>(t, |x| x))?;
    record_clone(t, &out);
    Ok(out)
}

/// Records `out`, a copy of `t`'s elements in any layout, as `CloneBackward0`.
fn record_clone(t: &Tensor, out: &Tensor) {
    record(
        "CloneBackward0",
        &[t],
        out,
        || (),
        |_, _, g| Ok(grads![Some(g.clone())]),
    );
}

/// `t.contiguous()`: `t` itself when already contiguous, else a copy.
pub fn contiguous(t: &Tensor) -> Result<Tensor> {
    if t.is_contiguous() {
        return Ok(t.clone());
    }
    clone(t)
}

/// `t.contiguous(memory_format=format)`: `t` itself when its elements already
/// lie in that order, else a copy (`CloneBackward0`) whose elements do.
pub fn contiguous_in(t: &Tensor, format: MemoryFormat) -> Result<Tensor> {
    let order = format.dim_order(t.ndim())?;
    if t.layout().is_contiguous_in(&order) {
        return Ok(t.clone());
    }
    clone_in(t, &order)
}

/// `t.clone(memory_format=format)`: a copy with history laid out in
/// `format`; `Preserve` keeps a dense tensor's memory order.
pub fn clone_as(t: &Tensor, format: MemoryFormat) -> Result<Tensor> {
    match format {
        MemoryFormat::Preserve => clone_preserving(t),
        MemoryFormat::Contiguous => clone(t),
        format => clone_in(t, &format.dim_order(t.ndim())?),
    }
}

/// A copy of `t` with history (`CloneBackward0`) whose dims lie in memory
/// from outermost to innermost in `order`.
fn clone_in(t: &Tensor, order: &[usize]) -> Result<Tensor> {
    let l = t.layout();
    // `t` seen with its dims in memory order, read without history into a
    // row-major buffer, which then is seen with the dims in `t`'s order.
    let reordered = Layout {
        shape: order.iter().map(|&d| l.shape[d]).collect(),
        strides: order.iter().map(|&d| l.strides[d]).collect(),
        offset: l.offset,
    };
    let source = Tensor::from_parts(t.storage().clone(), reordered);
    let dense = with_dtype!(t.dtype(), T => map_row_major::<T, T>(&source, |x| x))?;
    let out = Tensor::from_parts(
        dense.storage().clone(),
        Layout::contiguous_in(&l.shape, order),
    );
    record_clone(t, &out);
    Ok(out)
}
