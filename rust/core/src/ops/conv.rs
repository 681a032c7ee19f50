//! Sliding windows over images: `unfold` (im2col), its adjoint `fold`
//! (col2im), `conv2d` as `unfold` and a batched product, and the window
//! maxima of `max_pool2d`. `unfold` and `fold` are each other's gradient,
//! so everything built on them differentiates to any order.

use super::binary::add;
use super::check_real_float;
use super::copy::contiguous;
use super::matmul::matmul;
use super::num::{Arith, Real, RealFloat};
use super::pad::pad;
use super::scatter::scatter_add_zeros;
use super::shape::{permute, reshape, squeeze_dims, transpose, unsqueeze};
use crate::autograd::{formulas_differentiable, record};
use crate::tensor::storage::try_filled;
use crate::tensor::{Element, Tensor};
use crate::{bail, grads, with_real_float, Result};

/// A window's (kernel, dilation, padding, stride) along one axis.
type Axis = (usize, usize, usize, usize);

/// The geometry of a 2-d sliding window: kernel, dilation, padding and
/// stride, each as (rows, columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub kernel: (usize, usize),
    pub dilation: (usize, usize),
    pub padding: (usize, usize),
    pub stride: (usize, usize),
}

impl Window {
    fn check(&self, op: &str) -> Result<()> {
        let positive = |(a, b): (usize, usize)| a > 0 && b > 0;
        if !positive(self.kernel) {
            bail!(
                Runtime,
                "{op}: kernel size should be greater than zero, but got {:?}",
                self.kernel
            );
        }
        if !positive(self.dilation) {
            bail!(
                Runtime,
                "{op}: dilation should be greater than zero, but got {:?}",
                self.dilation
            );
        }
        if !positive(self.stride) {
            bail!(
                Runtime,
                "{op}: stride should be greater than zero, but got {:?}",
                self.stride
            );
        }
        Ok(())
    }

    /// Output positions along one axis of `size` input positions, or `None`
    /// when the dilated kernel does not fit the padded input. With
    /// `ceil_mode` (pooling) a last partial window counts, unless it would
    /// start in the right padding.
    fn out_len(
        size: usize,
        (kernel, dilation, padding, stride): Axis,
        ceil_mode: bool,
    ) -> Option<usize> {
        let span = dilation * (kernel - 1) + 1;
        let room = (size + 2 * padding).checked_sub(span)?;
        let len = match ceil_mode {
            true => room.div_ceil(stride) + 1,
            false => room / stride + 1,
        };
        Some(match ceil_mode && (len - 1) * stride >= size + padding {
            true => len - 1,
            false => len,
        })
    }

    /// (kernel, dilation, padding, stride) along the rows and the columns.
    fn axes(&self) -> (Axis, Axis) {
        let rows = (
            self.kernel.0,
            self.dilation.0,
            self.padding.0,
            self.stride.0,
        );
        let cols = (
            self.kernel.1,
            self.dilation.1,
            self.padding.1,
            self.stride.1,
        );
        (rows, cols)
    }

    /// The output length PyTorch's error reports along an axis: the floor
    /// of a negative quotient where the window does not fit.
    fn reported_len(
        size: usize,
        (kernel, dilation, padding, stride): Axis,
        ceil_mode: bool,
    ) -> i64 {
        let span = (dilation * (kernel - 1) + 1) as i64;
        let extra = if ceil_mode { stride as i64 - 1 } else { 0 };
        (size as i64 + 2 * padding as i64 - span + extra).div_euclid(stride as i64) + 1
    }

    /// Output (rows, columns) for an input of `(h, w)`.
    fn out_size(&self, (h, w): (usize, usize), ceil_mode: bool) -> Option<(usize, usize)> {
        let (rows, cols) = self.axes();
        Some((
            Self::out_len(h, rows, ceil_mode)?,
            Self::out_len(w, cols, ceil_mode)?,
        ))
    }
}

/// The `(n, c, h, w)` of a 4-d tensor.
fn dims4(t: &Tensor) -> (usize, usize, usize, usize) {
    let s = t.shape();
    (s[0], s[1], s[2], s[3])
}

/// How the columns of `unfold` are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Columns {
    /// `[n, c*kh*kw, L]`, as `F.unfold` returns them.
    PerImage,
    /// `[c*kh*kw, n*L]`: every image's windows side by side, so that a
    /// convolution group is one product (and so are both its gradients).
    Interleaved,
}

