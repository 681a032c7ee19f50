//! Discrete Fourier transforms: `torch.fft`'s `fft`, `ifft`, `rfft`,
//! `irfft` and their n-dimensional forms.
//!
//! Three primitives carry the history, with PyTorch's `grad_fn` names and
//! backward rules: [`fft_c2c`] (complex to complex, `FftC2CBackward0`),
//! [`fft_r2c`] (real to complex, `FftR2CBackward0`) and [`fft_c2r`]
//! (Hermitian complex to real, `FftC2RBackward0`). Each transforms one
//! dimension after another with `rustfft` plans of any length, batched
//! over the other dimensions. The public functions handle arguments as
//! PyTorch does: dims, `n`/`s` (trimming with a slice, zero-padding with
//! `constant_pad_nd`), the `norm` mode and dtype promotion.
//!
//! Every transform is linear, so its gradient (PyTorch's convention: the
//! adjoint applied to the output's gradient) is another transform: the
//! adjoint of an unnormalised forward DFT is the unnormalised inverse one,
//! with the same scale. The backward formulas are written with these
//! primitives, so `create_graph` differentiates them again.

use super::binary::mul;
use super::complex::real;
use super::copy::{to_dtype, try_cast};
use super::elementwise::map_row_major;
use super::pad::pad;
use super::shape::slice;
use super::unary::conj;
use crate::autograd::record;
use crate::tensor::layout::wrap_dim;
use crate::tensor::{DType, Element, Tensor};
use crate::{bail, grads, parallel, Result};
use num_complex::Complex;
use rustfft::{FftDirection, FftNum, FftPlanner};

/// How a transform is scaled, PyTorch's `fft_norm_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FftNorm {
    /// No scaling.
    None,
    /// By `1/sqrt(n)`.
    ByRootN,
    /// By `1/n`.
    ByN,
}

impl FftNorm {
    /// The scaling of a transform in direction `forward` for the `norm`
    /// argument of `torch.fft` (`None` meaning `"backward"`).
    pub fn parse(norm: Option<&str>, forward: bool) -> Result<FftNorm> {
        Ok(match norm {
            None | Some("backward") if forward => FftNorm::None,
            None | Some("backward") => FftNorm::ByN,
            Some("forward") if forward => FftNorm::ByN,
            Some("forward") => FftNorm::None,
            Some("ortho") => FftNorm::ByRootN,
            Some(other) => bail!(Runtime, "Invalid normalization mode: \"{other}\""),
        })
    }

    /// The factor for a transform over `n` points in all.
    fn factor(self, n: usize) -> f64 {
        match self {
            FftNorm::None => 1.0,
            FftNorm::ByRootN => 1.0 / (n as f64).sqrt(),
            FftNorm::ByN => 1.0 / n as f64,
        }
    }
}

/// Below this many elements a kernel runs on the calling thread.
const PARALLEL_MIN: usize = 1 << 15;

/// `body(first_block, span)` over `data` cut into runs of whole blocks of
/// `block` elements, spread over the pool when the work is large.
fn for_blocks<E: Send>(data: &mut [E], block: usize, body: impl Fn(usize, &mut [E]) + Sync) {
    if data.is_empty() || block == 0 {
        return;
    }
    if data.len() < PARALLEL_MIN || data.len() == block {
        body(0, data);
    } else {
        parallel::for_each_span_mut(data, block, |start, span| body(start / block, span));
    }
}

fn zero<T: FftNum>() -> Complex<T> {
    Complex::new(T::zero(), T::zero())
}

fn to_t<T: FftNum>(v: f64) -> T {
    T::from_f64(v).unwrap_or_else(T::one)
}

