//! Optimizer updates fused into one pass over a parameter and its state.

use super::elementwise::{update_pair_from, CHUNK, PARALLEL_MIN_ELEMENTS};
use crate::autograd::is_grad_enabled;
use crate::tensor::{DType, Element, Tensor};
use crate::Result;
use parking_lot::Mutex;

/// The hyperparameters of one `torch.optim.SGD` step.
#[derive(Clone, Copy, Debug)]
pub struct Sgd {
    pub lr: f64,
    pub momentum: f64,
    pub dampening: f64,
    pub weight_decay: f64,
    pub nesterov: bool,
    pub maximize: bool,
}

/// One SGD step with momentum on `param`, given its gradient and momentum
/// buffer, both updated in place. It makes one pass over the three where
/// the unfused ops (`buf.mul_(m).add_(g, alpha=1-d)`, then
/// `param.add_(buf, alpha=-lr)`) make three, and rounds exactly as they do.
/// Returns `Ok(false)` and touches nothing unless the three are contiguous
/// float32 or float64 tensors of one dtype and shape on separate, writable
/// buffers and grad mode is off; the caller then runs the unfused ops.
pub fn sgd_momentum_(param: &Tensor, grad: &Tensor, buf: &Tensor, h: Sgd) -> Result<bool> {
    let tensors = [param, buf, grad];
    let dtype = param.dtype();
    let fusable = !is_grad_enabled()
        && matches!(dtype, DType::Float32 | DType::Float64)
        && tensors.iter().all(|t| {
            t.dtype() == dtype && t.shape() == param.shape() && t.layout().is_contiguous()
        })
        && !param.storage().same_buffer(buf.storage())
        && !param.storage().same_buffer(grad.storage())
        && !buf.storage().same_buffer(grad.storage())
        // The fused pass locks all three for writing.
        && tensors.iter().all(|t| t.storage().is_writable());
    if !fusable {
        return Ok(false);
    }
    match dtype {
        DType::Float32 => fused_sgd::<f32>(tensors, h, |x| x as f32)?,
        _ => fused_sgd::<f64>(tensors, h, |x| x)?,
    }
    param.bump_version();
    buf.bump_version();
    Ok(true)
}

/// Float arithmetic the fused step needs.
trait StepFloat:
    Element + std::ops::Mul<Output = Self> + std::ops::Add<Output = Self> + std::ops::Neg<Output = Self>
{
    fn mul_add(self, a: Self, b: Self) -> Self;
}

impl StepFloat for f32 {
    #[inline(always)]
    fn mul_add(self, a: f32, b: f32) -> f32 {
        f32::mul_add(self, a, b)
    }
}

impl StepFloat for f64 {
    #[inline(always)]
    fn mul_add(self, a: f64, b: f64) -> f64 {
        f64::mul_add(self, a, b)
    }
}

fn fused_sgd<T: StepFloat + Send + Sync>(
    [param, buf, grad]: [&Tensor; 3],
    h: Sgd,
    cast: impl Fn(f64) -> T,
) -> Result<()> {
    let (lr, m, wd) = (cast(-h.lr), cast(h.momentum), cast(h.weight_decay));
    let (keep, with_decay) = (cast(1.0 - h.dampening), h.weight_decay != 0.0);
    let (plain_add, nesterov, maximize) = (h.dampening == 0.0, h.nesterov, h.maximize);
    let step = move |p: T, b: T, g: T| -> (T, T) {
        let g = if maximize { -g } else { g };
        // Out-of-place `add` with alpha rounds the product and the sum
        // apart; in-place `add_` with alpha is one fused multiply-add.
        let g = if with_decay { p * wd + g } else { g };
        let scaled = b * m;
        let b = if plain_add {
            scaled + g
        } else {
            g.mul_add(keep, scaled)
        };
        let direction = if nesterov { b * m + g } else { b };
        (direction.mul_add(lr, p), b)
    };
    // Write locks on all three, taken in buffer order as every kernel does.
    let mut order = [0, 1, 2];
    order.sort_by_key(|&i| [param, buf, grad][i].storage().buffer_id());
    let mut guards = [None, None, None];
    for i in order {
        guards[i] = Some([param, buf, grad][i].storage().write::<T>()?);
    }
    let [Some(mut p), Some(mut b), Some(g)] = guards else {
        unreachable!("every guard was taken")
    };
    let n = param.numel();
    let slice = |t: &Tensor| t.layout().offset..t.layout().offset + n;
    let (p, b, g) = (&mut p[slice(param)], &mut b[slice(buf)], &g[slice(grad)]);
    if n < PARALLEL_MIN_ELEMENTS {
        update_pair_from(p, b, g, &step);
        return Ok(());
    }
    let span = crate::parallel::span_len(n, CHUNK);
    /// A chunk of the parameter, its buffer and its gradient.
    type Part<'a, T> = Mutex<(&'a mut [T], &'a mut [T], &'a [T])>;
    let parts: Vec<Part<T>> = p
        .chunks_mut(span)
        .zip(b.chunks_mut(span))
        .zip(g.chunks(span))
        .map(|((p, b), g)| Mutex::new((p, b, g)))
        .collect();
    crate::parallel::for_each_index(parts.len(), |i| {
        let mut part = parts[i].lock();
        let (p, b, g) = &mut *part;
        update_pair_from(p, b, g, &step);
    });
    Ok(())
}