/// The output positions `q` in `0..out_len` whose input index
/// `q * stride + k * dilation - padding` falls inside `0..size`.
fn valid_range(
    k: usize,
    dilation: usize,
    padding: usize,
    stride: usize,
    size: usize,
    out_len: usize,
) -> std::ops::Range<usize> {
    let reach = k * dilation;
    let first = padding.saturating_sub(reach).div_ceil(stride);
    let last = match (size - 1 + padding).checked_sub(reach) {
        Some(room) => (room / stride + 1).min(out_len),
        None => 0,
    };
    first.min(last)..last
}

/// For window offset `(i, j)` over one `h x w` image, calls `visit(src, dst,
/// len)` for each output row that lands inside the image: its first input
/// index, its first output index and how many outputs do (inputs then run
/// `stride.1` apart).
fn for_each_run(
    win: Window,
    (i, j): (usize, usize),
    (h, w): (usize, usize),
    (oh, ow): (usize, usize),
    mut visit: impl FnMut(usize, usize, usize),
) {
    let cols = valid_range(j, win.dilation.1, win.padding.1, win.stride.1, w, ow);
    if cols.is_empty() {
        return;
    }
    let first_col = cols.start * win.stride.1 + j * win.dilation.1 - win.padding.1;
    for r in valid_range(i, win.dilation.0, win.padding.0, win.stride.0, h, oh) {
        let src_row = r * win.stride.0 + i * win.dilation.0 - win.padding.0;
        visit(src_row * w + first_col, r * ow + cols.start, cols.len());
    }
}

/// `unfold` of a contiguous `[n, c, h, w]` buffer; positions in the
/// padding stay zero. Each pass copies whole runs of a row.
fn unfold_kernel<T: Element + Arith>(
    x: &[T],
    (n, c, h, w): (usize, usize, usize, usize),
    win: Window,
    (oh, ow): (usize, usize),
    layout: Columns,
) -> Result<Vec<T>> {
    let (kw, area, l) = (win.kernel.1, win.kernel.0 * win.kernel.1, oh * ow);
    // A chunk holds one channel's rows: for one image, or for all of them.
    let images_per_chunk = match layout {
        Columns::PerImage => 1,
        Columns::Interleaved => n,
    };
    let chunk_len = images_per_chunk * area * l;
    let mut out = try_filled(T::zero(), n * c * area * l)?;
    crate::parallel::for_each_chunk_mut(&mut out, chunk_len, |start, chunk| {
        let index = start / chunk_len;
        let (channel, images) = match layout {
            Columns::PerImage => (index % c, index / c..index / c + 1),
            Columns::Interleaved => (index, 0..n),
        };
        for (slot, image) in images.enumerate() {
            let src = &x[(image * c + channel) * h * w..][..h * w];
            for k in 0..area {
                let at = (k * images_per_chunk + slot) * l;
                let row = &mut chunk[at..at + l];
                for_each_run(win, (k / kw, k % kw), (h, w), (oh, ow), |s, d, len| {
                    if win.stride.1 == 1 {
                        row[d..d + len].copy_from_slice(&src[s..s + len]);
                    } else {
                        let picked = src[s..].iter().step_by(win.stride.1);
                        for (o, &v) in row[d..d + len].iter_mut().zip(picked) {
                            *o = v;
                        }
                    }
                });
            }
        }
    });
    Ok(out)
}

