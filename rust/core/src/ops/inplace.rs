//! In-place ops (`add_`, `mul_`, `exp_`, `fill_`, `copy_`, ...).
//!
//! Without autograd an in-place op writes straight into the storage; the
//! optimizer's arithmetic (`add_`, `sub_`, `mul_`, `div_` on floats) runs as
//! fused slice loops. While recording, the op runs out of place on a clone
//! of the old value, the result is written back, and the op's node becomes
//! the tensor's `grad_fn` (on a view, the base's `grad_fn` becomes
//! `CopySlices`, see `autograd::views`); the version bump makes any node
//! that saved the old value fail its check at backward, as in PyTorch.

use super::binary::add_scaled;
use super::copy::{clone, to_dtype, try_cast};
use super::elementwise::{lock_pair, update, PARALLEL_MIN_ELEMENTS};
use super::scatter::{scatter_add, scatter_from, scatter_reduce, Reduction, Source};
use super::unary::{where_, zero_of, zeros_like};
use crate::autograd::{forward, is_grad_enabled, record, views};
use crate::tensor::layout::{broadcast_shapes, fmt_shape};
use crate::tensor::{DType, Element, Layout, Scalar, Tensor};
use crate::{bail, grads, with_dtype, Result};
use std::sync::Arc;

const CHUNK: usize = 1 << 14;

/// Whether an in-place write to `t` must be recorded for autograd; errors
/// where PyTorch refuses the write.
fn must_record(t: &Tensor, others: &[&Tensor]) -> Result<bool> {
    t.check_inference_write()?;
    check_no_overlap(t)?;
    for o in others {
        check_no_partial_overlap(t, o)?;
    }
    // A write that changes a tangent takes the recording path, which
    // computes the new tangent from the op's formula.
    let tangents =
        || forward::is_active() && (forward::any_tangent(&[t]) || forward::any_tangent(others));
    if !is_grad_enabled() {
        return Ok(tangents());
    }
    let record = t.requires_grad() || others.iter().any(|o| o.requires_grad());
    if record {
        views::check_inplace(t)?;
    }
    Ok(record || tangents())
}

/// PyTorch refuses to write through a layout where several elements share
/// one memory location (an expanded dimension).
fn check_no_overlap(t: &Tensor) -> Result<()> {
    let l = t.layout();
    if l.shape
        .iter()
        .zip(&l.strides)
        .any(|(&n, &s)| n > 1 && s == 0)
    {
        bail!(
            Runtime,
            "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation."
        );
    }
    Ok(())
}

/// The storage range `[start, end)` a layout covers when its elements fill
/// it exactly once (a permutation of a contiguous layout), else `None`.
fn dense_range(l: &Layout) -> Option<(usize, usize)> {
    let mut dims: Vec<(isize, usize)> = l
        .strides
        .iter()
        .zip(&l.shape)
        .filter(|&(_, &n)| n != 1)
        .map(|(&s, &n)| (s, n))
        .collect();
    dims.sort_unstable();
    let mut expected = 1isize;
    for (s, n) in dims {
        if s != expected {
            return None;
        }
        expected *= n as isize;
    }
    Some((l.offset, l.offset + l.numel()))
}

/// PyTorch refuses an operand that shares some, but not all, of the
/// memory written to (`x.mul_(x.t())`): the op would read values it has
/// already overwritten.
fn check_no_partial_overlap(t: &Tensor, other: &Tensor) -> Result<()> {
    if t.same(other) || !Arc::ptr_eq(t.storage(), other.storage()) {
        return Ok(());
    }
    let (Some(a), Some(b)) = (dense_range(t.layout()), dense_range(other.layout())) else {
        return Ok(());
    };
    let full = a == b && t.strides() == other.strides();
    if !full && a.0 < b.1 && b.0 < a.1 && t.numel() > 0 && other.numel() > 0 {
        bail!(
            Runtime,
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation."
        );
    }
    Ok(())
}

/// PyTorch's `canCast`: no complex to real, float to integer, or to bool.
fn can_cast(from: DType, to: DType) -> bool {
    !(from.is_complex() && !to.is_complex()
        || from.is_floating_point() && !to.is_differentiable()
        || from != DType::Bool && to == DType::Bool)
}

