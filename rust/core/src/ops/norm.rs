//! Batch normalization with kernels of its own (`NativeBatchNormBackward0`).
//! The forward takes each channel's statistics in one pass and writes the
//! output in a second; the backward reduces the two per-channel sums it
//! needs in one pass and writes the input's gradient in another. Composed
//! of ops it ran a dozen strided kernels, at two to five times PyTorch's
//! time.

use super::binary::{add, div, dtype_display, mul, sub};
use super::copy::contiguous;
use super::inplace::copy_;
use super::num::{Float, RealFloat};
use super::reduce::{fold_lanes, map_rows, mean, sum};
use super::shape::reshape;
use super::unary::sqrt;
use crate::autograd::{is_grad_enabled, record, SavedTensor};
use crate::tensor::{DType, Scalar, Tensor};
use crate::{bail, grads, with_real_float, Result};

/// What `batch_norm` normalizes with.
#[derive(Clone, Copy, Debug)]
pub struct BatchNormMode {
    /// Batch statistics (updating the running ones, when given) rather
    /// than the running statistics.
    pub training: bool,
    /// The weight of the batch statistics in the running ones' update.
    pub momentum: f64,
    /// Added to the variance before its square root.
    pub eps: f64,
}

/// A contiguous input seen as `[batch, channels, plane]`: channel `c` of
/// sample `n` is the run of `plane` elements from `(n * channels + c) * plane`.
#[derive(Clone, Copy, Debug)]
struct Planes {
    batch: usize,
    channels: usize,
    plane: usize,
}

impl Planes {
    fn of(shape: &[usize]) -> Planes {
        Planes {
            batch: shape[0],
            channels: shape[1],
            plane: shape[2..].iter().product(),
        }
    }

    /// Elements per channel.
    fn count(&self) -> usize {
        self.batch * self.plane
    }

    /// Channels reduced together: rows of about 2K elements, in at least
    /// eight blocks when there are channels enough, so blocks spread over
    /// the threads.
    fn channels_per_block(&self) -> usize {
        (2048 / self.plane.max(1)).clamp(1, self.channels.div_ceil(8).max(1))
    }

    /// Planes shorter than this are normalized a whole sample per row:
    /// one call per plane would cost more than the plane's arithmetic.
    const SHORT_PLANE: usize = 8;
}

/// Per channel, the sums of the two terms of `terms(x, y, k)` over the
/// channel's elements, `k` being the channel's entry of `per_channel`,
/// accumulated in f64. Each block of channels is summed sample by sample
/// into one f64 row, so every loop runs along contiguous memory whatever
/// the plane size; blocks follow from the shape alone, so the result does
/// not depend on the number of threads.
fn channel_sums<T: RealFloat>(
    p: Planes,
    xs: &[T],
    ys: &[T],
    per_channel: &[f64],
    terms: impl Fn(T, T, f64) -> (f64, f64) + Sync,
) -> Vec<(f64, f64)> {
    let mut out = vec![(0.0, 0.0); p.channels];
    if p.count() == 0 {
        return out;
    }
    let per_block = p.channels_per_block();
    let block = |first: usize, sums: &mut [(f64, f64)]| {
        let channels = first..first + sums.len();
        let len = sums.len() * p.plane;
        let k: Vec<f64> = per_channel[channels]
            .iter()
            .flat_map(|&v| std::iter::repeat_n(v, p.plane))
            .collect();
        let (mut a, mut b) = (vec![0.0; len], vec![0.0; len]);
        for n in 0..p.batch {
            let at = (n * p.channels + first) * p.plane;
            let rows = xs[at..at + len].iter().zip(&ys[at..at + len]).zip(&k);
            for ((sa, sb), ((&x, &y), &kv)) in a.iter_mut().zip(b.iter_mut()).zip(rows) {
                let (u, v) = terms(x, y, kv);
                *sa += u;
                *sb += v;
            }
        }
        let plus = |u: f64, v: f64| u + v;
        let planes = a.chunks_exact(p.plane).zip(b.chunks_exact(p.plane));
        for (s, (pa, pb)) in sums.iter_mut().zip(planes) {
            *s = (
                fold_lanes(pa, 0.0, &plus, &plus),
                fold_lanes(pb, 0.0, &plus, &plus),
            );
        }
    };
    if xs.len() >= super::elementwise::PARALLEL_MIN_ELEMENTS {
        crate::parallel::for_each_chunk_mut(&mut out, per_block, block);
    } else {
        for (i, sums) in out.chunks_mut(per_block).enumerate() {
            block(i * per_block, sums);
        }
    }
    out
}