/// Transforms every line of the contiguous `data` of `shape` along `dim`.
fn transform_dim<T: FftNum>(
    data: &mut [Complex<T>],
    shape: &[usize],
    dim: usize,
    direction: FftDirection,
) {
    let len = shape[dim];
    if len <= 1 || data.is_empty() {
        return;
    }
    let inner: usize = shape[dim + 1..].iter().product();
    let fft = FftPlanner::<T>::new().plan_fft(len, direction);
    for_blocks(data, len * inner, |_, span| {
        let mut scratch = vec![zero::<T>(); fft.get_inplace_scratch_len()];
        if inner == 1 {
            fft.process_with_scratch(span, &mut scratch);
            return;
        }
        let mut line = vec![zero::<T>(); len];
        for block in span.chunks_mut(len * inner) {
            for j in 0..inner {
                for (k, v) in line.iter_mut().enumerate() {
                    *v = block[k * inner + j];
                }
                fft.process_with_scratch(&mut line, &mut scratch);
                for (k, v) in line.iter().enumerate() {
                    block[k * inner + j] = *v;
                }
            }
        }
    });
}

/// Multiplies every element by `factor` (nothing when it is 1).
fn scale<T: FftNum>(data: &mut [Complex<T>], factor: f64) {
    if factor == 1.0 {
        return;
    }
    let f = to_t::<T>(factor);
    for_blocks(data, 1, |_, span| span.iter_mut().for_each(|v| *v = *v * f));
}

/// The complex transforms of a fresh contiguous copy of `x` (complex of
/// `T`) over `dims`, scaled by `factor`.
fn c2c_typed<T: FftNum>(
    x: &Tensor,
    dims: &[usize],
    factor: f64,
    direction: FftDirection,
) -> Result<Tensor>
where
    Complex<T>: Element,
{
    let out = map_row_major::<Complex<T>, Complex<T>>(x, |v| v)?;
    {
        let mut data = out.storage().write::<Complex<T>>()?;
        for &d in dims {
            transform_dim(&mut data, out.shape(), d, direction);
        }
        scale(&mut data, factor);
    }
    Ok(out)
}

fn direction(forward: bool) -> FftDirection {
    if forward {
        FftDirection::Forward
    } else {
        FftDirection::Inverse
    }
}

fn c2c_kernel(x: &Tensor, dims: &[usize], norm: FftNorm, forward: bool) -> Result<Tensor> {
    let points = dims.iter().map(|&d| x.shape()[d]).product();
    let factor = norm.factor(points);
    let dir = direction(forward);
    match x.dtype() {
        DType::Complex128 => c2c_typed::<f64>(x, dims, factor, dir),
        DType::Complex64 => c2c_typed::<f32>(x, dims, factor, dir),
        DType::Float64 => c2c_typed::<f64>(&try_cast(x, DType::Complex128)?, dims, factor, dir),
        _ => c2c_typed::<f32>(&try_cast(x, DType::Complex64)?, dims, factor, dir),
    }
}

/// The real-to-complex transforms of `x` (real of `T`) over `dims`; the
/// last of `dims` keeps its first `n/2 + 1` frequencies when `onesided`.
fn r2c_typed<T: FftNum + Element>(
    x: &Tensor,
    dims: &[usize],
    factor: f64,
    onesided: bool,
) -> Result<Tensor>
where
    Complex<T>: Element,
{
    let full = map_row_major::<T, Complex<T>>(x, |v| Complex::new(v, T::zero()))?;
    {
        let mut data = full.storage().write::<Complex<T>>()?;
        for &d in dims {
            transform_dim(&mut data, full.shape(), d, FftDirection::Forward);
        }
        scale(&mut data, factor);
    }
    match dims.last() {
        Some(&last) if onesided && full.shape()[last] > 1 => {
            let half = full.shape()[last] / 2 + 1;
            map_row_major::<Complex<T>, Complex<T>>(&slice(&full, last, 0, half, 1)?, |v| v)
        }
        _ => Ok(full),
    }
}

fn r2c_kernel(x: &Tensor, dims: &[usize], norm: FftNorm, onesided: bool) -> Result<Tensor> {
    let points = dims.iter().map(|&d| x.shape()[d]).product();
    let factor = norm.factor(points);
    match x.dtype() {
        DType::Float64 => r2c_typed::<f64>(x, dims, factor, onesided),
        DType::Float32 => r2c_typed::<f32>(x, dims, factor, onesided),
        d if d.is_complex() => bail!(
            Runtime,
            "_fft_r2c expects a real input tensor, but got {}",
            d.scalar_type_name()
        ),
        _ => r2c_typed::<f32>(&try_cast(x, DType::Float32)?, dims, factor, onesided),
    }
}

