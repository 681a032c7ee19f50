//! Batch, layer and group normalization with kernels of their own
//! (`NativeBatchNormBackward0`, `NativeLayerNormBackward0`,
//! `NativeGroupNormBackward0`). Batch norm's forward takes each channel's
//! statistics in one pass and writes the output in a second; its backward
//! reduces the two per-channel sums it needs in one pass and writes the
//! input's gradient in another. Layer norm does the same per row of
//! normalized elements, group norm per group (a contiguous row of whole
//! channels). Composed of ops they ran a dozen strided kernels, at two to
//! five times PyTorch's time.

use super::binary::{add, div, mul, sub};
use super::check_real_float;
use super::copy::contiguous;
use super::inplace::copy_;
use super::num::Arith;
use super::num::{Float, RealFloat};
use super::reduce::{fold_lanes, map_rows, mean, sum};
use super::shape::reshape;
use super::unary::sqrt;
use crate::autograd::{formulas_differentiable, is_grad_enabled, record, SavedTensor};
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
) -> Result<Tensor> {
    if x.numel() == 0 {
        return Ok(x.clone());
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
    check_real_float(dtype, "batch_norm")?;
    let [(_, running_mean), (_, running_var), _, _] = params;
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
        check_parameter_dtype(dtype, t)?;
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
    // In the order PyTorch checks their sizes.
    let params = [
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
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
        channel_map(p, &x, &x, &consts, |v, _, k| v * k[0] + k[1])?
    }, unreachable!("checked to be a real float"));
    record_norm(
        "NativeBatchNormBackward0",
        [input, &out],
        weight,
        bias,
        move |x, w, g, differentiable| {
            let stats = Statistics {
                mean: &mean,
                invstd: &invstd,
                eps: mode.eps,
                training: mode.training,
            };
            match differentiable {
                true => batch_norm_backward_ops(x, w, g, &stats),
                false => with_real_float!(x.dtype(), T => {
                    batch_norm_backward::<T>(x, w, g, &stats)
                }, unreachable!("a float input")),
            }
        },
    );
    Ok(out)
}

