//! `pad`: constant padding as a fill and one copy (`ConstantPadNdBackward0`,
//! whose gradient is the opposite padding); reflect, replicate and circular
//! padding as a gather of source positions along each padded dim, whose
//! gradient adds every copy back to its source.

use super::index::{resample, Resample};
use super::inplace::copy_;
use super::shape::slice;
use crate::autograd::record;
use crate::tensor::layout::fmt_shape;
use crate::tensor::{Shape, Tensor};
use crate::{bail, grads, Result, Scalar};

/// `F.pad(input, pad, mode, value)`: `pads` lists (before, after) amounts
/// from the last dim backwards; negative amounts crop.
pub fn pad(t: &Tensor, pads: &[i64], mode: &str, value: Option<Scalar>) -> Result<Tensor> {
    if pads.len() % 2 != 0 {
        bail!(Runtime, "Padding length must be divisible by 2");
    }
    if pads.len() / 2 > t.ndim() {
        bail!(
            Runtime,
            "Padding length should be less than or equal to two times the input dimension but got padding length {} and input of dimension {}",
            pads.len(),
            t.ndim()
        );
    }
    match (mode, value) {
        ("constant", value) => {
            constant_pad(t, &amounts(t.ndim(), pads), value.unwrap_or(Scalar::Int(0)))
        }
        ("reflect" | "replicate" | "circular", None) => edge_pad(t, pads, mode),
        ("reflect" | "replicate" | "circular", Some(_)) => bail!(
            Runtime,
            "Padding mode \"{}\" doesn't take in value argument",
            mode
        ),
        _ => bail!(NotImplemented, "Unrecognised padding mode {}", mode),
    }
}

/// (before, after) for every dim of an `ndim`-dim tensor, first dim first.
fn amounts(ndim: usize, pads: &[i64]) -> Vec<(i64, i64)> {
    let mut out = vec![(0, 0); ndim];
    for (i, pair) in pads.chunks(2).enumerate() {
        out[ndim - 1 - i] = (pair[0], pair[1]);
    }
    out
}

/// `t` cropped by the negative amounts and surrounded by `value` for the
/// positive ones.
fn constant_pad(t: &Tensor, amounts: &[(i64, i64)], value: Scalar) -> Result<Tensor> {
    let mut shape = Shape::new();
    let mut src = t.detach();
    for (d, (&size, &(before, after))) in t.shape().iter().zip(amounts).enumerate() {
        let padded = size as i64 + before + after;
        if padded < 0 {
            bail!(
                Runtime,
                "The input size {}, plus negative padding {} and {} resulted in a negative output size, which is invalid. Check dimension {} of your input.",
                size,
                before,
                after,
                d
            );
        }
        shape.push(padded as usize);
        let first = (-before).max(0) as usize;
        let kept = (size as i64 - (-before).max(0) - (-after).max(0)).max(0) as usize;
        src = slice(&src, d, first.min(size), kept, 1)?;
    }
    crate::tensor::layout::check_numel(&shape)?;
    let out = Tensor::full(&shape, value, t.dtype())?;
    let mut interior = out.clone();
    for (d, &(before, _)) in amounts.iter().enumerate() {
        interior = slice(&interior, d, before.max(0) as usize, src.shape()[d], 1)?;
    }
    if src.numel() > 0 {
        copy_(&interior, &src)?;
    }
    let back: Vec<(i64, i64)> = amounts.iter().map(|&(b, a)| (-b, -a)).collect();
    record(
        "ConstantPadNdBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(constant_pad(g, &back, Scalar::Int(0))?)]),
    );
    Ok(out)
}

/// Reflect, replicate or circular padding of the last `pads.len() / 2`
/// dims of a tensor with one or no batch dim before them.
fn edge_pad(t: &Tensor, pads: &[i64], mode: &str) -> Result<Tensor> {
    let (k, ndim) = (pads.len() / 2, t.ndim());
    if !(1..=3).contains(&k) || !(k + 1..=k + 2).contains(&ndim) {
        bail!(
            NotImplemented,
            "Padding size {} is not supported for {}D input tensor.\nSupported combinations for non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)",
            pads.len(),
            ndim
        );
    }
    if t.shape()[ndim - k - 1..].contains(&0) {
        bail!(
            Runtime,
            "Expected {}D or {}D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: {}",
            k + 1,
            k + 2,
            fmt_shape(t.shape())
        );
    }
    let amounts = amounts(ndim, pads);
    let mut steps = Vec::with_capacity(k);
    for (d, &(before, after)) in amounts.iter().enumerate().skip(ndim - k) {
        let n = t.shape()[d] as i64;
        match mode {
            "reflect" if before >= n || after >= n => bail!(
                Runtime,
                "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding ({}, {}) at dimension {} of input {}",
                before,
                after,
                d,
                fmt_shape(t.shape())
            ),
            "circular" if before > n || after > n => {
                bail!(Runtime, "Padding value causes wrapping around more than once.")
            }
            _ => {}
        }
        if n + before + after < 0 {
            bail!(Runtime, "narrow(): length must be non-negative.");
        }
        let positions: Vec<i64> = (-before..n + after)
            .map(|s| match mode {
                "reflect" if s < 0 => -s,
                "reflect" if s >= n => 2 * (n - 1) - s,
                "replicate" => s.clamp(0, n - 1),
                "circular" => s.rem_euclid(n),
                _ => s,
            })
            .collect();
        steps.push(Resample::gather(d, positions));
    }
    let name = match (mode, k) {
        ("reflect", 1) => "ReflectionPad1DBackward0",
        ("reflect", 2) => "ReflectionPad2DBackward0",
        ("reflect", _) => "ReflectionPad3DBackward0",
        ("replicate", 1) => "ReplicationPad1DBackward0",
        ("replicate", 2) => "ReplicationPad2DBackward0",
        ("replicate", _) => "ReplicationPad3DBackward0",
        // Circular padding is copies of slices in PyTorch.
        _ => "CopySlices",
    };
    resample(t, steps, name)
}