/// The complex-to-real transform of `x` (complex of `T`): inverse complex
/// transforms over all of `dims` but the last, then along the last one the
/// inverse transform of the Hermitian signal of `n` points whose first
/// half `x` holds (imaginary parts that symmetry makes zero are ignored).
fn c2r_typed<T: FftNum + Element>(
    x: &Tensor,
    dims: &[usize],
    factor: f64,
    n: usize,
) -> Result<Tensor>
where
    Complex<T>: Element,
{
    let (&last, rest) = dims.split_last().expect("c2r over at least one dim");
    let src = c2c_typed::<T>(x, rest, 1.0, FftDirection::Inverse)?;
    let mut shape: Vec<usize> = src.shape().to_vec();
    let have = shape[last];
    shape[last] = n;
    let inner: usize = shape[last + 1..].iter().product();
    let numel: usize = shape.iter().product();
    crate::tensor::layout::check_numel(&shape)?;
    let mut out = crate::tensor::storage::try_filled(T::zero(), numel)?;
    let used = have.min(n / 2 + 1);
    let fft = FftPlanner::<T>::new().plan_fft(n, FftDirection::Inverse);
    let f = to_t::<T>(factor);
    src.with_contiguous::<Complex<T>, _>(|src| {
        for_blocks(&mut out, n * inner, |first, span| {
            let mut scratch = vec![zero::<T>(); fft.get_inplace_scratch_len()];
            let mut line = vec![zero::<T>(); n];
            for (b, block) in span.chunks_mut(n * inner).enumerate() {
                let s = &src[(first + b) * have * inner..(first + b + 1) * have * inner];
                for j in 0..inner {
                    line.iter_mut().for_each(|v| *v = zero());
                    for k in 0..used {
                        line[k] = s[k * inner + j];
                        if k > 0 && n - k >= used {
                            line[n - k] = s[k * inner + j].conj();
                        }
                    }
                    fft.process_with_scratch(&mut line, &mut scratch);
                    for (k, v) in line.iter().enumerate() {
                        block[k * inner + j] = v.re * f;
                    }
                }
            }
        });
    });
    Tensor::from_vec(out, &shape)
}

fn c2r_kernel(x: &Tensor, dims: &[usize], norm: FftNorm, n: usize) -> Result<Tensor> {
    let rest = &dims[..dims.len().saturating_sub(1)];
    let points = rest.iter().map(|&d| x.shape()[d]).product::<usize>() * n;
    let factor = norm.factor(points);
    match x.dtype() {
        DType::Complex128 => c2r_typed::<f64>(x, dims, factor, n),
        DType::Complex64 => c2r_typed::<f32>(x, dims, factor, n),
        DType::Float64 => c2r_typed::<f64>(&try_cast(x, DType::Complex128)?, dims, factor, n),
        _ => c2r_typed::<f32>(&try_cast(x, DType::Complex64)?, dims, factor, n),
    }
}

/// Checks that `dims` are dims of an `ndim`-dim tensor (internal callers).
fn check_dims(dims: &[usize], ndim: usize) -> Result<()> {
    if let Some(&d) = dims.iter().find(|&&d| d >= ndim) {
        bail!(
            Index,
            "Dimension out of range (expected to be in range of [0, {}], but got {d})",
            ndim.saturating_sub(1)
        );
    }
    Ok(())
}

/// PyTorch's `_fft_c2c`: the complex DFT over `dims` (forward: `exp(-2πi
/// jk/n)`; inverse: `exp(+2πi jk/n)`), scaled by `norm`.
pub fn fft_c2c(x: &Tensor, dims: &[usize], norm: FftNorm, forward: bool) -> Result<Tensor> {
    check_dims(dims, x.ndim())?;
    let out = c2c_kernel(x, dims, norm, forward)?;
    let dims: Vec<usize> = dims.to_vec();
    record(
        "FftC2CBackward0",
        &[x],
        &out,
        || (),
        // The adjoint: the transform the other way, with the same scale.
        move |_, _, g| Ok(grads![Some(fft_c2c(g, &dims, norm, !forward)?)]),
    );
    Ok(out)
}