/// `fold` of columns laid out as `layout` into a `[n, c, h, w]` buffer,
/// summing the values that land on one position.
fn fold_kernel<T: Element + Arith>(
    cols: &[T],
    (n, c, h, w): (usize, usize, usize, usize),
    win: Window,
    (oh, ow): (usize, usize),
    layout: Columns,
) -> Result<Vec<T>> {
    let (kw, area, l) = (win.kernel.1, win.kernel.0 * win.kernel.1, oh * ow);
    let mut out = try_filled(T::zero(), n * c * h * w)?;
    crate::parallel::for_each_chunk_mut(&mut out, h * w, |start, image_out| {
        let (image, channel) = (start / (h * w) / c, start / (h * w) % c);
        for k in 0..area {
            let row = channel * area + k;
            let at = match layout {
                Columns::PerImage => (image * c * area + row) * l,
                Columns::Interleaved => (row * n + image) * l,
            };
            let src = &cols[at..at + l];
            for_each_run(win, (k / kw, k % kw), (h, w), (oh, ow), |s, d, len| {
                let values = &src[d..d + len];
                if win.stride.1 == 1 {
                    // Contiguous runs: a loop over slices vectorises.
                    for (o, &v) in image_out[s..s + len].iter_mut().zip(values) {
                        *o = o.add(v);
                    }
                } else {
                    let targets = image_out[s..].iter_mut().step_by(win.stride.1);
                    for (o, &v) in targets.zip(values) {
                        *o = o.add(v);
                    }
                }
            });
        }
    });
    Ok(out)
}

/// The windows of a `[n, c, h, w]` input (checked by the caller) as
/// columns laid out as `layout` (`Im2ColBackward0`).
fn unfold_columns(input: &Tensor, win: Window, layout: Columns) -> Result<Tensor> {
    let dims = dims4(input);
    let Some(out) = win.out_size((dims.2, dims.3), false) else {
        bail!(
            Runtime,
            "Given input with spatial size ({}, {}), kernel_size={:?}, dilation={:?}, padding={:?}, calculated shape of the array of sliding blocks as non-positive",
            dims.2, dims.3, win.kernel, win.dilation, win.padding
        );
    };
    let (rows, l) = (dims.1 * win.kernel.0 * win.kernel.1, out.0 * out.1);
    let shape = match layout {
        Columns::PerImage => vec![dims.0, rows, l],
        Columns::Interleaved => vec![rows, dims.0 * l],
    };
    let x = contiguous(&input.detach())?;
    let result = with_real_float!(x.dtype(), T => {
        let columns = x.with_contiguous(|src| unfold_kernel::<T>(src, dims, win, out, layout))?;
        Tensor::from_vec(columns, &shape)?
    }, unreachable!("checked to be a real float"));
    let (n, size) = (dims.0, (dims.2, dims.3));
    record(
        "Im2ColBackward0",
        &[input],
        &result,
        || (),
        move |_, _, g| Ok(grads![Some(fold_columns(g, n, size, win, layout)?)]),
    );
    Ok(result)
}

/// Columns laid out as `layout`, for `n` images (checked by the caller),
/// summed back into `[n, c, h, w]` images (`Col2ImBackward0`).
fn fold_columns(
    cols: &Tensor,
    n: usize,
    size: (usize, usize),
    win: Window,
    layout: Columns,
) -> Result<Tensor> {
    let Some(out) = win.out_size(size, false) else {
        bail!(Runtime, "Given output_size={:?}, kernel_size={:?}, dilation={:?}, padding={:?}, stride={:?}, calculated shape of the array of sliding blocks as non-positive", size, win.kernel, win.dilation, win.padding, win.stride);
    };
    let per_channel = n * win.kernel.0 * win.kernel.1 * out.0 * out.1;
    let c = cols.numel().checked_div(per_channel).unwrap_or(0);
    let dims = (n, c, size.0, size.1);
    let x = contiguous(&cols.detach())?;
    let result = with_real_float!(x.dtype(), T => {
        let images = x.with_contiguous(|src| fold_kernel::<T>(src, dims, win, out, layout))?;
        Tensor::from_vec(images, &[n, c, size.0, size.1])?
    }, unreachable!("checked to be a real float"));
    record(
        "Col2ImBackward0",
        &[cols],
        &result,
        || (),
        move |_, _, g| Ok(grads![Some(unfold_columns(g, win, layout)?)]),
    );
    Ok(result)
}

/// `F.unfold`: the sliding `kh x kw` windows of a `[n, c, h, w]` input as
/// the columns of `[n, c*kh*kw, L]` (`Im2ColBackward0`).
pub fn unfold(input: &Tensor, win: Window) -> Result<Tensor> {
    win.check("im2col")?;
    check_real_float(input.dtype(), "im2col_out_cpu")?;
    if input.ndim() != 4 {
        bail!(Runtime, "Expected 4D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: {:?}", input.shape());
    }
    unfold_columns(input, win, Columns::PerImage)
}