/// Records the node of a normalization of `input` into `out` with optional
/// `weight` and `bias`. `backward(x, w, g, differentiable)` gives the
/// gradients of input, weight and bias (by differentiable ops under
/// `create_graph`); those of absent parameters are dropped, the others
/// shaped as their parameter.
fn record_norm(
    name: &'static str,
    [input, out]: [&Tensor; 2],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    backward: impl Fn(&Tensor, Option<&Tensor>, &Tensor, bool) -> Result<(Tensor, Tensor, Tensor)>
        + Send
        + Sync
        + 'static,
) {
    let mut inputs = vec![input];
    inputs.extend(weight);
    inputs.extend(bias);
    let weight_shape = weight.map(|w| w.shape().to_vec());
    let bias_shape = bias.map(|b| b.shape().to_vec());
    record(
        name,
        &inputs,
        out,
        || (SavedTensor::input(input), weight.map(SavedTensor::input)),
        move |ctx, (sx, sw), g| {
            let x = sx.unpack(ctx)?;
            let w = sw.as_ref().map(|s| s.unpack(ctx)).transpose()?;
            let (dx, dw, db) = backward(&x, w.as_ref(), g, formulas_differentiable())?;
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
        })?,
        false => channel_map(p, &g, &g, &consts, |gv, _, k| gv.mul(k[3]))?,
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

/// `F.layer_norm`: each row of the trailing `normalized` dims of `input`
/// less its mean, over its standard deviation (biased, with `eps` added
/// to the variance), then scaled by `weight` and shifted by `bias`, which
/// have the shape `normalized`.
pub fn layer_norm(
    input: &Tensor,
    normalized: &[usize],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    let nd = normalized.len();
    if nd == 0 || input.ndim() < nd || input.shape()[input.ndim() - nd..] != *normalized {
        bail!(
            Runtime,
            "Given normalized_shape={}, expected input with shape [*, {}], but got input of size{}",
            crate::tensor::layout::fmt_shape(normalized),
            normalized
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            crate::tensor::layout::fmt_shape(input.shape())
        );
    }
    let dtype = input.dtype();
    check_real_float(dtype, "LayerNormKernelImpl")?;
    for (name, t) in [("weight", weight), ("bias", bias)] {
        let Some(t) = t else { continue };
        if t.shape() != normalized {
            bail!(
                Runtime,
                "Expected {name} to be of same shape as normalized_shape, but got {name} of shape {} and normalized_shape = {}",
                crate::tensor::layout::fmt_shape(t.shape()),
                crate::tensor::layout::fmt_shape(normalized)
            );
        }
        check_parameter_dtype(dtype, t)?;
    }
    let n: usize = normalized.iter().product();
    let x = contiguous(&input.detach())?;
    let out = with_real_float!(dtype, T => {
        let (scale, shift) = (row_values::<T>(weight, n, 1.0), row_values::<T>(bias, n, 0.0));
        if x.numel() == 0 {
            x.clone()
        } else {
            map_rows::<T>(&x, &x, n, |_, xr, _, out| {
                let (mean, rstd) = row_statistics(xr, eps);
                for (((o, &v), &w), &b) in out.iter_mut().zip(xr).zip(&scale).zip(&shift) {
                    *o = v.sub(mean).mul(rstd).mul(w).add(b);
                }
            })?
        }
    }, unreachable!("checked to be a real float"));
    record_norm(
        "NativeLayerNormBackward0",
        [input, &out],
        weight,
        bias,
        move |x, w, g, differentiable| match differentiable {
            true => layer_norm_backward_ops(x, w, g, nd, eps),
            false => with_real_float!(x.dtype(), T => {
                layer_norm_backward::<T>(x, w, g, nd, eps)
            }, unreachable!("a float input")),
        },
    );
    Ok(out)
}

/// A normalization's weight or bias must have its input's dtype.
fn check_parameter_dtype(dtype: DType, parameter: &Tensor) -> Result<()> {
    match (parameter.dtype() == dtype, dtype) {
        (true, _) => Ok(()),
        (false, DType::Float32) => bail!(
            Runtime,
            "mixed dtype (CPU): expect parameter to have scalar type of Float"
        ),
        (false, _) => bail!(
            Runtime,
            "mixed dtype (CPU): all inputs must share same datatype."
        ),
    }
}

/// A parameter's elements, or `fill` for each of `n` when it is absent.
fn row_values<T: RealFloat>(t: Option<&Tensor>, n: usize, fill: f64) -> Vec<T> {
    match t {
        Some(t) => t.to_vec::<T>(),
        None => vec![T::from_f64(fill); n],
    }
}

/// A row's mean and reciprocal standard deviation (the biased variance,
/// taken about the mean in a second pass, plus `eps`).
fn row_statistics<T: RealFloat>(xs: &[T], eps: f64) -> (T, T) {
    let plus = |a: T, b: T| a.add(b);
    let count = T::from_f64(xs.len() as f64);
    let mean = fold_lanes(xs, T::zero(), &plus, &plus).div(count);
    let squares = fold_lanes(
        xs,
        T::zero(),
        &|a: T, v: T| {
            let d = v.sub(mean);
            a.add(d.mul(d))
        },
        &plus,
    );
    let var = squares.div(count);
    (mean, T::one().div(var.add(T::from_f64(eps)).sqrt()))
}

/// The gradients of input, weight and bias of `layer_norm` over its last
/// `nd` dims, each row's statistics taken again from `x`.
fn layer_norm_backward<T: RealFloat>(
    x: &Tensor,
    w: Option<&Tensor>,
    g: &Tensor,
    nd: usize,
    eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let (x, g) = (contiguous(x)?, contiguous(g)?);
    let normalized = x.shape()[x.ndim() - nd..].to_vec();
    let n: usize = normalized.iter().product();
    let scale = row_values::<T>(w, n, 1.0);
    let rows = x.numel() / n.max(1);
    let stats: Vec<(T, T)> = x.with_contiguous(|xs: &[T]| {
        crate::parallel::map_indices(rows, |r| row_statistics(&xs[r * n..(r + 1) * n], eps))
    })?;
    let count = T::from_f64(n as f64);
    // dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = g * w.
    let dx = match x.numel() {
        0 => x.clone(),
        _ => map_rows::<T>(&x, &g, n, |r, xr, gr, out| {
            let (mean, rstd) = stats[r];
            let (mut sum_gw, mut sum_gwx) = (T::zero(), T::zero());
            for ((&v, &gv), &w) in xr.iter().zip(gr).zip(&scale) {
                let gw = gv.mul(w);
                sum_gw = sum_gw.add(gw);
                sum_gwx = sum_gwx.add(gw.mul(v.sub(mean).mul(rstd)));
            }
            let (a, b) = (sum_gw.div(count), sum_gwx.div(count));
            for (((o, &v), &gv), &w) in out.iter_mut().zip(xr).zip(gr).zip(&scale) {
                let xhat = v.sub(mean).mul(rstd);
                *o = rstd.mul(gv.mul(w).sub(a).sub(xhat.mul(b)));
            }
        })?,
    };
    // dw = sum over rows of g * xhat, db = sum of g: blocks of rows summed
    // into partial rows, added in block order (independent of threads).
    let rows_per_block = rows.div_ceil(64).max((8192 / n.max(1)).max(1));
    let blocks = rows.div_ceil(rows_per_block.max(1));
    let mut partials: Vec<Vec<[T; 2]>> = vec![vec![[T::zero(); 2]; n]; blocks];
    x.with_contiguous(|xs: &[T]| {
        g.with_contiguous(|gs: &[T]| {
            crate::parallel::for_each_item_mut(partials.iter_mut(), |block, acc| {
                let first = block * rows_per_block;
                for r in first..rows.min(first + rows_per_block) {
                    let (mean, rstd) = stats[r];
                    let (xr, gr) = (&xs[r * n..(r + 1) * n], &gs[r * n..(r + 1) * n]);
                    for ((a, &v), &gv) in acc.iter_mut().zip(xr).zip(gr) {
                        a[0] = a[0].add(gv.mul(v.sub(mean).mul(rstd)));
                        a[1] = a[1].add(gv);
                    }
                }
            })
        })
    });
    let mut totals = vec![[T::zero(); 2]; n];
    for part in &partials {
        for (t, p) in totals.iter_mut().zip(part) {
            *t = [t[0].add(p[0]), t[1].add(p[1])];
        }
    }
    let (dw, db): (Vec<T>, Vec<T>) = totals.into_iter().map(|[a, b]| (a, b)).unzip();
    Ok((
        dx,
        Tensor::from_vec(dw, &normalized)?,
        Tensor::from_vec(db, &normalized)?,
    ))
}

/// The gradients by differentiable ops, for `create_graph`: the statistics
/// are recomputed from `x` so that their dependence on it is differentiated.
fn layer_norm_backward_ops(
    x: &Tensor,
    w: Option<&Tensor>,
    g: &Tensor,
    nd: usize,
    eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let lead = x.ndim() - nd;
    let dims: Vec<i64> = (lead as i64..x.ndim() as i64).collect();
    let rows: Vec<i64> = (0..lead as i64).collect();
    let (normalized, rstd) = standardize_ops(x, &dims, eps)?;
    let gw = match w {
        Some(w) => mul(g, w)?,
        None => g.clone(),
    };
    let dx = standardized_input_grad_ops(&gw, &normalized, &rstd, &dims)?;
    // With no leading dims there is nothing to sum over (an empty list of
    // dims would mean all of them).
    let over_rows = |t: Tensor| match rows.is_empty() {
        true => Ok(t),
        false => sum(&t, &rows, false),
    };
    let dw = over_rows(mul(g, &normalized)?)?;
    let db = over_rows(g.clone())?;
    Ok((dx, dw, db))
}

/// `(x - mean) * rstd` over `dims` and `rstd` itself (biased variance plus
/// `eps`), by differentiable ops.
fn standardize_ops(x: &Tensor, dims: &[i64], eps: f64) -> Result<(Tensor, Tensor)> {
    let centered = sub(x, &mean(x, dims, true)?)?;
    let var = mean(&mul(&centered, &centered)?, dims, true)?;
    let eps = Tensor::wrapped_number(Scalar::Float(eps));
    let one = Tensor::wrapped_number(Scalar::Int(1));
    let rstd = div(&one, &sqrt(&add(&var, &eps)?)?)?;
    Ok((mul(&centered, &rstd)?, rstd))
}

/// The input's gradient of a standardization over `dims`, given the
/// gradient `gw` of the standardized values (already through the weight).
fn standardized_input_grad_ops(
    gw: &Tensor,
    normalized: &Tensor,
    rstd: &Tensor,
    dims: &[i64],
) -> Result<Tensor> {
    let mean_gw = mean(gw, dims, true)?;
    let mean_gwx = mean(&mul(gw, normalized)?, dims, true)?;
    mul(
        &sub(&sub(gw, &mean_gw)?, &mul(normalized, &mean_gwx)?)?,
        rstd,
    )
}

/// How `group_norm` splits its input: `batch` samples of `groups` rows,
/// each row `channels / groups` planes of `plane` elements.
#[derive(Clone, Copy)]
struct Groups {
    batch: usize,
    channels: usize,
    groups: usize,
    plane: usize,
}

impl Groups {
    fn of(shape: &[usize], groups: usize) -> Groups {
        let (batch, channels) = (shape[0], shape[1]);
        let plane = shape[2..].iter().product();
        Groups {
            batch,
            channels,
            groups,
            plane,
        }
    }

    fn row_len(self) -> usize {
        self.channels / self.groups * self.plane
    }

    /// The first channel of row `r`.
    fn first_channel(self, r: usize) -> usize {
        (r % self.groups) * (self.channels / self.groups)
    }
}

/// `group_norm(num_groups, weight, bias, eps)` (`NativeGroupNormBackward0`):
/// each sample's channels in `groups` consecutive groups, a group normalised
/// over its channels and positions with the biased variance, then scaled
/// and shifted per channel. Each group is one contiguous row: its statistics
/// are taken as layer_norm's, and each of its planes is written as
/// `(x - mean) * a + bias` with the channel's `a = rstd * weight`.
pub fn group_norm(
    input: &Tensor,
    groups: usize,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    let shape = input.shape();
    if shape.len() < 2 {
        bail!(
            Runtime,
            "Expected at least 2 dimensions for input tensor but received {}",
            shape.len()
        );
    }
    let channels = shape[1];
    if groups == 0 || channels % groups != 0 {
        bail!(
            Runtime,
            "Expected number of channels in input to be divisible by num_groups, but got input of shape {} and num_groups={}",
            crate::tensor::layout::fmt_shape(shape),
            groups
        );
    }
    let dtype = input.dtype();
    for (name, t) in [("weight", weight), ("bias", bias)] {
        let Some(t) = t else { continue };
        if t.shape() != [channels] {
            bail!(
                Runtime,
                "Expected {name} to be a vector of size equal to the number of channels in input, but got {name} of shape {} and input of shape {}",
                crate::tensor::layout::fmt_shape(t.shape()),
                crate::tensor::layout::fmt_shape(shape)
            );
        }
        check_parameter_dtype(dtype, t)?;
    }
    check_real_float(dtype, "GroupNormKernelImpl")?;
    let layout = Groups::of(shape, groups);
    let x = contiguous(&input.detach())?;
    let out = with_real_float!(dtype, T => {
        let (scale, shift) = (row_values::<T>(weight, channels, 1.0), row_values::<T>(bias, channels, 0.0));
        if x.numel() == 0 {
            x.clone()
        } else {
            map_rows::<T>(&x, &x, layout.row_len(), |r, xr, _, out| {
                let (mean, rstd) = row_statistics(xr, eps);
                let first = layout.first_channel(r);
                let planes = out.chunks_exact_mut(layout.plane).zip(xr.chunks_exact(layout.plane));
                for (c, (o, xp)) in (first..).zip(planes) {
                    let (a, b) = (rstd.mul(scale[c]), shift[c]);
                    for (o, &v) in o.iter_mut().zip(xp) {
                        *o = v.sub(mean).mul(a).add(b);
                    }
                }
            })?
        }
    }, unreachable!("checked to be a real float"));
    record_norm(
        "NativeGroupNormBackward0",
        [input, &out],
        weight,
        bias,
        move |x, w, g, differentiable| match differentiable {
            true => group_norm_backward_ops(x, w, g, groups, eps),
            false => with_real_float!(x.dtype(), T => {
                group_norm_backward::<T>(x, w, g, groups, eps)
            }, unreachable!("a float input")),
        },
    );
    Ok(out)
}

/// `(sum of g * (x - mean), sum of g)` over two runs, in independent lanes
/// (separate arrays, so that both sums vectorise).
fn centered_dot_and_sum<T: RealFloat>(xs: &[T], gs: &[T], mean: T) -> (T, T) {
    const LANES: usize = 16;
    let (mut dots, mut sums) = ([T::zero(); LANES], [T::zero(); LANES]);
    let (mut cx, mut cg) = (xs.chunks_exact(LANES), gs.chunks_exact(LANES));
    for (x, g) in (&mut cx).zip(&mut cg) {
        for l in 0..LANES {
            dots[l] = dots[l].add(g[l].mul(x[l].sub(mean)));
            sums[l] = sums[l].add(g[l]);
        }
    }
    let plus = |a: T, b: T| a.add(b);
    let (dot, sum) = (
        dots.into_iter().fold(T::zero(), plus),
        sums.into_iter().fold(T::zero(), plus),
    );
    cx.remainder()
        .iter()
        .zip(cg.remainder())
        .fold((dot, sum), |(d, s), (&x, &g)| {
            (d.add(g.mul(x.sub(mean))), s.add(g))
        })
}

/// A group's statistics and, per channel, the sums of `g * xhat` and of `g`.
#[derive(Clone)]
struct GroupRowSums<T> {
    mean: T,
    rstd: T,
    per_channel: Vec<(T, T)>,
}

/// The gradients of input, weight and bias of `group_norm`. One pass per
/// row takes its statistics again and, per channel, the sums of `g` and of
/// `g * xhat`; they give the weight's and bias's gradients (summed over
/// samples in order) and the coefficients of the input's gradient,
/// `rstd * (g * w - mean(g * w) - xhat * mean(g * w * xhat))` over the row,
/// which a second pass writes.
fn group_norm_backward<T: RealFloat>(
    x: &Tensor,
    w: Option<&Tensor>,
    g: &Tensor,
    groups: usize,
    eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let (x, g) = (contiguous(x)?, contiguous(g)?);
    let layout = Groups::of(x.shape(), groups);
    let (n, plane, channels) = (layout.row_len(), layout.plane, layout.channels);
    if x.numel() == 0 {
        let none = || Tensor::full(&[channels], Scalar::Int(0), x.dtype());
        return Ok((x.clone(), none()?, none()?));
    }
    let per_group = channels / groups;
    let scale = row_values::<T>(w, channels, 1.0);
    let rows = layout.batch * groups;
    let unset = GroupRowSums {
        mean: T::zero(),
        rstd: T::zero(),
        per_channel: Vec::new(),
    };
    let mut row_sums = vec![unset; rows];
    let rows_per_span = (super::elementwise::CHUNK / n.max(1)).max(1);
    x.with_contiguous(|xs: &[T]| {
        g.with_contiguous(|gs: &[T]| {
            crate::parallel::for_each_span_mut(&mut row_sums, rows_per_span, |start, span| {
                for (slot, r) in span.iter_mut().zip(start..) {
                    let (xr, gr) = (&xs[r * n..(r + 1) * n], &gs[r * n..(r + 1) * n]);
                    let (mean, rstd) = row_statistics(xr, eps);
                    let per_channel = xr
                        .chunks_exact(plane)
                        .zip(gr.chunks_exact(plane))
                        .map(|(xp, gp)| {
                            let (g_centered, g_sum) = centered_dot_and_sum(xp, gp, mean);
                            (g_centered.mul(rstd), g_sum)
                        })
                        .collect();
                    *slot = GroupRowSums {
                        mean,
                        rstd,
                        per_channel,
                    };
                }
            })
        })
    });
    let count = T::from_f64(n as f64);
    // Per row and channel, dx = g * k_g + (x - mean) * k_x + k_0.
    let coefficients: Vec<Vec<[T; 3]>> = row_sums
        .iter()
        .enumerate()
        .map(|(r, row)| {
            let ws = &scale[layout.first_channel(r)..][..per_group];
            let rstd = row.rstd;
            let (sum_gw, sum_gwx) = row
                .per_channel
                .iter()
                .zip(ws)
                .fold((T::zero(), T::zero()), |(a, b), (&(gx, gs), &w)| {
                    (a.add(gs.mul(w)), b.add(gx.mul(w)))
                });
            let (a, b) = (sum_gw.div(count), sum_gwx.div(count));
            let k_x = T::zero().sub(rstd.mul(rstd).mul(b));
            let k_0 = T::zero().sub(rstd.mul(a));
            ws.iter().map(|&w| [rstd.mul(w), k_x, k_0]).collect()
        })
        .collect();
    let dx = map_rows::<T>(&x, &g, n, |r, xr, gr, out| {
        let mean = row_sums[r].mean;
        let planes = out
            .chunks_exact_mut(plane)
            .zip(xr.chunks_exact(plane))
            .zip(gr.chunks_exact(plane));
        for (((o, xp), gp), &[k_g, k_x, k_0]) in planes.zip(&coefficients[r]) {
            for ((o, &v), &gv) in o.iter_mut().zip(xp).zip(gp) {
                *o = gv.mul(k_g).add(v.sub(mean).mul(k_x)).add(k_0);
            }
        }
    })?;
    let mut totals = vec![(T::zero(), T::zero()); channels];
    for (r, row) in row_sums.iter().enumerate() {
        let first = layout.first_channel(r);
        for (t, &s) in totals[first..first + per_group]
            .iter_mut()
            .zip(&row.per_channel)
        {
            *t = (t.0.add(s.0), t.1.add(s.1));
        }
    }
    let (dw, db): (Vec<T>, Vec<T>) = totals.into_iter().unzip();
    Ok((
        dx,
        Tensor::from_vec(dw, &[channels])?,
        Tensor::from_vec(db, &[channels])?,
    ))
}

/// `group_norm`'s gradients by differentiable ops, for `create_graph`: the
/// rows of each group standardized as layer_norm's, the weight applied per
/// channel.
fn group_norm_backward_ops(
    x: &Tensor,
    w: Option<&Tensor>,
    g: &Tensor,
    groups: usize,
    eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let shape: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
    let layout = Groups::of(x.shape(), groups);
    let rows_shape = [(layout.batch * groups) as i64, layout.row_len() as i64];
    let mut per_channel = vec![1i64; shape.len() - 1];
    per_channel[0] = layout.channels as i64;
    let gw = match w {
        Some(w) => mul(g, &reshape(w, &per_channel)?)?,
        None => g.clone(),
    };
    let (normalized, rstd) = standardize_ops(&reshape(x, &rows_shape)?, &[1], eps)?;
    let dx = standardized_input_grad_ops(&reshape(&gw, &rows_shape)?, &normalized, &rstd, &[1])?;
    let others: Vec<i64> = (0..shape.len() as i64).filter(|&d| d != 1).collect();
    let dw = sum(&mul(g, &reshape(&normalized, &shape)?)?, &others, false)?;
    let db = sum(g, &others, false)?;
    Ok((reshape(&dx, &shape)?, dw, db))
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