/// `pads` for [`pad`] that add `amount` zeros at the end of `dim`.
fn end_padding(ndim: usize, dim: usize, amount: usize) -> Vec<i64> {
    let mut pads = vec![0i64; 2 * (ndim - dim)];
    pads[2 * (ndim - 1 - dim) + 1] = amount as i64;
    pads
}

/// PyTorch's `_fft_r2c`: the forward DFT of a real tensor over `dims`;
/// when `onesided`, the last of `dims` keeps only frequencies `0..=n/2`.
pub fn fft_r2c(x: &Tensor, dims: &[usize], norm: FftNorm, onesided: bool) -> Result<Tensor> {
    check_dims(dims, x.ndim())?;
    let out = r2c_kernel(x, dims, norm, onesided)?;
    let dims: Vec<usize> = dims.to_vec();
    let full = dims.last().map_or(0, |&d| x.shape()[d]);
    record(
        "FftR2CBackward0",
        &[x],
        &out,
        || (),
        move |_, _, g| {
            // The adjoint of "transform, then drop the upper half": pad the
            // gradient back with zeros, transform it the other way and keep
            // the real part (the input was real).
            let g = match dims.last() {
                Some(&last) if onesided && g.shape()[last] < full => pad(
                    g,
                    &end_padding(g.ndim(), last, full - g.shape()[last]),
                    "constant",
                    None,
                )?,
                _ => g.clone(),
            };
            Ok(grads![Some(real(&fft_c2c(&g, &dims, norm, false)?)?)])
        },
    );
    Ok(out)
}

/// PyTorch's `_fft_c2r`: the inverse DFT over `dims` of a Hermitian signal
/// whose last dim holds its first `last_dim_size / 2 + 1` frequencies; the
/// result has `last_dim_size` points there.
pub fn fft_c2r(x: &Tensor, dims: &[usize], norm: FftNorm, last_dim_size: usize) -> Result<Tensor> {
    check_dims(dims, x.ndim())?;
    if dims.is_empty() {
        bail!(Runtime, "_fft_c2r must transform at least one axis");
    }
    if last_dim_size < 1 {
        bail!(
            Runtime,
            "Invalid number of data points ({last_dim_size}) specified"
        );
    }
    let out = c2r_kernel(x, dims, norm, last_dim_size)?;
    let dims: Vec<usize> = dims.to_vec();
    record(
        "FftC2RBackward0",
        &[x],
        &out,
        || (),
        move |_, _, g| {
            // The forward transform of the gradient; frequencies whose
            // mirror image lies outside the half the input holds stood for
            // two entries of the full spectrum, so they count twice.
            let gi = fft_r2c(g, &dims, norm, true)?;
            let last = *dims.last().expect("checked in forward");
            let half = gi.shape()[last];
            let doubled = g.shape()[last].saturating_sub(half);
            if doubled == 0 {
                return Ok(grads![Some(gi)]);
            }
            let weights: Vec<f64> = (0..half)
                .map(|k| if (1..=doubled).contains(&k) { 2.0 } else { 1.0 })
                .collect();
            let mut shape = vec![1usize; gi.ndim() - last];
            shape[0] = half;
            let w = try_cast(&Tensor::from_vec(weights, &shape)?, gi.dtype().to_real())?;
            Ok(grads![Some(mul(&gi, &w)?)])
        },
    );
    Ok(out)
}

/// `dim` of an `ndim`-dim tensor; a 0-dim tensor has none to transform.
fn fft_dim(dim: i64, ndim: usize) -> Result<usize> {
    if ndim == 0 {
        bail!(
            Index,
            "Dimension specified as {dim} but tensor has no dimensions"
        );
    }
    wrap_dim(dim, ndim)
}

/// PyTorch's `promote_tensor_fft`: integers become the default float
/// dtype, and real tensors complex when `require_complex`.
fn promote(x: &Tensor, require_complex: bool) -> Result<Tensor> {
    let d = x.dtype();
    if d.is_complex() {
        return Ok(x.clone());
    }
    let float = if d.is_floating_point() {
        d
    } else {
        DType::default_float()
    };
    let target = if require_complex {
        float.to_complex()
    } else {
        float
    };
    to_dtype(x, target)
}

