//! Writes at indices, out of place: `index_put` (`x[idx] = v` and
//! `index_put_`) and `index_add`. The in-place forms in `inplace.rs` run
//! these on the old value and write the result back.

use super::binary::mul;
use super::copy::{clone, try_cast};
use super::index::{index, index_select, normalize_indices, put};
use super::reduce::sum_to;
use super::shape::reshape;
use super::unary::{where_, zero_of};
use crate::autograd::record;
use crate::tensor::layout::{fmt_shape, wrap_dim};
use crate::tensor::{DType, Scalar, Tensor};
use crate::{bail, grads, Result};

/// The gradient of an operand of dtype `dtype` and shape `shape` from `g`,
/// or none when that dtype cannot have one.
fn grad_for(g: &Tensor, dtype: DType, shape: &[usize]) -> Result<Option<Tensor>> {
    if !dtype.is_differentiable() {
        return Ok(None);
    }
    Ok(Some(sum_to(&try_cast(g, dtype)?, shape)?))
}

/// `t` with `values` written (or with `accumulate` added) at `indices`
/// (`IndexPutBackward0`): the gradient of `t` is zero where values were
/// written, that of `values` is the indexed gradient.
pub fn index_put(
    t: &Tensor,
    indices: &[Option<Tensor>],
    values: &Tensor,
    accumulate: bool,
) -> Result<Tensor> {
    check_values_dtype(t, indices, values, accumulate)?;
    let idx = normalize_indices(t, indices)?;
    let out = clone(&t.detach())?;
    put(&out, &idx, values, accumulate)?;
    let kept = if accumulate {
        None
    } else {
        let kept = Tensor::full(t.shape(), Scalar::Bool(true), DType::Bool)?;
        put(
            &kept,
            &idx,
            &Tensor::scalar(Scalar::Bool(false), DType::Bool),
            false,
        )?;
        Some(kept)
    };
    let (vdtype, vshape) = (values.dtype(), values.shape().to_vec());
    record(
        "IndexPutBackward0",
        &[t, values],
        &out,
        || (),
        move |_, _, g| {
            let gt = match &kept {
                Some(k) => where_(k, g, &zero_of(g))?,
                None => g.clone(),
            };
            Ok(grads![
                Some(gt),
                grad_for(&index(g, &idx)?, vdtype, &vshape)?
            ])
        },
    );
    Ok(out)
}

/// PyTorch's requirement that `values` have `t`'s dtype; one value written
/// at a single bool or uint8 mask is exempt, as PyTorch converts it as
/// `masked_fill_` does.
pub fn check_values_dtype(
    t: &Tensor,
    indices: &[Option<Tensor>],
    values: &Tensor,
    accumulate: bool,
) -> Result<()> {
    let mut defined = indices.iter().flatten();
    let single_mask = match (defined.next(), defined.next()) {
        (Some(i), None) => matches!(i.dtype(), DType::Bool | DType::UInt8),
        _ => false,
    };
    if values.dtype() != t.dtype() && !(single_mask && !accumulate && values.numel() == 1) {
        bail!(
            Runtime,
            "Index put requires the source and destination dtypes match, got {} for the destination and {} for the source.",
            t.dtype().scalar_type_name(),
            values.dtype().scalar_type_name()
        );
    }
    Ok(())
}

/// PyTorch's argument checks of `index_add`; the dimension, wrapped.
fn check_index_add(t: &Tensor, dim: i64, index: &Tensor, source: &Tensor) -> Result<usize> {
    let d = wrap_dim(dim, t.ndim())?;
    if index.dtype() != DType::Int64 {
        bail!(
            Runtime,
            "index_add_(): Expected dtype int32/int64 for index but got: {}",
            DType::scalar_type_name(index.dtype())
        );
    }
    if index.ndim() > 1 {
        bail!(
            Index,
            "index_add_(): Index is supposed to be a vector, but got dim: {} with type: Long and size: {}",
            index.ndim(),
            fmt_shape(index.shape())
        );
    }
    if t.dtype() != source.dtype() {
        bail!(
            Runtime,
            "index_add_(): self ({}) and source ({}) must have the same scalar type",
            DType::scalar_type_name(t.dtype()),
            DType::scalar_type_name(source.dtype())
        );
    }
    let src_dim = source.shape().get(d).copied().unwrap_or(1);
    if index.numel() != src_dim {
        bail!(
            Runtime,
            "index_add_(): Number of indices ({}) should be equal to source.size(dim): ({}), for dim: {}",
            index.numel(),
            src_dim,
            d
        );
    }
    let size = t.shape().get(d).copied().unwrap_or(1) as i64;
    if let Some(&bad) = index
        .to_vec::<i64>()
        .iter()
        .find(|&&i| i < -size || i >= size)
    {
        bail!(
            Runtime,
            "index {} is out of bounds for dimension {} with size {}",
            bad,
            d,
            size
        );
    }
    let others = |s: &[usize]| -> Vec<usize> {
        s.iter()
            .enumerate()
            .filter(|&(i, _)| i != d)
            .map(|(_, &n)| n)
            .collect()
    };
    if t.ndim().max(1) != source.ndim().max(1) || others(t.shape()) != others(source.shape()) {
        bail!(
            Runtime,
            "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = {} source.shape = {}",
            fmt_shape(t.shape()),
            fmt_shape(source.shape())
        );
    }
    Ok(d)
}

/// `index_add(dim, index, source, alpha=alpha)`: `t` with `alpha * source`
/// added along `dim` at `index` (`IndexAddBackward0`).
pub fn index_add(
    t: &Tensor,
    dim: i64,
    index: &Tensor,
    source: &Tensor,
    alpha: Scalar,
) -> Result<Tensor> {
    let index = &super::index::int64_index(index)?;
    let d = check_index_add(t, dim, index, source)?;
    if t.ndim() == 0 {
        let out = index_add(&reshape(t, &[1])?, 0, index, &reshape(source, &[1])?, alpha)?;
        return reshape(&out, &[]);
    }
    let flat = reshape(&index.detach(), &[-1])?;
    let mut idx: Vec<Option<Tensor>> = vec![None; d];
    idx.push(Some(flat.clone()));
    let scaled = mul(&source.detach(), &Tensor::wrapped_number(alpha))?;
    let out = clone(&t.detach())?;
    put(&out, &idx, &scaled, true)?;
    let (sdtype, sshape) = (source.dtype(), source.shape().to_vec());
    record(
        "IndexAddBackward0",
        &[t, source],
        &out,
        || (),
        move |_, _, g| {
            let gs = mul(
                &index_select(g, d as i64, &flat)?,
                &Tensor::wrapped_number(alpha),
            )?;
            Ok(grads![Some(g.clone()), grad_for(&gs, sdtype, &sshape)?])
        },
    );
    Ok(out)
}