/// A tensor shaped as `x` with `kernel(x, y, k)` at each element, `k`
/// being the constants of the element's channel.
fn channel_map<T: RealFloat, const K: usize>(
    p: Planes,
    x: &Tensor,
    y: &Tensor,
    consts: &[[T; K]],
    kernel: impl Fn(T, T, &[T; K]) -> T + Sync,
) -> Tensor {
    if x.numel() == 0 {
        return x.clone();
    }
    if p.plane >= Planes::SHORT_PLANE {
        return map_rows(x, y, p.plane, |row, xr, yr, out| {
            let k = &consts[row % p.channels];
            for ((o, &a), &b) in out.iter_mut().zip(xr).zip(yr) {
                *o = kernel(a, b, k);
            }
        });
    }
    let spread: Vec<[T; K]> = consts
        .iter()
        .flat_map(|&k| std::iter::repeat_n(k, p.plane))
        .collect();
    map_rows(x, y, p.channels * p.plane, |_, xr, yr, out| {
        for (((o, &a), &b), k) in out.iter_mut().zip(xr).zip(yr).zip(&spread) {
            *o = kernel(a, b, k);
        }
    })
}

/// A per-channel tensor's values as f64, or `fill` for every channel.
fn channel_values(t: Option<&Tensor>, channels: usize, fill: f64) -> Vec<f64> {
    match t {
        Some(t) => with_real_float!(t.dtype(), T => {
            t.to_vec::<T>().into_iter().map(T::to_f64).collect()
        }, unreachable!("checked to be a real float")),
        None => vec![fill; channels],
    }
}

/// Checks the operands as PyTorch does.
fn check(input: &Tensor, params: [(&str, Option<&Tensor>); 4], training: bool) -> Result<()> {
    let dtype = input.dtype();
    if !matches!(dtype, DType::Float32 | DType::Float64) {
        bail!(
            NotImplemented,
            "\"batch_norm\" not implemented for '{}'",
            dtype_display(dtype)
        );
    }
    let [_, _, (_, running_mean), (_, running_var)] = params;
    if running_mean.is_some() != running_var.is_some() {
        bail!(
            Value,
            "running_mean and running_var must either both be None or neither be None"
        );
    }
    if !training && running_mean.is_none() {
        bail!(Runtime, "running_mean must be defined in evaluation mode");
    }
    if input.ndim() < 2 {
        bail!(
            Index,
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
        );
    }
    let channels = input.shape()[1];
    for (name, t) in params {
        let Some(t) = t else { continue };
        if t.numel() != channels {
            bail!(
                Runtime,
                "{name} should contain {channels} elements not {}",
                t.numel()
            );
        }
        if t.dtype() != dtype {
            match dtype {
                DType::Float32 => bail!(
                    Runtime,
                    "mixed dtype (CPU): expect parameter to have scalar type of Float"
                ),
                _ => bail!(
                    Runtime,
                    "mixed dtype (CPU): all inputs must share same datatype."
                ),
            }
        }
    }
    for (name, t) in [("running_mean", running_mean), ("running_var", running_var)] {
        if t.is_some_and(|t| t.requires_grad()) && is_grad_enabled() {
            bail!(
                Runtime,
                "The function 'native_batch_norm' is not differentiable with respect to argument '{name}'. This input cannot have requires_grad True."
            );
        }
    }
    Ok(())
}

