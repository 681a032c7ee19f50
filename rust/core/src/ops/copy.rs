//! Copies and dtype conversion.

use super::elementwise::map;
use crate::autograd::record;
use crate::grads;
use crate::tensor::{DType, ScalarConvert, Tensor};
use crate::{with_dtype, Result};

/// Converts elements without recording history (kernels' operand casts).
pub fn try_cast(t: &Tensor, dtype: DType) -> Result<Tensor> {
    if t.dtype() == dtype {
        return Ok(t.clone());
    }
    with_dtype!(t.dtype(), A => with_dtype!(dtype, O => map::<A, O>(t, |x| O::from_scalar(x.to_scalar()))))
}

/// `t.to(dtype)`: differentiable, returns `t` itself when nothing changes.
pub fn to_dtype(t: &Tensor, dtype: DType) -> Result<Tensor> {
    if t.dtype() == dtype {
        return Ok(t.clone());
    }
    let out = try_cast(t, dtype)?;
    if dtype.is_differentiable() {
        let src = t.dtype();
        record(
            "ToCopyBackward0",
            &[t],
            &out,
            || (),
            move |_, _, g| Ok(grads![Some(to_dtype(g, src)?)]),
        );
    }
    Ok(out)
}

/// `t.clone()`: a contiguous copy with history.
pub fn clone(t: &Tensor) -> Result<Tensor> {
    let out = with_dtype!(t.dtype(), T => map::<T, T>(t, |x| x))?;
    record(
        "CloneBackward0",
        &[t],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(g.clone())]),
    );
    Ok(out)
}

/// `t.contiguous()`: `t` itself when already contiguous, else a copy.
pub fn contiguous(t: &Tensor) -> Result<Tensor> {
    if t.is_contiguous() {
        return Ok(t.clone());
    }
    clone(t)
}
