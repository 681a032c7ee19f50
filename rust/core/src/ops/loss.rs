//! Losses with a kernel of their own: `nll_loss` picks one log-probability
//! per row in a single pass, and its gradient scatters one value per row
//! back, where composing it from indexing, weighting and a reduction took
//! a dozen ops and as many graph nodes. `binary_cross_entropy` has
//! gradients that stay finite at probabilities of exactly 0 and 1, which
//! no composition of clamped logarithms gives.

use super::binary::{add, div, mul, sub};
use super::copy::{to_dtype, try_cast};
use super::elementwise::{zip3_map, zip_map};
use super::num::{Arith, Float, RealFloat};
use super::reduce::{mean, sum};
use super::scatter::scatter_add_zeros;
use super::shape::{expand_to, unsqueeze};
use super::unary::{clamp, log, log1p, neg, scalar};
use crate::autograd::{is_grad_enabled, record, SavedTensor};
use crate::tensor::storage::try_buffer;
use crate::tensor::{DType, Scalar, Tensor};
use crate::{bail, grads, with_real_float, Result};
use std::sync::atomic::{AtomicBool, Ordering};

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

/// The floor of `x (1 - x)` in the gradient of `binary_cross_entropy`: the
/// float32 nearest 1e-12, whatever the dtype, as in PyTorch's kernel.
const BCE_GRAD_FLOOR: f64 = 1e-12_f32 as f64;
/// The offset keeping `x` and `1 - x` off 0 in its second derivatives.
const BCE_EPS: f64 = 1e-12;

/// Checks the operands of `binary_cross_entropy` as PyTorch does.
fn check_bce(input: &Tensor, target: &Tensor) -> Result<()> {
    if target.shape() != input.shape() {
        bail!(
            Value,
            "Using a target size (torch.Size({:?})) that is different to the input size (torch.Size({:?})) is deprecated. Please ensure they have the same size.",
            target.shape(),
            input.shape()
        );
    }
    if target.dtype() != input.dtype() {
        bail!(
            Runtime,
            "Found dtype {} but expected {}",
            DType::scalar_type_name(target.dtype()),
            DType::scalar_type_name(input.dtype())
        );
    }
    if !matches!(input.dtype(), DType::Float32 | DType::Float64) {
        bail!(
            NotImplemented,
            "\"binary_cross_entropy\" not implemented for '{}'",
            DType::scalar_type_name(input.dtype())
        );
    }
    Ok(())
}

/// `binary_cross_entropy(input, target, weight, reduction)`
/// (`BinaryCrossEntropyBackward0`): `-w (t log x + (1 - t) log(1 - x))`
/// with each log clamped at -100, as PyTorch's kernel, then reduced.
/// `weight` (broadcast to the input) is a constant, as in PyTorch; the
/// gradient of the input divides by `x (1 - x)` floored at about 1e-12, so
/// it is finite where a probability is exactly 0 or 1.
pub fn binary_cross_entropy(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: Reduction,
) -> Result<Tensor> {
    check_bce(input, target)?;
    // One pass computes the losses and notes values outside [0, 1] (NaN
    // included), which PyTorch's kernel refuses.
    let (input_outside, target_outside) = (AtomicBool::new(false), AtomicBool::new(false));
    let losses = with_real_float!(input.dtype(), T => {
        let floor = T::from_f64(-100.0);
        zip_map::<T, T, T>(input, target, |x: T, t: T| {
            let unit = T::zero()..=T::one();
            if !unit.contains(&x) {
                input_outside.store(true, Ordering::Relaxed);
            }
            if !unit.contains(&t) {
                target_outside.store(true, Ordering::Relaxed);
            }
            let (log_x, log_1mx) = (x.ln().max(floor), (-x).ln_1p().max(floor));
            (t - T::one()) * log_1mx - t * log_x
        })?
    }, unreachable!("checked to be a real float"));
    if input_outside.into_inner() {
        bail!(Runtime, "all elements of input should be between 0 and 1");
    }
    if target_outside.into_inner() {
        bail!(Runtime, "all elements of target should be between 0 and 1");
    }
    let weight = weight.map(Tensor::detach);
    let losses = match &weight {
        // PyTorch weighs the losses in place, so they keep the input's dtype.
        Some(w) => try_cast(&mul(&losses, w)?, input.dtype())?,
        None => losses,
    };
    let out = match reduction {
        Reduction::None => losses,
        Reduction::Sum => sum(&losses, &[], false)?,
        Reduction::Mean => mean(&losses, &[], false)?,
    };
    record(
        "BinaryCrossEntropyBackward0",
        &[input, target],
        &out,
        || (SavedTensor::input(input), SavedTensor::input(target)),
        move |ctx, (sx, st), g| {
            let (x, t) = (sx.unpack(ctx)?, st.unpack(ctx)?);
            let g = match reduction {
                Reduction::None => g.clone(),
                Reduction::Sum => expand_to(g, x.shape())?,
                Reduction::Mean => expand_to(&div(g, &scalar(x.numel() as f64))?, x.shape())?,
            };
            let g = match &weight {
                Some(w) => to_dtype(&mul(&g, w)?, x.dtype())?,
                None => g,
            };
            let grad_input = match ctx.needs_grad(0) {
                true => Some(bce_input_grad(&g, &x, &t)?),
                false => None,
            };
            // d/dt = log(1 - x) - log(x): minus the logit.
            let grad_target = match ctx.needs_grad(1) {
                true => Some(mul(&g, &sub(&log1p(&neg(&x)?)?, &log(&x)?)?)?),
                false => None,
            };
            Ok(grads![grad_input, grad_target])
        },
    );
    Ok(out)
}