/// `F.fold`: sums the columns of `[n, c*kh*kw, L]` back into a `[n, c, h,
/// w]` image, the adjoint of [`unfold`] (`Col2ImBackward0`).
pub fn fold(cols: &Tensor, output_size: (usize, usize), win: Window) -> Result<Tensor> {
    win.check("col2im")?;
    check_real_float(cols.dtype(), "col2im_out_cpu")?;
    let kernel_area = win.kernel.0 * win.kernel.1;
    if cols.ndim() != 3 || cols.shape()[1] % kernel_area != 0 {
        bail!(
            Runtime,
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)={} and kernel_size={:?}",
            cols.shape().get(1).copied().unwrap_or(0),
            win.kernel
        );
    }
    let Some(out) = win.out_size(output_size, false) else {
        bail!(Runtime, "Given output_size={:?}, kernel_size={:?}, dilation={:?}, padding={:?}, stride={:?}, calculated shape of the array of sliding blocks as non-positive", output_size, win.kernel, win.dilation, win.padding, win.stride);
    };
    if cols.shape()[2] != out.0 * out.1 {
        bail!(
            Runtime,
            "Given output_size={:?}, kernel_size={:?}, dilation={:?}, padding={:?}, stride={:?}, expected size of input's dimension 2 to match the calculated number of sliding blocks {} * {} = {}, but got input.size(2)={}.",
            output_size, win.kernel, win.dilation, win.padding, win.stride, out.0, out.1, out.0 * out.1, cols.shape()[2]
        );
    }
    fold_columns(cols, cols.shape()[0], output_size, win, Columns::PerImage)
}

/// `op` of an unbatched `[c, h, w]` input, run as a batch of one.
fn as_batch_of_one(input: &Tensor, op: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<Tensor> {
    squeeze_dims(&op(&unsqueeze(input, 0)?)?, &[0])
}

/// `out` (`[n, channels, h, w]`) plus a bias per channel, if any.
fn add_channel_bias(out: Tensor, bias: Option<&Tensor>, channels: usize) -> Result<Tensor> {
    match bias {
        Some(b) => add(&out, &reshape(b, &[1, channels as i64, 1, 1])?),
        None => Ok(out),
    }
}

/// A batched convolution's input and weight: real floats of one dtype, a
/// 4-d weight, at least one group. `kernel` names the op in the dtype error.
fn check_conv_operands(input: &Tensor, weight: &Tensor, groups: usize, kernel: &str) -> Result<()> {
    check_real_float(input.dtype(), kernel)?;
    if weight.ndim() != 4 {
        bail!(Runtime, "weight should have at least three dimensions");
    }
    if weight.dtype() != input.dtype() {
        bail!(
            Runtime,
            "Input type ({}) and weight type ({}) should be the same",
            input.dtype().scalar_type_name(),
            weight.dtype().scalar_type_name()
        );
    }
    if groups == 0 {
        bail!(Runtime, "non-positive groups is not supported");
    }
    Ok(())
}

/// `F.conv2d` (cross-correlation) of a `[n, c, h, w]` (or unbatched
/// `[c, h, w]`) input with a `[o, c/groups, kh, kw]` weight: the windows
/// of [`unfold`] multiplied by the weight, group by group, in one batched
/// product.
pub fn conv2d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: (usize, usize),
    padding: (usize, usize),
    dilation: (usize, usize),
    groups: usize,
) -> Result<Tensor> {
    if !matches!(input.ndim(), 3 | 4) {
        bail!(
            Runtime,
            "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: {:?}",
            input.shape()
        );
    }
    if input.ndim() == 3 {
        return as_batch_of_one(input, |x| {
            conv2d(x, weight, bias, stride, padding, dilation, groups)
        });
    }
    check_conv_operands(input, weight, groups, "slow_conv2d_cpu")?;
    let (n, c, h, w) = dims4(input);
    let (o, cg, kh, kw) = dims4(weight);
    if cg * groups != c {
        bail!(
            Runtime,
            "Given groups={groups}, weight of size {:?}, expected input{:?} to have {} channels, but got {c} channels instead",
            weight.shape(), input.shape(), cg * groups
        );
    }
    if o % groups != 0 {
        bail!(Runtime, "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size {:?} instead", weight.shape());
    }
    if let Some(b) = bias {
        if b.shape() != [o] {
            bail!(Runtime, "Given weight of size {:?}, expected bias to be 1-dimensional with {o} elements, but got bias of size {:?} instead", weight.shape(), b.shape());
        }
    }
    let win = Window {
        kernel: (kh, kw),
        dilation,
        padding,
        stride,
    };
    win.check("conv2d")?;
    let Some((oh, ow)) = win.out_size((h, w), false) else {
        bail!(
            Runtime,
            "Calculated padded input size per channel: ({} x {}). Kernel size: ({} x {}). Kernel size can't be greater than actual input size",
            h + 2 * padding.0, w + 2 * padding.1, dilation.0 * (kh - 1) + 1, dilation.1 * (kw - 1) + 1
        );
    };
    crate::tensor::layout::check_numel(&[n, cg * groups, kh * kw, oh, ow])?;
    let (n, g, k, l) = (
        n as i64,
        groups as i64,
        (cg * kh * kw) as i64,
        (oh * ow) as i64,
    );
    // `[g, (c/g)*kh*kw, n*L]`: each group is one product whose gradients
    // are products too (the batch summed inside the weight's, not by a
    // reduction after it).
    let cols = reshape(
        &unfold_columns(input, win, Columns::Interleaved)?,
        &[g, k, n * l],
    )?;
    let kernels = reshape(weight, &[g, o as i64 / g, k])?;
    let out = reshape(&matmul(&kernels, &cols)?, &[g, o as i64 / g, n, l])?;
    let out = reshape(
        &permute(&out, &[2, 0, 1, 3])?,
        &[n, o as i64, oh as i64, ow as i64],
    )?;
    add_channel_bias(out, bias, o)
}