/// The result of an op may be written into `t`: same shape, castable dtype.
fn check_result(t: &Tensor, shape: &[usize], dtype: DType) -> Result<()> {
    if shape != t.shape() {
        bail!(
            Runtime,
            "output with shape {} doesn't match the broadcast shape {}",
            fmt_shape(t.shape()),
            fmt_shape(shape)
        );
    }
    match can_cast(dtype, t.dtype()) {
        true => Ok(()),
        false => Err(cast_error(dtype, t.dtype())),
    }
}

fn cast_error(from: DType, to: DType) -> crate::Error {
    crate::Error::Runtime(format!(
        "result type {} can't be cast to the desired output type {}",
        DType::scalar_type_name(from),
        DType::scalar_type_name(to)
    ))
}

/// Copies `src`'s values (broadcast, converted) into `t` and bumps its version.
fn write(t: &Tensor, src: &Tensor) -> Result<()> {
    let src = try_cast(src, t.dtype())?;
    with_dtype!(t.dtype(), T => update::<T, T>(t, &src, |_, s| s))
}

/// Runs `op` (the out-of-place form, given the old value) as an in-place
/// update of `t`; `others` are the op's other tensor operands. On a view
/// of a tensor with history, the base's history becomes `CopySlices`.
fn apply(t: &Tensor, others: &[&Tensor], op: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<()> {
    if !must_record(t, others)? {
        let out = op(&t.detach())?;
        check_result(t, out.shape(), out.dtype())?;
        return write(t, &out);
    }
    // Cloning links the new node to the old history (CloneBackward0).
    let old = clone(t)?;
    let out = op(&old)?;
    check_result(t, out.shape(), out.dtype())?;
    let out = to_dtype(&out, t.dtype())?;
    write(t, &out)?;
    if !out.same(&old) {
        // A node that saved its result saved `out`: `t` now holds it.
        out.follow_version_of(t);
    }
    let forward = forward::is_active();
    match t.view_base() {
        // The base's history is rewritten; the view's (and every other
        // view's) is regenerated from it when next needed.
        Some(base) if forward && forward::shares_tangent(t, &base) => {
            forward::without_tangents(|| views::copy_slices(&base, t, &out))?
        }
        Some(base) => views::copy_slices(&base, t, &out)?,
        None => {
            if let Some(node) = out.grad_fn() {
                t.set_grad_fn(node, out.output_nr());
            }
        }
    }
    if forward {
        forward::written(t, &out)?;
    }
    Ok(())
}

/// `d = f(d, s)` with `src` in `t`'s dtype: slice loops when `t` is
/// contiguous and `src` is contiguous of the same shape (or one element) on
/// another storage, else the generic strided kernel. `zip`, if given,
/// replaces the element loop over equal-shaped slices (`f` must agree).
fn update_fast<T: Element>(
    t: &Tensor,
    src: &Tensor,
    f: impl Fn(T, T) -> T + Sync + Send,
    zip: Option<ZipKernel<T>>,
) -> Result<()> {
    let (lt, ls) = (t.layout(), src.layout());
    let direct = lt.is_contiguous()
        && !t.storage().same_buffer(src.storage())
        && (ls.numel() == 1 || ls.is_contiguous() && ls.shape == lt.shape);
    if !direct {
        return update(t, src, f);
    }
    let n = lt.numel();
    let (s, mut d) = lock_pair::<T, T>(src, t)?;
    let dst = &mut d[lt.offset..lt.offset + n];
    let par = n >= PARALLEL_MIN_ELEMENTS;
    if ls.numel() == 1 {
        let y = s[ls.offset];
        if par {
            crate::parallel::for_each_span_mut(dst, CHUNK, |_, c| {
                c.iter_mut().for_each(|x| *x = f(*x, y))
            });
        } else {
            dst.iter_mut().for_each(|x| *x = f(*x, y));
        }
    } else {
        let srcs = &s[ls.offset..ls.offset + n];
        let run = |c: &mut [T], sc: &[T]| match zip {
            Some(k) => k(c, sc),
            None => c.iter_mut().zip(sc).for_each(|(x, &y)| *x = f(*x, y)),
        };
        if par {
            crate::parallel::for_each_span_mut(dst, CHUNK, |start, c| {
                run(c, &srcs[start..start + c.len()])
            });
        } else {
            run(dst, srcs);
        }
    }
    drop((s, d));
    t.bump_version();
    Ok(())
}

/// The fused no-autograd path of float `add_`/`sub_`/`mul_`/`div_`, if it
/// applies: `t` real floating and the operands' result type is `t`'s dtype.
fn arith_fast(t: &Tensor, other: &Tensor, op: Arith2, alpha: f64) -> Option<Result<()>> {
    let dtype = t.dtype();
    if !matches!(dtype, DType::Float32 | DType::Float64) || super::result_type(&[t, other]) != dtype
    {
        return None;
    }
    if let Err(e) = check_result(t, &broadcast_shapes(t.shape(), other.shape()).ok()?, dtype) {
        return Some(Err(e));
    }
    let src = match try_cast(other, dtype) {
        Ok(src) => src,
        Err(e) => return Some(Err(e)),
    };
    macro_rules! run {
        ($T:ty) => {{
            let a = alpha as $T;
            match op {
                // PyTorch's CPU add with alpha is one fused multiply-add.
                Arith2::Add if alpha == 1.0 => update_fast::<$T>(t, &src, |d, s| d + s, None),
                Arith2::Add => {
                    let axpy = move |c: &mut [$T], sc: &[$T]| <$T as Axpy>::axpy(c, sc, a);
                    update_fast::<$T>(t, &src, move |d, s| s.mul_add(a, d), Some(&axpy))
                }
                Arith2::Mul => update_fast::<$T>(t, &src, |d, s| d * s, None),
                Arith2::Div => update_fast::<$T>(t, &src, |d, s| d / s, None),
            }
        }};
    }
    Some(match dtype {
        DType::Float32 => run!(f32),
        _ => run!(f64),
    })
}

type ZipKernel<'a, T> = &'a (dyn Fn(&mut [T], &[T]) + Sync);

/// `dst += a * src` as one fused multiply-add per element (PyTorch's CPU
/// `add` with alpha). Without the FMA target feature `mul_add` is a libm
/// call per element (measured ~10x slower on 1M floats), so the loop is
/// compiled a second time with FMA enabled and picked at run time.
trait Axpy: Sized {
    fn axpy(dst: &mut [Self], src: &[Self], a: Self);
}

macro_rules! axpy_impl {
    ($($t:ty => $fma:ident),*) => {$(
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "fma")]
        unsafe fn $fma(dst: &mut [$t], src: &[$t], a: $t) {
            dst.iter_mut().zip(src).for_each(|(d, &s)| *d = s.mul_add(a, *d));
        }
        impl Axpy for $t {
            fn axpy(dst: &mut [$t], src: &[$t], a: $t) {
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("fma") {
                    // SAFETY: the CPU supports FMA, checked just above; the
                    // function is otherwise safe slice code.
                    unsafe { $fma(dst, src, a) };
                    return;
                }
                dst.iter_mut().zip(src).for_each(|(d, &s)| *d = s.mul_add(a, *d));
            }
        }
    )*};
}
axpy_impl!(f32 => axpy_fma_f32, f64 => axpy_fma_f64);