/// `g (x - t) / max(x (1 - x), 1e-12)`, the gradient of the unreduced
/// binary cross entropy (`BinaryCrossEntropyBackwardBackward0`), with the
/// derivatives PyTorch gives it: each keeps `x (1 - x)` off 0 its own way.
fn bce_input_grad(g: &Tensor, x: &Tensor, t: &Tensor) -> Result<Tensor> {
    let out = with_real_float!(x.dtype(), T => {
        let floor = T::from_f64(BCE_GRAD_FLOOR);
        zip3_map::<T, T, T, T>(&try_cast(g, x.dtype())?, x, t, move |g: T, x: T, t: T| {
            g * (x - t) / ((T::one() - x) * x).max(floor)
        })?
    }, unreachable!("checked to be a real float"));
    record(
        "BinaryCrossEntropyBackwardBackward0",
        &[g, x, t],
        &out,
        || {
            let save = |v: &Tensor| SavedTensor::input(v);
            (save(g), save(x), save(t))
        },
        |ctx, (sg, sx, st), gg| {
            let (g, x, t) = (sg.unpack(ctx)?, sx.unpack(ctx)?, st.unpack(ctx)?);
            let one = scalar(1.0);
            let shifted_x = add(&x, &scalar(BCE_EPS))?;
            let shifted_1mx = add(&sub(&one, &x)?, &scalar(BCE_EPS))?;
            let x_minus_t = sub(&x, &t)?;
            let grad_g = match ctx.needs_grad(0) {
                true => Some(div(&mul(gg, &x_minus_t)?, &mul(&shifted_x, &shifted_1mx)?)?),
                false => None,
            };
            let grad_x = match ctx.needs_grad(1) {
                true => {
                    // (x^2 - 2 x t + t) / ((x + eps)^2 (1 - x + eps)^2)
                    let numerator = add(&mul(&x, &sub(&x, &mul(&t, &scalar(2.0))?)?)?, &t)?;
                    let spread = mul(&shifted_x, &shifted_1mx)?;
                    let curvature = div(&numerator, &mul(&spread, &spread)?)?;
                    Some(mul(&mul(gg, &g)?, &curvature)?)
                }
                false => None,
            };
            let grad_t = match ctx.needs_grad(2) {
                true => {
                    let variance = clamp(
                        &mul(&sub(&one, &x)?, &x)?,
                        Some(Scalar::Float(BCE_EPS)),
                        None,
                    )?;
                    Some(neg(&div(&mul(gg, &g)?, &variance)?)?)
                }
                false => None,
            };
            Ok(grads![grad_g, grad_x, grad_t])
        },
    );
    Ok(out)
}