/// The geometry of a transposed convolution (its kernel is the weight's),
/// each as (rows, columns): `output_padding` adds rows and columns at the
/// output's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transposed {
    pub stride: (usize, usize),
    pub padding: (usize, usize),
    pub output_padding: (usize, usize),
    pub dilation: (usize, usize),
}

/// `F.conv_transpose2d` of a `[n, c, h, w]` (or unbatched `[c, h, w]`)
/// input with a `[c, o/groups, kh, kw]` weight, the adjoint of `conv2d`:
/// each input position spreads its kernel-sized block of outputs. The
/// blocks of every image are one product per group (images side by side,
/// so that the weight's gradient is one product too), and `fold` adds the
/// overlapping blocks, cropping the padding as it goes.
pub fn conv_transpose2d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    shape: Transposed,
    groups: usize,
) -> Result<Tensor> {
    if !matches!(input.ndim(), 3 | 4) {
        bail!(
            Runtime,
            "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of size: {:?}",
            input.shape()
        );
    }
    if input.ndim() == 3 {
        return as_batch_of_one(input, |x| conv_transpose2d(x, weight, bias, shape, groups));
    }
    check_conv_operands(input, weight, groups, "slow_conv_transpose2d_cpu")?;
    let (n, c, h, w) = dims4(input);
    let (wc, per_group, kh, kw) = dims4(weight);
    if wc % groups != 0 {
        bail!(Runtime, "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size [{:?}] instead", weight.shape());
    }
    if wc == 0 {
        bail!(Runtime, "Given groups={groups}, expected weight to be at least 1 at dimension 0, but got weight of size {:?} instead", weight.shape());
    }
    if wc != c {
        bail!(
            Runtime,
            "Given transposed=1, weight of size {:?}, expected input{:?} to have {wc} channels, but got {c} channels instead",
            weight.shape(), input.shape()
        );
    }
    if h == 0 || w == 0 {
        bail!(
            Runtime,
            "Only zero batch or zero channel inputs are supported, but got input shape: {:?}",
            input.shape()
        );
    }
    let o = per_group * groups;
    if let Some(b) = bias {
        if b.shape() != [o] {
            bail!(Runtime, "Given transposed=1, weight of size {:?}, expected bias to be 1-dimensional with {o} elements, but got bias of size {:?} instead", weight.shape(), b.shape());
        }
    }
    let win = Window {
        kernel: (kh, kw),
        dilation: shape.dilation,
        padding: shape.padding,
        stride: shape.stride,
    };
    let extra = shape.output_padding;
    win.check("conv_transpose2d")?;
    if (extra.0 >= win.stride.0 && extra.0 >= win.dilation.0)
        || (extra.1 >= win.stride.1 && extra.1 >= win.dilation.1)
    {
        bail!(
            Runtime,
            "output padding must be smaller than either stride or dilation, but got output_padding_height: {} output_padding_width: {} stride_height: {} stride_width: {} dilation_height: {} dilation_width: {}",
            extra.0, extra.1, win.stride.0, win.stride.1, win.dilation.0, win.dilation.1
        );
    }
    // The blocks' whole extent, before the padding is cropped.
    let full =
        |size: usize, k: usize, d: usize, s: usize, e: usize| (size - 1) * s + d * (k - 1) + 1 + e;
    let full = (
        full(h, kh, win.dilation.0, win.stride.0, extra.0),
        full(w, kw, win.dilation.1, win.stride.1, extra.1),
    );
    let (Some(oh), Some(ow)) = (
        full.0.checked_sub(2 * win.padding.0).filter(|&s| s > 0),
        full.1.checked_sub(2 * win.padding.1).filter(|&s| s > 0),
    ) else {
        bail!(
            Runtime,
            "Given input size per channel: ({h} x {w}). Calculated output size per channel: ({} x {}). Output size is too small",
            full.0 as i64 - 2 * win.padding.0 as i64,
            full.1 as i64 - 2 * win.padding.1 as i64
        );
    };
    let (g, cg, l) = (groups as i64, (c / groups) as i64, (n * h * w) as i64);
    // `[g, c/g, n*h*w]`: every image's positions side by side per channel.
    let images = reshape(&permute(input, &[1, 0, 2, 3])?, &[g, cg, l])?;
    let kernels = transpose(
        &reshape(weight, &[g, cg, (per_group * kh * kw) as i64])?,
        1,
        2,
    )?;
    let blocks = reshape(&matmul(&kernels, &images)?, &[(o * kh * kw) as i64, l])?;
    if n == 0 {
        let empty = reshape(&blocks, &[0, o as i64, oh as i64, ow as i64])?;
        return add_channel_bias(empty, bias, o);
    }
    // fold with the padding crops it in place, when the output padding
    // leaves the number of windows at `h x w` (it is below the stride);
    // otherwise the whole extent is folded and then cropped.
    let out = if extra.0 < win.stride.0 && extra.1 < win.stride.1 {
        fold_columns(&blocks, n, (oh, ow), win, Columns::Interleaved)?
    } else {
        let unpadded = Window {
            padding: (0, 0),
            ..win
        };
        let whole = (full.0 - extra.0, full.1 - extra.1);
        let blocks = fold_columns(&blocks, n, whole, unpadded, Columns::Interleaved)?;
        let (p, e) = (win.padding, extra);
        let crop = |p: usize, e: usize| [-(p as i64), e as i64 - p as i64];
        let [top, bottom] = crop(p.0, e.0);
        let [left, right] = crop(p.1, e.1);
        pad(&blocks, &[left, right, top, bottom], "constant", None)?
    };
    add_channel_bias(out, bias, o)
}

