//! `interpolate`: nearest and (bi/tri)linear resizing of the trailing
//! spatial dims, each dim resampled from source positions computed as
//! PyTorch computes them.

use super::check_real_float;
use super::index::{resample, Resample};
use crate::tensor::Tensor;
use crate::{bail, Result};

/// Resizes the last `sizes.len()` dims of `t` to `sizes`. `scales` are the
/// user's scale factors (they set the source step when given, as in
/// PyTorch); `mode` is `nearest`, `nearest-exact`, `linear`, `bilinear` or
/// `trilinear`.
pub fn interpolate(
    t: &Tensor,
    sizes: &[usize],
    scales: &[Option<f64>],
    mode: &str,
    align_corners: bool,
) -> Result<Tensor> {
    let k = sizes.len();
    if k == 0 || k > t.ndim() || scales.len() != k {
        bail!(
            Value,
            "interpolate: {} output sizes for an input of {} dims",
            k,
            t.ndim()
        );
    }
    let first = t.ndim() - k;
    let mut out_shape = t.shape()[..first].to_vec();
    out_shape.extend_from_slice(sizes);
    crate::tensor::layout::check_numel(&out_shape)?;
    let linear = match mode {
        "nearest" | "nearest-exact" => false,
        "linear" | "bilinear" | "trilinear" => {
            check_real_float(t.dtype(), "upsample_linear")?;
            true
        }
        _ => bail!(
            NotImplemented,
            "interpolate: mode {} is not supported",
            mode
        ),
    };
    let mut steps = Vec::with_capacity(k);
    for (i, (&out, &scale)) in sizes.iter().zip(scales).enumerate() {
        let dim = first + i;
        let input = t.shape()[dim];
        if input == 0 && out > 0 {
            bail!(
                Runtime,
                "Input and output sizes should be greater than 0, but got input ({}) and output ({})",
                input,
                out
            );
        }
        let step = source_step(input, out, scale, align_corners && linear);
        let last = input.saturating_sub(1) as f64;
        steps.push(match linear {
            false => {
                // nearest-exact samples at pixel centres; nearest at corners.
                let shift = if mode == "nearest-exact" { 0.5 } else { 0.0 };
                let positions = (0..out)
                    .map(|o| (((o as f64 + shift) * step).floor()).min(last) as i64)
                    .collect();
                Resample::gather(dim, positions)
            }
            true => {
                let (mut low, mut high, mut upper) = (vec![], vec![], vec![]);
                for o in 0..out {
                    let src = match align_corners {
                        true => o as f64 * step,
                        false => ((o as f64 + 0.5) * step - 0.5).max(0.0),
                    };
                    let below = src.floor().min(last);
                    low.push(below as i64);
                    high.push((below + 1.0).min(last) as i64);
                    upper.push(src - below);
                }
                let lower = upper.iter().map(|w| 1.0 - w).collect();
                Resample {
                    dim,
                    terms: vec![(low, Some(lower)), (high, Some(upper))],
                }
            }
        });
    }
    let name = match (mode, k) {
        ("nearest", 1) => "UpsampleNearest1DBackward0",
        ("nearest", 2) => "UpsampleNearest2DBackward0",
        ("nearest", _) => "UpsampleNearest3DBackward0",
        ("nearest-exact", 1) => "UpsampleNearestExact1DBackward0",
        ("nearest-exact", 2) => "UpsampleNearestExact2DBackward0",
        ("nearest-exact", _) => "UpsampleNearestExact3DBackward0",
        (_, 1) => "UpsampleLinear1DBackward0",
        (_, 2) => "UpsampleBilinear2DBackward0",
        _ => "UpsampleTrilinear3DBackward0",
    };
    resample(t, steps, name)
}

/// The distance in input positions between neighbouring output positions.
fn source_step(input: usize, output: usize, scale: Option<f64>, align_corners: bool) -> f64 {
    match (align_corners, scale) {
        (true, _) if output > 1 => (input as f64 - 1.0) / (output as f64 - 1.0),
        (true, _) => 0.0,
        (false, Some(s)) if s > 0.0 => 1.0 / s,
        (false, _) => input as f64 / output.max(1) as f64,
    }
}