#[derive(Clone, Copy)]
enum Arith2 {
    Add,
    Mul,
    Div,
}

fn fast_ok(t: &Tensor, other: &Tensor) -> Result<bool> {
    Ok(!must_record(t, &[other])?)
}

/// `t.add_(other, alpha=alpha)`.
pub fn add_(t: &Tensor, other: &Tensor, alpha: Scalar) -> Result<()> {
    if fast_ok(t, other)? && !matches!(alpha, Scalar::Complex(_)) {
        if let Some(r) = arith_fast(t, other, Arith2::Add, alpha.as_f64()) {
            return r;
        }
    }
    apply(t, &[other], |s| add_scaled(s, other, alpha))
}

/// `t.sub_(other, alpha=alpha)`.
pub fn sub_(t: &Tensor, other: &Tensor, alpha: Scalar) -> Result<()> {
    super::binary::check_sub(t, other)?;
    if fast_ok(t, other)? && !matches!(alpha, Scalar::Complex(_)) {
        if let Some(r) = arith_fast(t, other, Arith2::Add, -alpha.as_f64()) {
            return r;
        }
    }
    apply(t, &[other], |s| super::binary::sub_scaled(s, other, alpha))
}

pub fn mul_(t: &Tensor, other: &Tensor) -> Result<()> {
    if fast_ok(t, other)? {
        if let Some(r) = arith_fast(t, other, Arith2::Mul, 1.0) {
            return r;
        }
    }
    apply(t, &[other], |s| super::binary::mul(s, other))
}

pub fn div_(t: &Tensor, other: &Tensor) -> Result<()> {
    if fast_ok(t, other)? {
        if let Some(r) = arith_fast(t, other, Arith2::Div, 1.0) {
            return r;
        }
    }
    apply(t, &[other], |s| super::binary::div(s, other))
}