/// `F.max_pool2d` of a `[n, c, h, w]` (or `[c, h, w]`) input: each window's
/// maximum (NaN wins, the first of equal maxima) and its flat position in
/// the input plane (`return_indices`), and `MaxPool2DWithIndicesBackward0`,
/// which adds each output's gradient at that position. Padding is -inf.
pub fn max_pool2d(input: &Tensor, win: Window, ceil_mode: bool) -> Result<(Tensor, Tensor)> {
    if !matches!(input.ndim(), 3 | 4) {
        bail!(
            Runtime,
            "non-empty 3D or 4D (batch mode) tensor expected for input"
        );
    }
    if input.ndim() == 3 {
        let (out, at) = max_pool2d(&unsqueeze(input, 0)?, win, ceil_mode)?;
        return Ok((squeeze_dims(&out, &[0])?, squeeze_dims(&at, &[0])?));
    }
    win.check("max_pool2d")?;
    check_real_float(input.dtype(), "max_pool2d")?;
    if 2 * win.padding.0 > win.kernel.0 || 2 * win.padding.1 > win.kernel.1 {
        bail!(Runtime, "pad should be at most half of effective kernel size, but got pad={:?}, kernel_size={:?} and dilation={:?}", win.padding, win.kernel, win.dilation);
    }
    let (n, c, h, w) = dims4(input);
    let Some((oh, ow)) = win.out_size((h, w), ceil_mode) else {
        let (rows, cols) = win.axes();
        let (oh, ow) = (
            Window::reported_len(h, rows, ceil_mode),
            Window::reported_len(w, cols, ceil_mode),
        );
        bail!(Runtime, "Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output size is too small");
    };
    let x = contiguous(&input.detach())?;
    let (out, positions) = with_real_float!(x.dtype(), T => {
        let (values, positions) =
            x.with_contiguous(|src| window_max::<T>(src, (n, c, h, w), win, (oh, ow)))?;
        (Tensor::from_vec(values, &[n, c, oh, ow])?, positions)
    }, unreachable!("checked to be a real float"));
    let index = Tensor::from_vec(positions, &[n, c, oh * ow])?;
    let at = reshape(&index, &[n as i64, c as i64, oh as i64, ow as i64])?;
    record(
        "MaxPool2DWithIndicesBackward0",
        &[input],
        &out,
        || (),
        move |_, _, g| {
            let dx = match formulas_differentiable() {
                // `create_graph`: an op whose own gradient is a gather.
                true => scatter_add_zeros(
                    &reshape(g, &[n as i64, c as i64, (oh * ow) as i64])?,
                    2,
                    &index,
                    &[n, c, h * w],
                )
                .and_then(|dx| reshape(&dx, &[n as i64, c as i64, h as i64, w as i64]))?,
                false => scatter_to_windows(g, &index, &[n, c, h, w])?,
            };
            Ok(grads![Some(dx)])
        },
    );
    Ok((out, at))
}