/// PyTorch's `resize_fft_input`: each of `dims` trimmed (a slice) or
/// zero-padded at the end (`constant_pad_nd`) to its size in `sizes`.
fn resize(x: &Tensor, dims: &[usize], sizes: &[usize]) -> Result<Tensor> {
    let ndim = x.ndim();
    let mut t = x.clone();
    let mut pads = vec![0i64; 2 * ndim];
    let mut must_pad = false;
    for (&d, &size) in dims.iter().zip(sizes) {
        let have = t.shape()[d];
        if have < size {
            must_pad = true;
            pads[2 * (ndim - 1 - d) + 1] = (size - have) as i64;
        } else if have > size {
            t = slice(&t, d, 0, size, 1)?;
        }
    }
    if must_pad {
        pad(&t, &pads, "constant", None)
    } else {
        Ok(t)
    }
}

fn check_points(n: i64) -> Result<usize> {
    if n < 1 {
        bail!(Runtime, "Invalid number of data points ({n}) specified");
    }
    Ok(n as usize)
}

/// The signal length along `d`: `n` when given (the input resized to it),
/// else the input's own.
fn one_dim_input(x: &Tensor, n: Option<i64>, d: usize) -> Result<Tensor> {
    let points = check_points(n.unwrap_or(x.shape()[d] as i64))?;
    match n {
        Some(_) => resize(x, &[d], &[points]),
        None => Ok(x.clone()),
    }
}

/// `torch.fft.fft` (`forward`) and `torch.fft.ifft`: a real input takes
/// the two-sided real transform, as in PyTorch.
fn c2c_1d(
    x: &Tensor,
    n: Option<i64>,
    dim: i64,
    norm: Option<&str>,
    forward: bool,
) -> Result<Tensor> {
    if x.dtype().is_complex() {
        let d = fft_dim(dim, x.ndim())?;
        let x = one_dim_input(x, n, d)?;
        let norm = FftNorm::parse(norm, forward)?;
        return fft_c2c(&x, &[d], norm, forward);
    }
    let x = promote(x, false)?;
    let d = fft_dim(dim, x.ndim())?;
    let x = one_dim_input(&x, n, d)?;
    let norm = FftNorm::parse(norm, forward)?;
    let out = fft_r2c(&x, &[d], norm, false)?;
    if forward {
        Ok(out)
    } else {
        // The inverse transform of a real signal is the conjugate of its
        // (scaled) forward one.
        conj(&out)
    }
}

/// `torch.fft.fft(input, n, dim, norm)`.
pub fn fft(x: &Tensor, n: Option<i64>, dim: i64, norm: Option<&str>) -> Result<Tensor> {
    c2c_1d(x, n, dim, norm, true)
}

/// `torch.fft.ifft(input, n, dim, norm)`.
pub fn ifft(x: &Tensor, n: Option<i64>, dim: i64, norm: Option<&str>) -> Result<Tensor> {
    c2c_1d(x, n, dim, norm, false)
}

/// `torch.fft.rfft(input, n, dim, norm)`: the `n/2 + 1` non-negative
/// frequencies of the transform of a real signal.
pub fn rfft(x: &Tensor, n: Option<i64>, dim: i64, norm: Option<&str>) -> Result<Tensor> {
    if x.dtype().is_complex() {
        bail!(
            Runtime,
            "rfft expects a real input tensor, but got {}",
            x.dtype().scalar_type_name()
        );
    }
    let x = promote(x, false)?;
    let d = fft_dim(dim, x.ndim())?;
    let x = one_dim_input(&x, n, d)?;
    let norm = FftNorm::parse(norm, true)?;
    fft_r2c(&x, &[d], norm, true)
}

/// `torch.fft.irfft(input, n, dim, norm)`: the real signal of `n` points
/// (default `2 * (size - 1)`) whose non-negative frequencies `input` holds.
pub fn irfft(x: &Tensor, n: Option<i64>, dim: i64, norm: Option<&str>) -> Result<Tensor> {
    let x = promote(x, true)?;
    let d = fft_dim(dim, x.ndim())?;
    let points = check_points(n.unwrap_or(2 * (x.shape()[d] as i64 - 1)))?;
    let x = match n {
        Some(_) => resize(&x, &[d], &[points / 2 + 1])?,
        None => x,
    };
    let norm = FftNorm::parse(norm, false)?;
    fft_c2r(&x, &[d], norm, points)
}