/// An in-place form of any binary op (`pow_`, `remainder_`, ...).
pub fn binary_(
    t: &Tensor,
    other: &Tensor,
    op: fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> Result<()> {
    apply(t, &[other], |s| {
        op(s, other).map_err(|e| {
            // PyTorch checks that the result type can be written back before
            // it runs the kernel, so an op that refuses that type (a shift
            // of floats) reports the cast, as there.
            let dtype = super::result_type(&[t, other]);
            match can_cast(dtype, t.dtype()) {
                true => e,
                false => cast_error(dtype, t.dtype()),
            }
        })
    })
}

/// An in-place form of any unary op (`exp_`, `neg_`, `clamp_`, ...).
pub fn unary_(t: &Tensor, op: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<()> {
    apply(t, &[], op)
}

/// An in-place op with further tensor operands that `op` captures
/// (`clamp_` with tensor bounds); they are recorded as its inputs.
pub fn nary_(
    t: &Tensor,
    others: &[&Tensor],
    op: impl FnOnce(&Tensor) -> Result<Tensor>,
) -> Result<()> {
    apply(t, others, op)
}

/// A tensor of `t`'s shape filled with `value`, recorded as `name`: the
/// old values get no gradient.
fn filled(t: &Tensor, value: Scalar, name: &'static str) -> Result<Tensor> {
    let out = Tensor::full(t.shape(), value, t.dtype())?;
    record(
        name,
        &[t],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(zeros_like(g)?)]),
    );
    Ok(out)
}

/// `t.fill_(value)`.
pub fn fill_(t: &Tensor, value: Scalar) -> Result<()> {
    if !must_record(t, &[])? {
        return fill_direct(t, value);
    }
    apply(t, &[], |s| filled(s, value, "FillBackward2"))
}

/// `t.fill_(value)` with a 0-d tensor `value`, which gets the sum of the
/// gradient (`FillBackward3`).
pub fn fill_tensor_(t: &Tensor, value: &Tensor) -> Result<()> {
    if value.ndim() != 0 {
        bail!(
            Runtime,
            "fill_ only supports 0-dimension value tensor but got tensor with {} dimensions.",
            value.ndim()
        );
    }
    let scalar = value.item()?;
    if !must_record(t, &[value])? {
        return fill_direct(t, scalar);
    }
    apply(t, &[value], |s| {
        let out = Tensor::full(s.shape(), scalar, s.dtype())?;
        record(
            "FillBackward3",
            &[s, value],
            &out,
            || (),
            |_, _, g| {
                Ok(grads![
                    Some(zeros_like(g)?),
                    Some(super::reduce::sum(g, &[], false)?)
                ])
            },
        );
        Ok(out)
    })
}

/// `t.zero_()`.
pub fn zero_(t: &Tensor) -> Result<()> {
    if !must_record(t, &[])? {
        return fill_direct(t, Scalar::Int(0));
    }
    apply(t, &[], |s| filled(s, Scalar::Int(0), "ZeroBackward0"))
}

fn fill_direct(t: &Tensor, value: Scalar) -> Result<()> {
    with_dtype!(t.dtype(), T => {
        let v = Tensor::scalar(value, T::DTYPE);
        update_fast::<T>(t, &v, |_, s| s, None)
    })
}

/// Overwrites `t` with values from `init` (the random initialisers); the
/// old values get no gradient.
pub fn overwrite_(
    t: &Tensor,
    name: &'static str,
    init: impl FnOnce(&Tensor) -> Result<()>,
) -> Result<()> {
    if !must_record(t, &[])? {
        return init(t);
    }
    apply(t, &[], |s| {
        let out = filled(s, Scalar::Int(0), name)?;
        init(&out)?;
        Ok(out)
    })
}

/// `t.masked_fill_(mask, value)`.
pub fn masked_fill_(t: &Tensor, mask: &Tensor, value: Scalar) -> Result<()> {
    if mask.dtype() != DType::Bool {
        let name = mask.dtype().cpp_name();
        bail!(
            Runtime,
            "masked_fill_ only supports boolean masks, but got mask with dtype {name}"
        );
    }
    check_result(t, &broadcast_shapes(t.shape(), mask.shape())?, t.dtype())?;
    let value = value.checked_to(t.dtype())?;
    apply(t, &[], |s| {
        let out = where_(mask, &Tensor::scalar(value, s.dtype()), &s.detach())?;
        record(
            "MaskedFillBackward0",
            &[s],
            &out,
            || mask.clone(),
            |_, m, g| Ok(grads![Some(where_(m, &zero_of(g), g)?)]),
        );
        Ok(out)
    })
}