/// `F.batch_norm`: normalizes each channel (dim 1) of `input` over the
/// batch and every further dim, then scales by `weight` and shifts by
/// `bias`. In training the batch statistics are used and the running ones
/// (when given) move towards them by `momentum`, the variance unbiased;
/// otherwise the running statistics are used.
pub fn batch_norm(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    mode: BatchNormMode,
) -> Result<Tensor> {
    let params = [
        ("weight", weight),
        ("bias", bias),
        ("running_mean", running_mean),
        ("running_var", running_var),
    ];
    check(input, params, mode.training)?;
    let p = Planes::of(input.shape());
    let x = contiguous(&input.detach())?;
    let count = p.count();
    let (mean, var) = match mode.training {
        true => with_real_float!(x.dtype(), T => {
            x.with_contiguous(|xs: &[T]| batch_statistics(p, xs))
        }, unreachable!("checked to be a real float")),
        false => (
            channel_values(running_mean, p.channels, 0.0),
            channel_values(running_var, p.channels, 1.0),
        ),
    };
    if let (true, Some(rm), Some(rv)) = (mode.training && count > 0, running_mean, running_var) {
        let unbiased = count as f64 / (count as f64 - 1.0);
        let m = mode.momentum;
        let old_mean = channel_values(Some(rm), p.channels, 0.0);
        let old_var = channel_values(Some(rv), p.channels, 1.0);
        let new_mean = old_mean
            .iter()
            .zip(&mean)
            .map(|(o, b)| (1.0 - m) * o + m * b);
        let new_var = old_var
            .iter()
            .zip(&var)
            .map(|(o, b)| (1.0 - m) * o + m * b * unbiased);
        copy_(rm, &channel_tensor(new_mean, rm.dtype(), rm.shape())?)?;
        copy_(rv, &channel_tensor(new_var, rv.dtype(), rv.shape())?)?;
    }
    let invstd: Vec<f64> = var.iter().map(|v| 1.0 / (v + mode.eps).sqrt()).collect();
    let scale = channel_values(weight, p.channels, 1.0);
    let shift = channel_values(bias, p.channels, 0.0);
    let out = with_real_float!(x.dtype(), T => {
        // y = x * alpha + beta, alpha = invstd * w and beta = b - mean * alpha.
        let consts: Vec<[T; 2]> = (0..p.channels)
            .map(|c| {
                let alpha = invstd[c] * scale[c];
                [T::from_f64(alpha), T::from_f64(shift[c] - mean[c] * alpha)]
            })
            .collect();
        channel_map(p, &x, &x, &consts, |v, _, k| v * k[0] + k[1])
    }, unreachable!("checked to be a real float"));
    let mut inputs = vec![input];
    inputs.extend(weight);
    inputs.extend(bias);
    // Weight and bias may have any shape of `channels` elements.
    let weight_shape = weight.map(|w| w.shape().to_vec());
    let bias_shape = bias.map(|b| b.shape().to_vec());
    record(
        "NativeBatchNormBackward0",
        &inputs,
        &out,
        || (SavedTensor::input(input), weight.map(SavedTensor::input)),
        move |ctx, (sx, sw), g| {
            let x = sx.unpack(ctx)?;
            let w = sw.as_ref().map(|s| s.unpack(ctx)).transpose()?;
            let stats = Statistics {
                mean: &mean,
                invstd: &invstd,
                eps: mode.eps,
                training: mode.training,
            };
            let (dx, dw, db) = match is_grad_enabled() {
                // `create_graph`: a backward that is itself differentiable.
                true => batch_norm_backward_ops(&x, w.as_ref(), g, &stats)?,
                false => with_real_float!(x.dtype(), T => {
                    batch_norm_backward::<T>(&x, w.as_ref(), g, &stats)?
                }, unreachable!("a float input")),
            };
            let mut out = grads![Some(dx)];
            if let Some(shape) = &weight_shape {
                out.push(Some(shaped(dw, shape)?));
            }
            if let Some(shape) = &bias_shape {
                out.push(Some(shaped(db, shape)?));
            }
            Ok(out)
        },
    );
    Ok(out)
}

/// `t` with `shape` (the same elements), reshaped only where it differs.
fn shaped(t: Tensor, shape: &[usize]) -> Result<Tensor> {
    match t.shape() == shape {
        true => Ok(t),
        false => reshape(&t, &shape.iter().map(|&d| d as i64).collect::<Vec<_>>()),
    }
}

/// A new tensor of `shape` holding per-channel `values`.
fn channel_tensor(
    values: impl Iterator<Item = f64>,
    dtype: DType,
    shape: &[usize],
) -> Result<Tensor> {
    with_real_float!(dtype, T => {
        Tensor::from_vec(values.map(T::from_f64).collect::<Vec<T>>(), shape)
    }, unreachable!("checked to be a real float"))
}

/// Each channel's mean and biased variance. The sums are taken about the
/// channel's first element, so that the variance keeps its precision when
/// the mean is large beside the spread.
fn batch_statistics<T: RealFloat>(p: Planes, xs: &[T]) -> (Vec<f64>, Vec<f64>) {
    let count = p.count() as f64;
    let pivot: Vec<f64> = (0..p.channels)
        .map(|c| xs.get(c * p.plane).map_or(0.0, |v| v.to_f64()))
        .collect();
    let sums = channel_sums(p, xs, xs, &pivot, |v, _, k| {
        let d = v.to_f64() - k;
        (d, d * d)
    });
    sums.iter()
        .zip(&pivot)
        .map(|(&(s1, s2), &k)| {
            let m = s1 / count;
            (k + m, (s2 / count - m * m).max(0.0))
        })
        .unzip()
}

/// The per-channel statistics a forward normalized with.
struct Statistics<'a> {
    mean: &'a [f64],
    invstd: &'a [f64],
    eps: f64,
    training: bool,
}