/// PyTorch's `canonicalize_fft_shape_and_dim_args`: the dims to transform
/// and the signal size along each (`-1` in `s` meaning the input's).
fn shape_and_dims(
    x: &Tensor,
    s: Option<&[i64]>,
    dim: Option<&[i64]>,
) -> Result<(Vec<i64>, Vec<usize>)> {
    let ndim = x.ndim();
    let mut dims = Vec::new();
    if let Some(dim) = dim {
        for &d in dim {
            dims.push(fft_dim(d, ndim)?);
        }
        let mut sorted = dims.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            bail!(Runtime, "FFT dims must be unique");
        }
    }
    let shape: Vec<i64> = match s {
        Some(s) => {
            if dim.is_some_and(|d| d.len() != s.len()) {
                bail!(
                    Runtime,
                    "When given, dim and shape arguments must have the same length"
                );
            }
            if s.len() > ndim {
                bail!(
                    Runtime,
                    "Got shape with {} values but input tensor only has {} dimensions.",
                    s.len(),
                    ndim
                );
            }
            if dim.is_none() {
                dims = (ndim - s.len()..ndim).collect();
            }
            s.iter()
                .zip(&dims)
                .map(|(&n, &d)| if n == -1 { x.shape()[d] as i64 } else { n })
                .collect()
        }
        None => {
            if dim.is_none() {
                dims = (0..ndim).collect();
            }
            dims.iter().map(|&d| x.shape()[d] as i64).collect()
        }
    };
    for &n in &shape {
        check_points(n)?;
    }
    Ok((shape, dims))
}

fn as_sizes(shape: &[i64]) -> Vec<usize> {
    shape.iter().map(|&n| n as usize).collect()
}

/// `torch.fft.fftn` (and `fft2`).
pub fn fftn(
    x: &Tensor,
    s: Option<&[i64]>,
    dim: Option<&[i64]>,
    norm: Option<&str>,
) -> Result<Tensor> {
    c2c_n(x, s, dim, norm, true)
}

/// `torch.fft.ifftn` (and `ifft2`).
pub fn ifftn(
    x: &Tensor,
    s: Option<&[i64]>,
    dim: Option<&[i64]>,
    norm: Option<&str>,
) -> Result<Tensor> {
    c2c_n(x, s, dim, norm, false)
}

/// Complex transforms over `dim` (default: all, or the last `len(s)`),
/// each resized to its entry of `s`; inverse ones unless `forward`.
fn c2c_n(
    x: &Tensor,
    s: Option<&[i64]>,
    dim: Option<&[i64]>,
    norm: Option<&str>,
    forward: bool,
) -> Result<Tensor> {
    let (shape, dims) = shape_and_dims(x, s, dim)?;
    let x = promote(x, true)?;
    let x = resize(&x, &dims, &as_sizes(&shape))?;
    let norm = FftNorm::parse(norm, forward)?;
    fft_c2c(&x, &dims, norm, forward)
}

/// `torch.fft.rfftn` (and `rfft2`): the real transform over `dim`, the
/// last of which keeps its non-negative frequencies.
pub fn rfftn(
    x: &Tensor,
    s: Option<&[i64]>,
    dim: Option<&[i64]>,
    norm: Option<&str>,
) -> Result<Tensor> {
    if x.dtype().is_complex() {
        bail!(
            Runtime,
            "rfftn expects a real-valued input tensor, but got {}",
            x.dtype().scalar_type_name()
        );
    }
    let (shape, dims) = shape_and_dims(x, s, dim)?;
    if shape.is_empty() {
        bail!(Runtime, "rfftn must transform at least one axis");
    }
    let x = promote(x, false)?;
    let x = resize(&x, &dims, &as_sizes(&shape))?;
    let norm = FftNorm::parse(norm, true)?;
    fft_r2c(&x, &dims, norm, true)
}