/// Each image's output gradient added into a zero image of `shape` (the
/// input's) at its window maxima's `positions`.
fn scatter_to_windows(g: &Tensor, positions: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let plane = shape[2] * shape[3];
    let g = contiguous(g)?;
    let per_image = positions.shape()[2];
    with_real_float!(g.dtype(), T => {
        let mut dx = try_filled(T::zero(), shape[0] * shape[1] * plane)?;
        g.with_contiguous(|gs: &[T]| positions.with_contiguous(|at: &[i64]| {
            let images_per_chunk = (16384 / plane.max(1)).max(1);
            crate::parallel::for_each_chunk_mut(&mut dx, images_per_chunk * plane, |start, chunk| {
                let first = start / plane;
                for (k, image) in chunk.chunks_exact_mut(plane).enumerate() {
                    let from = (first + k) * per_image..(first + k + 1) * per_image;
                    for (&p, &v) in at[from.clone()].iter().zip(&gs[from]) {
                        image[p as usize] = image[p as usize].add(v);
                    }
                }
            })
        }));
        Tensor::from_vec(dx, shape)
    }, unreachable!("a float gradient"))
}

/// The kernel offsets `k` in `0..kernel` whose input index `o * stride +
/// k * dilation - padding` falls inside `0..size`, for output position `o`.
fn kernel_range(
    o: usize,
    win_axis: (usize, usize, usize, usize),
    size: usize,
) -> std::ops::Range<usize> {
    let (kernel, dilation, padding, stride) = win_axis;
    let start = o * stride;
    let first = padding.saturating_sub(start).div_ceil(dilation);
    let last = match (size - 1 + padding).checked_sub(start) {
        Some(room) => (room / dilation + 1).min(kernel),
        None => 0,
    };
    first.min(last)..last
}

/// `(v, at)` if `v`, met after `best` in a window's row-major order, takes
/// its place, else `best`: a greater value, or any NaN (the first of equal
/// maxima and the last NaN win, as in PyTorch).
#[inline(always)]
fn keep_max<T: RealFloat + Real, I: Copy>(best: (T, I), v: T, at: I) -> (T, I) {
    let take = v.is_nan() | (!best.0.is_nan() & (v > best.0));
    (
        if take { v } else { best.0 },
        if take { at } else { best.1 },
    )
}

