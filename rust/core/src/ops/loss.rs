//! Losses with a kernel of their own: `nll_loss` picks one log-probability
//! per row in a single pass, and its gradient scatters one value per row
//! back, where composing it from indexing, weighting and a reduction took
//! a dozen ops and as many graph nodes.

use super::binary::mul;
use super::num::{Arith, Float, RealFloat};
use super::scatter::scatter_add_zeros;
use super::shape::unsqueeze;
use crate::autograd::{is_grad_enabled, record};
use crate::tensor::storage::try_buffer;
use crate::tensor::{DType, Tensor};
use crate::{bail, grads, with_real_float, Result};

/// How a loss combines its per-sample values, as PyTorch's `reduction`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    None,
    Mean,
    Sum,
}

impl Reduction {
    /// PyTorch's name for it, or a `ValueError` naming the bad one.
    pub fn parse(name: &str) -> Result<Reduction> {
        match name {
            "none" => Ok(Reduction::None),
            "mean" => Ok(Reduction::Mean),
            "sum" => Ok(Reduction::Sum),
            other => bail!(Value, "{other} is not a valid value for reduction"),
        }
    }
}

/// Checks the operands of `nll_loss` as PyTorch does, returning the
/// batch size and the number of classes.
fn check_nll(input: &Tensor, target: &Tensor, weight: Option<&Tensor>) -> Result<(usize, usize)> {
    if !matches!(input.dtype(), DType::Float32 | DType::Float64) {
        bail!(
            NotImplemented,
            "\"nll_loss_out_frame\" not implemented for '{}'",
            DType::scalar_type_name(input.dtype())
        );
    }
    if target.dtype() != DType::Int64 {
        bail!(
            Runtime,
            "expected target dtype to be Long or Byte, but got {}",
            DType::scalar_type_name(target.dtype())
        );
    }
    if input.ndim() != 2 {
        bail!(
            Value,
            "Expected 2 dimensions for nll_loss input (got {})",
            input.ndim()
        );
    }
    if target.ndim() != 1 {
        bail!(
            Runtime,
            "0D or 1D target tensor expected, multi-target not supported"
        );
    }
    let (n, classes) = (input.shape()[0], input.shape()[1]);
    if target.shape()[0] != n {
        bail!(
            Value,
            "Expected input batch_size ({n}) to match target batch_size ({}).",
            target.shape()[0]
        );
    }
    if let Some(w) = weight {
        if w.numel() != classes {
            bail!(
                Runtime,
                "weight tensor should be defined either for all {classes} classes or no classes but got weight tensor of shape: {:?}",
                w.shape()
            );
        }
        if w.dtype() != input.dtype() {
            bail!(
                Runtime,
                "expected scalar type {} but found {}",
                DType::scalar_type_name(input.dtype()),
                DType::scalar_type_name(w.dtype())
            );
        }
        if w.requires_grad() && is_grad_enabled() {
            bail!(
                Runtime,
                "The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'. This input cannot have requires_grad True."
            );
        }
    }
    Ok((n, classes))
}

/// Per row: the class index to pick (0 for an ignored row) and its weight
/// (0 for an ignored row). Fails on a target outside `[0, classes)` that
/// is not `ignore_index`.
fn picks<T: RealFloat>(
    target: &[i64],
    weight: Option<&[T]>,
    classes: usize,
    ignore_index: i64,
) -> Result<(Vec<i64>, Vec<T>)> {
    let mut index = try_buffer(target.len())?;
    let mut coef = try_buffer(target.len())?;
    for &t in target {
        if t == ignore_index {
            index.push(0);
            coef.push(T::zero());
            continue;
        }
        if t < 0 || t as usize >= classes {
            bail!(Index, "Target {t} is out of bounds.");
        }
        index.push(t);
        coef.push(weight.map_or(T::one(), |w| w[t as usize]));
    }
    Ok((index, coef))
}

/// `nll_loss(input, target, weight, reduction, ignore_index)` for a
/// `(N, C)` input of log-probabilities and `(N,)` class indices
/// (`NllLossBackward0`). `weight` is a constant per class, as in PyTorch.
pub fn nll_loss(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: Reduction,
    ignore_index: i64,
) -> Result<Tensor> {
    let (n, classes) = check_nll(input, target, weight)?;
    let x = super::copy::contiguous(&input.detach())?;
    let tgt = target.to_vec::<i64>();
    with_real_float!(input.dtype(), T => {
        let w = weight.map(|w| w.to_vec::<T>());
        let (index, coef) = picks::<T>(&tgt, w.as_deref(), classes, ignore_index)?;
        let losses: Vec<T> = x.with_contiguous(|rows: &[T]| {
            (0..n)
                .map(|i| match tgt[i] == ignore_index {
                    // An ignored row adds nothing, even where its input is infinite.
                    true => T::zero(),
                    false => -(rows[i * classes + index[i] as usize] * coef[i]),
                })
                .collect()
        });
        let total_weight: f64 = coef.iter().map(|c| c.to_f64()).sum();
        let total: f64 = losses.iter().map(|l| l.to_f64()).sum();
        let out = match reduction {
            Reduction::None => Tensor::from_vec(losses, &[n])?,
            Reduction::Sum => Tensor::from_vec(vec![T::from_f64(total)], &[])?,
            Reduction::Mean => Tensor::from_vec(vec![T::from_f64(total / total_weight)], &[])?,
        };
        // d loss / d input[i, t_i]: minus the row's weight, over the total
        // weight for a mean (zero when every row is ignored, as in PyTorch).
        let scale: Vec<T> = coef
            .iter()
            .map(|&c| match reduction {
                Reduction::Mean if total_weight == 0.0 => T::zero(),
                Reduction::Mean => T::from_f64(-c.to_f64() / total_weight),
                _ => -c,
            })
            .collect();
        let scale = Tensor::from_vec(scale, &[n])?;
        let index = Tensor::from_vec(index, &[n, 1])?;
        record(
            "NllLossBackward0",
            &[input],
            &out,
            || (),
            move |_, _, g| {
                let per_row = unsqueeze(&mul(g, &scale)?, 1)?;
                Ok(grads![Some(scatter_add_zeros(&per_row, 1, &index, &[n, classes])?)])
            },
        );
        Ok(out)
    }, unreachable!("checked to be a real float"))
}