/// `torch.fft.irfftn` (and `irfft2`): the inverse of [`rfftn`]; the last
/// transformed dim gets `s[-1]` points (default `2 * (size - 1)`).
pub fn irfftn(
    x: &Tensor,
    s: Option<&[i64]>,
    dim: Option<&[i64]>,
    norm: Option<&str>,
) -> Result<Tensor> {
    let (mut shape, dims) = shape_and_dims(x, s, dim)?;
    let (Some(&last), Some(last_shape)) = (dims.last(), shape.last_mut()) else {
        bail!(Runtime, "irfftn must transform at least one axis");
    };
    let points = match s.and_then(|s| s.last()) {
        Some(&n) if n != -1 => n,
        _ => 2 * (x.shape()[last] as i64 - 1),
    };
    let points = check_points(points)?;
    *last_shape = (points / 2 + 1) as i64;
    let x = promote(x, true)?;
    let x = resize(&x, &dims, &as_sizes(&shape))?;
    let norm = FftNorm::parse(norm, false)?;
    fft_c2r(&x, &dims, norm, points)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex64;

    fn naive_dft(x: &[Complex64], sign: f64) -> Vec<Complex64> {
        let n = x.len();
        (0..n)
            .map(|k| {
                x.iter()
                    .enumerate()
                    .map(|(j, v)| {
                        let a = sign * 2.0 * std::f64::consts::PI * (j * k) as f64 / n as f64;
                        v * Complex64::new(a.cos(), a.sin())
                    })
                    .sum()
            })
            .collect()
    }

    fn signal(n: usize) -> Vec<Complex64> {
        (0..n)
            .map(|i| Complex64::new((i as f64 * 0.7).sin(), (i as f64 * 1.3).cos()))
            .collect()
    }

    fn close(a: &[Complex64], b: &[Complex64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).norm() < 1e-9, "{x} vs {y}");
        }
    }

    #[test]
    fn c2c_matches_the_definition_along_any_dim() {
        let data = signal(15);
        let x = Tensor::from_vec(data.clone(), &[3, 5]).unwrap();
        let out = fft_c2c(&x, &[0], FftNorm::None, true).unwrap();
        let got = out.to_vec::<Complex64>();
        for col in 0..5 {
            let line: Vec<Complex64> = (0..3).map(|r| data[r * 5 + col]).collect();
            let want = naive_dft(&line, -1.0);
            let have: Vec<Complex64> = (0..3).map(|r| got[r * 5 + col]).collect();
            close(&have, &want);
        }
        let back = fft_c2c(&out, &[0], FftNorm::ByN, false).unwrap();
        close(&back.to_vec::<Complex64>(), &data);
    }

    #[test]
    fn r2c_and_c2r_round_trip_odd_and_even_lengths() {
        for n in [1usize, 2, 5, 8] {
            let re: Vec<f64> = (0..2 * n).map(|i| (i as f64 * 0.37).cos()).collect();
            let x = Tensor::from_vec(re.clone(), &[2, n]).unwrap();
            let half = fft_r2c(&x, &[1], FftNorm::None, true).unwrap();
            assert_eq!(half.shape(), &[2, n / 2 + 1]);
            let back = fft_c2r(&half, &[1], FftNorm::ByN, n).unwrap();
            for (a, b) in back.to_vec::<f64>().iter().zip(&re) {
                assert!((a - b).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn argument_errors_are_pytorchs() {
        let x = Tensor::zeros(&[4], DType::Float32);
        let err = |r: Result<Tensor>| r.unwrap_err().to_string();
        assert_eq!(
            err(fft(&x, Some(0), -1, None)),
            "Invalid number of data points (0) specified"
        );
        assert_eq!(
            err(fft(&x, None, -1, Some("bad"))),
            "Invalid normalization mode: \"bad\""
        );
        let z = Tensor::zeros(&[4], DType::Complex64);
        assert_eq!(
            err(rfft(&z, None, -1, None)),
            "rfft expects a real input tensor, but got ComplexFloat"
        );
        let scalar = Tensor::zeros(&[], DType::Float32);
        assert_eq!(
            err(fft(&scalar, None, -1, None)),
            "Dimension specified as -1 but tensor has no dimensions"
        );
    }
}