/// The gradients of input, weight and bias, by the two passes.
fn batch_norm_backward<T: RealFloat>(
    x: &Tensor,
    w: Option<&Tensor>,
    g: &Tensor,
    s: &Statistics<'_>,
) -> Result<(Tensor, Tensor, Tensor)> {
    let p = Planes::of(x.shape());
    let x = contiguous(x)?;
    let g = contiguous(g)?;
    let scale = channel_values(w, p.channels, 1.0);
    let sums = g.with_contiguous(|gs: &[T]| {
        x.with_contiguous(|xs: &[T]| {
            channel_sums(p, gs, xs, s.mean, |gv, xv, m| {
                let gv = gv.to_f64();
                (gv, gv * (xv.to_f64() - m))
            })
        })
    });
    let count = p.count() as f64;
    // dx = (g - mean(g) - (x - mean) * q) * k, with k = invstd * w and
    // q = invstd^2 * mean(g * (x - mean)); in evaluation only g * k.
    let consts: Vec<[T; 4]> = (0..p.channels)
        .map(|c| {
            let (sum_g, sum_gx) = sums[c];
            let k = s.invstd[c] * scale[c];
            let q = s.invstd[c] * s.invstd[c] * sum_gx / count;
            [s.mean[c], sum_g / count, q, k].map(T::from_f64)
        })
        .collect();
    let dx = match s.training {
        true => channel_map(p, &g, &x, &consts, |gv, xv, k| {
            gv.sub(k[1]).sub(xv.sub(k[0]).mul(k[2])).mul(k[3])
        }),
        false => channel_map(p, &g, &g, &consts, |gv, _, k| gv.mul(k[3])),
    };
    let dw = channel_tensor(
        sums.iter()
            .zip(s.invstd)
            .map(|(&(_, sum_gx), &i)| sum_gx * i),
        x.dtype(),
        &[p.channels],
    )?;
    let db = channel_tensor(
        sums.iter().map(|&(sum_g, _)| sum_g),
        x.dtype(),
        &[p.channels],
    )?;
    Ok((dx, dw, db))
}

/// The gradients by differentiable ops, for `create_graph`. In training
/// the statistics are recomputed from `x` so that their own dependence on
/// it is differentiated too.
fn batch_norm_backward_ops(
    x: &Tensor,
    w: Option<&Tensor>,
    g: &Tensor,
    s: &Statistics<'_>,
) -> Result<(Tensor, Tensor, Tensor)> {
    let dims: Vec<i64> = std::iter::once(0).chain(2..x.ndim() as i64).collect();
    let mut per_channel = vec![1; x.ndim()];
    per_channel[1] = x.shape()[1];
    let channel = |values: &[f64]| channel_tensor(values.iter().copied(), x.dtype(), &per_channel);
    let (centered, invstd) = match s.training {
        true => {
            let centered = sub(x, &mean(x, &dims, true)?)?;
            let var = mean(&mul(&centered, &centered)?, &dims, true)?;
            let eps = Tensor::wrapped_number(Scalar::Float(s.eps));
            let one = Tensor::wrapped_number(Scalar::Int(1));
            (centered, div(&one, &sqrt(&add(&var, &eps)?)?)?)
        }
        false => (sub(x, &channel(s.mean)?)?, channel(s.invstd)?),
    };
    let normalized = mul(&centered, &invstd)?;
    let k = match w {
        Some(w) => mul(&invstd, &shaped(w.clone(), &per_channel)?)?,
        None => invstd,
    };
    let dx = match s.training {
        true => {
            let mean_g = mean(g, &dims, true)?;
            let mean_gn = mean(&mul(g, &normalized)?, &dims, true)?;
            mul(&sub(&sub(g, &mean_g)?, &mul(&normalized, &mean_gn)?)?, &k)?
        }
        false => mul(g, &k)?,
    };
    let dw = sum(&mul(g, &normalized)?, &dims, false)?;
    let db = sum(g, &dims, false)?;
    Ok((dx, dw, db))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_sums_match_a_plain_sum_over_every_block_shape() {
        // Planes of 1 (channels as columns), short, and longer than a block row.
        for (batch, channels, plane) in [(5, 37, 1), (3, 20, 3), (2, 3, 3000), (4, 9, 300)] {
            let p = Planes {
                batch,
                channels,
                plane,
            };
            let xs: Vec<f64> = (0..batch * channels * plane)
                .map(|i| ((i * 7919) % 101) as f64 - 50.0)
                .collect();
            let k: Vec<f64> = (0..channels).map(|c| c as f64).collect();
            let got = channel_sums(p, &xs, &xs, &k, |x, y, kv| (x - kv, x * y));
            for c in 0..channels {
                let values = (0..batch).flat_map(|n| {
                    let at = (n * channels + c) * plane;
                    xs[at..at + plane].iter().copied()
                });
                let want = values.fold((0.0, 0.0), |(a, b), x| (a + x - k[c], b + x * x));
                assert_eq!(got[c], want, "channel {c} of {batch}x{channels}x{plane}");
            }
        }
    }
}
