//! Deterministic factories: ranges, evenly spaced values and identities.

use super::num::Arith;
use crate::tensor::layout::{check_numel, Layout};
use crate::tensor::storage::{try_collect, try_filled};
use crate::tensor::{DType, MemoryFormat, Scalar, ScalarConvert, Tensor};
use crate::{bail, with_dtype, with_real_float, Result};

/// `arange(start, end, step)`: integer arguments give int64, any float
/// gives the default float dtype (unless `dtype` says otherwise). Values are computed as
/// `start + i * step` in double precision, then converted.
pub fn arange(start: Scalar, end: Scalar, step: Scalar, dtype: Option<DType>) -> Result<Tensor> {
    let is_float = |s: Scalar| matches!(s, Scalar::Float(_));
    let dtype = dtype.unwrap_or(if is_float(start) || is_float(end) || is_float(step) {
        DType::default_float()
    } else {
        DType::Int64
    });
    if dtype.is_complex() {
        bail!(
            NotImplemented,
            "\"arange_cpu\" not implemented for '{}'",
            dtype.scalar_type_name()
        );
    }
    let (s, e, st) = (start.as_f64(), end.as_f64(), step.as_f64());
    if st == 0.0 {
        bail!(Runtime, "step must be nonzero");
    }
    if !s.is_finite() || !e.is_finite() {
        bail!(Runtime, "unsupported range: {s} -> {e}");
    }
    if (st > 0.0 && e < s) || (st < 0.0 && e > s) {
        bail!(
            Runtime,
            "upper bound and lower bound inconsistent with step sign"
        );
    }
    let n = if dtype == DType::Int64 && !is_float(start) && !is_float(end) && !is_float(step) {
        // Exact integer arithmetic: ceil((end - start) / step).
        let (s, e, st) = (start.as_i64(), end.as_i64(), step.as_i64());
        let span = e as i128 - s as i128;
        let st = st as i128;
        ((span + st - st.signum()) / st) as usize
    } else {
        ((e - s) / st).ceil() as usize
    };
    check_numel(&[n])?;
    Ok(with_dtype!(dtype, T => {
        let v: Vec<T> = try_collect(n, (0..n).map(|i| T::from_scalar(Scalar::Float(s + i as f64 * st))))?;
        Tensor::from_vec(v, &[n])?
    }))
}

/// `linspace(start, end, steps)`: the first half counts up from `start`,
/// the second half down from `end`, so both ends are exact.
pub fn linspace(start: Scalar, end: Scalar, steps: i64, dtype: DType) -> Result<Tensor> {
    if steps < 0 {
        bail!(Runtime, "number of steps must be non-negative");
    }
    let n = steps as usize;
    check_numel(&[n])?;
    // One step gives `start`.
    let half = if n == 1 { 1 } else { n / 2 };
    let fill = |s: f64, e: f64| -> Result<Vec<f64>> {
        let step = if n > 1 { (e - s) / (n - 1) as f64 } else { 0.0 };
        try_collect(
            n,
            (0..n).map(|i| {
                if i < half {
                    s + step * i as f64
                } else {
                    e - step * (n - i - 1) as f64
                }
            }),
        )
    };
    // Floating outputs compute in their own precision, as PyTorch does.
    let out = with_real_float!(dtype, T => {
        let (s, e) = (T::from_scalar(start), T::from_scalar(end));
        let step = if n > 1 { (e - s) / (n - 1) as T } else { T::zero() };
        let v: Vec<T> = try_collect(n, (0..n).map(|i| if i < half { s + step * i as T } else { e - step * (n - i - 1) as T }))?;
        Tensor::from_vec(v, &[n])?
    }, {
        if dtype.is_complex() {
            let (s, e) = (start.as_complex(), end.as_complex());
            let (re, im) = (fill(s.re, e.re)?, fill(s.im, e.im)?);
            with_dtype!(dtype, T => {
                let v: Vec<T> = try_collect(n, re.iter().zip(&im).map(|(&r, &i)| T::from_scalar(Scalar::Complex(num_complex::Complex64::new(r, i)))))?;
                Tensor::from_vec(v, &[n])?
            })
        } else {
            let xs = fill(start.as_f64(), end.as_f64())?;
            with_dtype!(dtype, T => {
                let v: Vec<T> = try_collect(n, xs.iter().map(|&x| T::from_scalar(Scalar::Int(x as i64))))?;
                Tensor::from_vec(v, &[n])?
            })
        }
    });
    Ok(out)
}

/// `eye(n, m)`: ones on the main diagonal.
pub fn eye(n: i64, m: Option<i64>, dtype: DType) -> Result<Tensor> {
    if n < 0 {
        bail!(Runtime, "n must be greater or equal to 0, got {n}");
    }
    let m = m.unwrap_or(n);
    if m < 0 {
        bail!(Runtime, "m must be greater or equal to 0, got {m}");
    }
    let (n, m) = (n as usize, m as usize);
    check_numel(&[n, m])?;
    Ok(with_dtype!(dtype, T => {
        let mut v = try_filled(T::zero(), n * m)?;
        for i in 0..n.min(m) {
            v[i * m + i] = T::one();
        }
        Tensor::from_vec(v, &[n, m])?
    }))
}

/// A tensor of `t`'s shape filled with `value`, in `dtype` or `t`'s dtype,
/// laid out as [`made_like`] lays it out.
pub fn full_like(
    t: &Tensor,
    value: Scalar,
    dtype: Option<DType>,
    format: MemoryFormat,
) -> Result<Tensor> {
    let dtype = dtype.unwrap_or(t.dtype());
    made_like(t, format, |shape| Tensor::full(shape, value, dtype))
}

/// The result of a `*_like` factory for `t`, from `make(shape)`, which
/// makes a new row-major tensor of any shape: with `t`'s strides when
/// `format` is `Preserve` (the default) and `t` is dense (a transposed,
/// permuted or channels-last tensor), else dense in `format`'s dim order,
/// as PyTorch lays them out.
pub fn made_like(
    t: &Tensor,
    format: MemoryFormat,
    make: impl FnOnce(&[usize]) -> Result<Tensor>,
) -> Result<Tensor> {
    let l = t.layout();
    let layout = match format {
        MemoryFormat::Preserve if l.is_non_overlapping_and_dense() => Layout {
            shape: l.shape.clone(),
            strides: l.strides.clone(),
            offset: 0,
        },
        MemoryFormat::Preserve => Layout::contiguous(&l.shape),
        format => Layout::contiguous_in(&l.shape, &format.dim_order(l.ndim())?),
    };
    if layout.is_contiguous() {
        return make(&l.shape);
    }
    let flat = make(&[l.numel()])?;
    Ok(Tensor::from_parts(flat.storage().clone(), layout))
}