/// Per output position of every `(n, c)` image, its window's maximum and
/// the flat `h*w` index of it, in two separable passes: each input row's
/// maxima over the windows' columns, then the maxima of those over the
/// windows' rows. Both run over output columns in the inner loop, so no
/// inner step waits on the last.
fn window_max<T: RealFloat + Real>(
    x: &[T],
    (n, c, h, w): (usize, usize, usize, usize),
    win: Window,
    (oh, ow): (usize, usize),
) -> Result<(Vec<T>, Vec<i64>)> {
    let rows_axis = (win.kernel.0, win.dilation.0, win.padding.0, win.stride.0);
    let cols_axis = (win.kernel.1, win.dilation.1, win.padding.1, win.stride.1);
    // Per kernel column, the output columns it reaches inside the image;
    // per output row, the kernel rows inside it. With dilation a window can
    // lie wholly in the padding: its maximum is -inf, placed at the nearest
    // input.
    let col_outputs: Vec<_> = (0..win.kernel.1)
        .map(|k| valid_range(k, win.dilation.1, win.padding.1, win.stride.1, w, ow))
        .collect();
    let row_kernels: Vec<_> = (0..oh).map(|r| kernel_range(r, rows_axis, h)).collect();
    // Each output column's first input inside the image: where its window's
    // maximum starts (PyTorch's index when all of it is -inf).
    let first_col: Vec<usize> = (0..ow)
        .map(|q| {
            (q * win.stride.1 + kernel_range(q, cols_axis, w).start * win.dilation.1)
                .saturating_sub(win.padding.1)
                .min(w - 1)
        })
        .collect();
    let lowest = T::from_f64(f64::NEG_INFINITY);
    let plane = oh * ow;
    let (mut values, mut positions) = (
        try_filled(T::zero(), n * c * plane)?,
        try_filled(0i64, n * c * plane)?,
    );
    let images_per_chunk = (4096 / plane.max(1)).max(1);
    let chunk = images_per_chunk * plane;
    let pieces = values.chunks_mut(chunk).zip(positions.chunks_mut(chunk));
    crate::parallel::for_each_item_mut(pieces, |i, (vals, poss)| {
        // One image's row maxima, `[h, ow]`, and their flat input indices.
        let (mut row_max, mut row_at) = (vec![lowest; h * ow], vec![0usize; h * ow]);
        let images = vals.chunks_mut(plane).zip(poss.chunks_mut(plane));
        for (k, (image_vals, image_poss)) in images.enumerate() {
            let image = &x[(i * images_per_chunk + k) * h * w..][..h * w];
            for (y, row) in image.chunks_exact(w).enumerate() {
                let maxima = &mut row_max[y * ow..(y + 1) * ow];
                let at = &mut row_at[y * ow..(y + 1) * ow];
                maxima.fill(lowest);
                for (a, &col) in at.iter_mut().zip(&first_col) {
                    *a = y * w + col;
                }
                for (kc, qs) in col_outputs.iter().enumerate() {
                    let offset = kc * win.dilation.1;
                    for q in qs.clone() {
                        let col = q * win.stride.1 + offset - win.padding.1;
                        (maxima[q], at[q]) = keep_max((maxima[q], at[q]), row[col], y * w + col);
                    }
                }
            }
            let outputs = image_vals
                .chunks_exact_mut(ow)
                .zip(image_poss.chunks_exact_mut(ow));
            for (r, (vals_row, poss_row)) in outputs.enumerate() {
                let input_row = |kr: usize| r * win.stride.0 + kr * win.dilation.0 - win.padding.0;
                let kernels = row_kernels[r].clone();
                if kernels.is_empty() {
                    let nearest = (r * win.stride.0).saturating_sub(win.padding.0).min(h - 1);
                    vals_row.fill(lowest);
                    for (p, &col) in poss_row.iter_mut().zip(&first_col) {
                        *p = (nearest * w + col) as i64;
                    }
                    continue;
                }
                let top = input_row(kernels.start) * ow;
                vals_row.copy_from_slice(&row_max[top..top + ow]);
                for (p, &a) in poss_row.iter_mut().zip(&row_at[top..top + ow]) {
                    *p = a as i64;
                }
                for kr in kernels.skip(1) {
                    let y = input_row(kr) * ow;
                    let row = row_max[y..y + ow].iter().zip(&row_at[y..y + ow]);
                    for ((v, p), (&m, &a)) in vals_row.iter_mut().zip(poss_row.iter_mut()).zip(row)
                    {
                        (*v, *p) = keep_max((*v, *p), m, a as i64);
                    }
                }
            }
        }
    });
    Ok((values, positions))
}