/// `t.masked_fill_(mask, value)` with a 0-d tensor `value`
/// (`MaskedFillBackward1`, see `index::masked_fill_tensor`).
pub fn masked_fill_tensor_(t: &Tensor, mask: &Tensor, value: &Tensor) -> Result<()> {
    let scalar = super::index::masked_fill_value(value)?;
    if !must_record(t, &[value])? {
        return masked_fill_(t, mask, scalar);
    }
    check_result(t, &broadcast_shapes(t.shape(), mask.shape())?, t.dtype())?;
    apply(t, &[value], |s| {
        super::index::masked_fill_tensor(s, mask, value)
    })
}

/// `t.copy_(src)`: `src` broadcast to `t`'s shape and converted to its dtype.
pub fn copy_(t: &Tensor, src: &Tensor) -> Result<()> {
    check_result(t, &broadcast_shapes(t.shape(), src.shape())?, t.dtype())?;
    // Values cast into an integer or bool tensor carry no gradient.
    if !must_record(t, &[src])? || !t.dtype().is_differentiable() {
        return write(t, src);
    }
    apply(t, &[src], |s| {
        let out = super::shape::expand_to(&try_cast(&src.detach(), t.dtype())?, s.shape())?;
        let out = clone(&out)?;
        let (src_dtype, src_shape) = (src.dtype(), src.shape().to_vec());
        record(
            "CopyBackwards",
            &[s, src],
            &out,
            || (),
            move |_, _, g| {
                let gs = super::reduce::sum_to(&try_cast(g, src_dtype)?, &src_shape)?;
                Ok(grads![Some(zeros_like(g)?), Some(gs)])
            },
        );
        Ok(out)
    })
}

/// `t.detach_()`: drops the history in place.
pub fn detach_(t: &Tensor) -> Result<()> {
    if t.view_base().is_some() {
        bail!(
            Runtime,
            "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence detach_() cannot be called on these gradients. To fix this error, please refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
        );
    }
    let mut m = t.meta();
    m.grad_fn = None;
    m.output_nr = 0;
    m.requires_grad = false;
    Ok(())
}

/// `t.index_put_(indices, values, accumulate)` (`IndexPutBackward0`).
pub fn index_put_(
    t: &Tensor,
    indices: &[Option<Tensor>],
    values: &Tensor,
    accumulate: bool,
) -> Result<()> {
    super::index_put::check_values_dtype(t, indices, values, accumulate)?;
    if !must_record(t, &[values])? {
        return super::index::put(t, indices, values, accumulate);
    }
    apply(t, &[values], |s| {
        super::index_put::index_put(s, indices, values, accumulate)
    })
}

/// `t.scatter_(dim, index, src or value, reduce=...)` (`ScatterBackward0`,
/// `ScatterBackward1` for a value, `ScatterReduceBackward0` with `reduce`).
pub fn scatter_(
    t: &Tensor,
    dim: i64,
    index: &Tensor,
    src: Source,
    reduce: Option<&str>,
) -> Result<()> {
    let others: &[&Tensor] = match &src {
        Source::Tensor(s) => &[s],
        Source::Value(_) => &[],
    };
    apply(t, others, |s| {
        scatter_from(s, dim, index, src.clone(), reduce)
    })
}

/// `t.scatter_add_(dim, index, src)` (`ScatterAddBackward0`).
pub fn scatter_add_(t: &Tensor, dim: i64, index: &Tensor, src: &Tensor) -> Result<()> {
    apply(t, &[src], |s| scatter_add(s, dim, index, src))
}

/// `t.scatter_reduce_(dim, index, src, reduce, include_self=...)`
/// (`ScatterReduceBackward0`).
pub fn scatter_reduce_(
    t: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
    reduce: Reduction,
    include_self: bool,
) -> Result<()> {
    apply(t, &[src], |s| {
        scatter_reduce(s, dim, index, src, reduce, include_self)
    })
}

/// `t.index_add_(dim, index, source, alpha=alpha)` (`IndexAddBackward0`).
pub fn index_add_(
    t: &Tensor,
    dim: i64,
    index: &Tensor,
    source: &Tensor,
    alpha: Scalar,
) -> Result<()> {
    apply(t, &[source], |s| {
        super::index_put::index_add(s, dim, index, source, alpha)
    })
}
