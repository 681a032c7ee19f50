//! Forward-mode AD (`torch.autograd.forward_ad`): inside a dual level a
//! tensor may carry a tangent, and every op recorded through
//! [`record_multi`](super::record_multi) gives its outputs the tangents
//! `J·t` of its inputs' tangents `t`.
//!
//! No op needs a forward formula of its own: an op's backward formula is
//! its vector-Jacobian product `u ↦ Jᵀu`, linear in the output gradient `u`,
//! and `J·t` is the gradient with respect to `u` of the real inner product
//! `⟨Jᵀu, t⟩` (the same identity holds for complex tensors, whose gradients
//! are the adjoints of the real-linear maps). So a tangent costs one call of
//! the formula with `u` recorded and one backward through that call, and
//! every op with a twice-differentiable backward has forward AD.

use super::engine;
use super::grad_mode::{is_grad_enabled, GradModeGuard};
use super::node::{BackwardCtx, BackwardFn, Edge, Grads, NodeWith, OutputMeta};
use crate::ops;
use crate::tensor::layout::{fmt_shape, MemoryFormat};
use crate::tensor::{Scalar, Tensor, TensorImpl};
use crate::{bail, Result};
use parking_lot::Mutex;
use smallvec::SmallVec;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// Whether a dual level is open: the one look an op pays outside forward AD.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Counts the dual levels opened, telling a tangent kept aside (in a packed
/// saved tensor) from one of a later level.
static OPENED: AtomicU64 = AtomicU64::new(0);

/// The tensors given a tangent at the open level, whose tangents are
/// dropped when it closes; `None` while no level is open.
static DUAL_TENSORS: Mutex<Option<Vec<Weak<TensorImpl>>>> = Mutex::new(None);

/// Outputs whose tangents could not be computed, with the reason, raised
/// when their tangent is read.
static FAILED: Mutex<Vec<(Weak<TensorImpl>, String)>> = Mutex::new(Vec::new());

thread_local! {
    /// Set while this thread computes tangents: the ops of a backward
    /// formula evaluated for that give no tangents of their own.
    static SUSPENDED: Cell<bool> = const { Cell::new(false) };
}

/// The only level there is: as in PyTorch, levels do not nest.
const LEVEL: u64 = 0;

/// Whether ops on this thread propagate tangents now.
pub fn is_active() -> bool {
    ACTIVE.load(Ordering::Relaxed) && !SUSPENDED.with(Cell::get)
}

/// `forward_ad.enter_dual_level()`: opens the level and returns its index.
pub fn enter_dual_level() -> Result<u64> {
    let mut tensors = DUAL_TENSORS.lock();
    if tensors.is_some() {
        bail!(
            Runtime,
            "Nested forward mode AD is not supported at the moment"
        );
    }
    *tensors = Some(Vec::new());
    OPENED.fetch_add(1, Ordering::Relaxed);
    ACTIVE.store(true, Ordering::Relaxed);
    Ok(LEVEL)
}

/// Which opening of a dual level is open now, if one is and this thread
/// propagates tangents.
pub(crate) fn open_level() -> Option<u64> {
    is_active().then(|| OPENED.load(Ordering::Relaxed))
}

/// `forward_ad.exit_dual_level()`: closes the level; every tangent given
/// at it is dropped.
pub fn exit_dual_level(level: u64) -> Result<()> {
    let mut tensors = DUAL_TENSORS.lock();
    if level != LEVEL || tensors.is_none() {
        bail!(
            Runtime,
            "Trying to exit a forward AD level that was not the last one that was created. This is not supported."
        );
    }
    ACTIVE.store(false, Ordering::Relaxed);
    let dual = tensors.take().unwrap_or_default();
    drop(tensors);
    for t in dual.iter().filter_map(Weak::upgrade) {
        t.autograd.lock().tangent = None;
    }
    FAILED.lock().clear();
    Ok(())
}

/// Keeps why `outputs` of the op `name` got no tangents.
pub(crate) fn mark_failed(outputs: &[&Tensor], name: &str, error: crate::Error) {
    let mut failed = FAILED.lock();
    failed.retain(|(t, _)| t.strong_count() > 0);
    for out in outputs {
        failed.push((
            Arc::downgrade(&out.0),
            format!("forward AD could not compute the tangent of the output of {name}: {error}"),
        ));
    }
}

fn check_level(level: u64, what: &str) -> Result<()> {
    if level != LEVEL || !ACTIVE.load(Ordering::Relaxed) {
        bail!(
            Runtime,
            "Trying to {what} a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first."
        );
    }
    Ok(())
}

/// `forward_ad.make_dual(primal, tangent)`: a view of `primal` whose
/// tangent is `tangent`.
pub fn make_dual(primal: &Tensor, tangent: &Tensor, level: u64) -> Result<Tensor> {
    check_level(level, "create")?;
    check_tangent(primal, tangent)?;
    let dual = {
        let _off = Suspend::new();
        ops::shape::view(primal, &shape_i64(primal.shape()))?
    };
    attach(&dual, tangent)?;
    Ok(dual)
}

/// Gives `t` the tangent `tangent` at the open level, as a custom
/// Function's `jvp` gives its outputs theirs.
pub fn set_forward_grad(t: &Tensor, tangent: &Tensor, level: u64) -> Result<()> {
    check_level(level, "set the tangent of")?;
    check_tangent(t, tangent)?;
    attach(t, tangent)
}

fn check_tangent(primal: &Tensor, tangent: &Tensor) -> Result<()> {
    for (what, t) in [("primal", primal), ("tangent", tangent)] {
        if !t.dtype().is_differentiable() {
            bail!(
                Value,
                "Expected {what} to be floating point or complex, but got: {}",
                t.dtype()
            );
        }
    }
    if tangent.shape() != primal.shape() {
        bail!(
            Runtime,
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is not supported. Tensor is of size {} while the given forward gradient is of size {}.",
            fmt_shape(primal.shape()),
            fmt_shape(tangent.shape())
        );
    }
    Ok(())
}

/// Sets `tangent` as `t`'s, used as it is when laid out as `t`, else copied
/// into `t`'s layout.
fn attach(t: &Tensor, tangent: &Tensor) -> Result<()> {
    let tangent = if tangent.strides() == t.strides() {
        tangent.clone()
    } else {
        let _off = Suspend::new();
        let _no_grad = GradModeGuard::new(false);
        let copy = ops::creation::full_like(
            t,
            Scalar::Int(0),
            Some(tangent.dtype()),
            MemoryFormat::Preserve,
        )?;
        ops::inplace::copy_(&copy, tangent)?;
        copy
    };
    t.set_tangent(tangent);
    Ok(())
}

/// `torch._C._set_fwd_grad_enabled`: whether this thread's ops propagate
/// tangents (a custom Function's forward runs without; its `jvp` gives the
/// tangents).
pub fn set_enabled(enabled: bool) {
    SUSPENDED.set(!enabled);
}

/// `torch._C._is_fwd_grad_enabled`.
pub fn is_enabled() -> bool {
    !SUSPENDED.with(Cell::get)
}

/// `forward_ad.unpack_dual(t)`: a view of `t` without a tangent, and the
/// tangent.
pub fn unpack_dual(t: &Tensor, level: u64) -> Result<(Tensor, Option<Tensor>)> {
    let tangent = match level == LEVEL && is_active() {
        true => t.tangent(),
        false => None,
    };
    if let Some((_, why)) = FAILED
        .lock()
        .iter()
        .find(|(f, _)| f.strong_count() > 0 && std::ptr::eq(f.as_ptr(), Arc::as_ptr(&t.0)))
    {
        bail!(Runtime, "{why}");
    }
    let primal = {
        let _off = Suspend::new();
        ops::shape::view(t, &shape_i64(t.shape()))?
    };
    Ok((primal, tangent))
}

fn shape_i64(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&d| d as i64).collect()
}

/// Turns tangent propagation off on this thread until dropped.
pub(crate) struct Suspend(bool);

impl Suspend {
    fn new() -> Suspend {
        Suspend::to(true)
    }

    /// Sets whether tangent propagation is off until dropped: the engine's
    /// workers take the setting of the thread that started the backward
    /// (off while tangents are being computed).
    pub(crate) fn to(suspended: bool) -> Suspend {
        Suspend(SUSPENDED.replace(suspended))
    }
}

impl Drop for Suspend {
    fn drop(&mut self) {
        SUSPENDED.set(self.0);
    }
}

impl Tensor {
    /// The tangent this tensor carries at the open dual level.
    pub fn tangent(&self) -> Option<Tensor> {
        self.meta().tangent.clone()
    }

    pub(crate) fn set_tangent(&self, tangent: Tensor) {
        if let Some(tensors) = DUAL_TENSORS.lock().as_mut() {
            // Dead entries are pruned when the registry would grow, leaving
            // room for as many insertions again: constant time on average.
            if tensors.len() == tensors.capacity() {
                tensors.retain(|t| t.strong_count() > 0);
                tensors.reserve(tensors.len().max(16));
            }
            tensors.push(Arc::downgrade(&self.0));
            self.meta().tangent = Some(tangent);
        }
    }
}

/// Gives `t` the tangent `new` after `t` was computed anew (an in-place
/// op): written into `t`'s tangent where it has one, so that views of it
/// (the tangents of `t`'s views) see the change, as PyTorch does.
pub(crate) fn assign_tangent(t: &Tensor, new: Option<Tensor>) -> Result<()> {
    let old = t.tangent();
    let new = match (new, &old) {
        (Some(new), _) => new,
        // An op whose result does not depend on its inputs (`fill_`).
        (None, Some(old)) => ops::unary::zeros_like(old)?,
        (None, None) => return Ok(()),
    };
    // Written in place when neither has history, and always outside grad
    // mode: an in-place op under `no_grad` then leaves a differentiable
    // tangent's history as it was, as it leaves its primal's.
    let in_place = |o: &Tensor| !is_grad_enabled() || !(o.requires_grad() || new.requires_grad());
    if let Some(old) = old.filter(in_place) {
        let _off = Suspend::new();
        let _no_grad = GradModeGuard::new(false);
        if old.shape() == new.shape() && ops::inplace::copy_(&old, &new).is_ok() {
            return Ok(());
        }
    }
    t.set_tangent(new);
    Ok(())
}

/// After an in-place op wrote `out` into `t`: `t`'s tangent becomes
/// `out`'s. A view that had none takes the same view of its base's tangent
/// when the write gave the base one, so that both stay one tangent.
pub(crate) fn written(t: &Tensor, out: &Tensor) -> Result<()> {
    let base_tangent = match (t.tangent(), t.view_base()) {
        (None, Some(base)) => base.tangent().filter(|bt| bt.layout() == base.layout()),
        _ => None,
    };
    match base_tangent {
        Some(bt) if !bt.requires_grad() => {
            t.set_tangent(ops::shape::make_view(&bt, t.layout().clone()));
            Ok(())
        }
        _ => assign_tangent(t, out.tangent()),
    }
}

/// Whether `view`'s tangent is its base's as far as forward AD goes, so
/// that a write through the view updates it in place and the base's
/// tangent needs no recomputing: the view's tangent is a view of the
/// base's, or the base has none (`make_dual`'s result is a view of its
/// primal for backward only; the primal gets no tangent).
pub(crate) fn shares_tangent(view: &Tensor, base: &Tensor) -> bool {
    match (view.tangent(), base.tangent()) {
        (Some(vt), Some(bt)) => vt.storage().same_buffer(bt.storage()),
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// Runs `f` with tangent propagation off on this thread.
pub(crate) fn without_tangents<R>(f: impl FnOnce() -> R) -> R {
    let _off = Suspend::new();
    f()
}

/// Gives the copies of `outputs` that their node saved (outputs are saved
/// without their history, as aliases) the outputs' tangents: a
/// differentiable backward through the node then differentiates them too,
/// as forward-over-reverse products need.
pub(crate) fn share_with_saved_outputs(
    inputs: &[&Tensor],
    outputs: &[&Tensor],
    saved: &[Weak<TensorImpl>],
) {
    for kept in saved.iter().filter_map(Weak::upgrade).map(Tensor) {
        if inputs.iter().any(|x| x.same(&kept)) {
            continue;
        }
        let output = outputs.iter().find(|out| {
            out.storage().same_buffer(kept.storage())
                && out.layout() == kept.layout()
                && !out.same(&kept)
        });
        if let Some(tangent) = output.and_then(|out| out.tangent()) {
            kept.set_tangent(tangent);
        }
    }
}

/// Whether an op on `inputs` must compute tangents.
pub(crate) fn any_tangent(inputs: &[&Tensor]) -> bool {
    is_active() && inputs.iter().any(|t| t.meta().tangent.is_some())
}

/// A node's stand-in for the inputs' history: the formula sees every input
/// with a tangent as needing its gradient. Never run.
struct TangentSink;

impl BackwardFn for TangentSink {
    fn apply(&self, _ctx: &BackwardCtx<'_>, _grads: Grads) -> Result<Grads> {
        Ok(Grads::new())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Sets the tangents of an op's `outputs` from its inputs' tangents, given
/// its backward `formula`, what it saved, and the node that `recorded` the
/// op if grad mode did.
pub(crate) fn propagate<S>(
    name: &'static str,
    inputs: &[&Tensor],
    outputs: &[&Tensor],
    recorded: Option<&Arc<super::Node>>,
    saved: &S,
    formula: &dyn Fn(&BackwardCtx<'_>, &S, &Grads) -> Result<Grads>,
) -> Result<()> {
    let tangents: SmallVec<[Option<Tensor>; 2]> = inputs.iter().map(|t| t.tangent()).collect();
    // The tangents are differentiable where the inputs or their tangents
    // are (forward-over-reverse), when grad mode records.
    let differentiable = is_grad_enabled()
        && inputs
            .iter()
            .zip(&tangents)
            .any(|(x, t)| x.requires_grad() || t.as_ref().is_some_and(Tensor::requires_grad));
    let _off = Suspend::new();
    let mut found: SmallVec<[Option<Tensor>; 1]> = SmallVec::new();
    for out in outputs {
        found.push(view_tangent(out, inputs, &tangents, differentiable));
    }
    if found.iter().any(Option::is_none) {
        // The saved-tensor hooks in force are for the graph the user
        // records, not for the products computed here.
        let computed = super::saved::with_hooks_suspended(|| {
            jvp(
                name,
                inputs,
                outputs,
                &tangents,
                recorded,
                saved,
                formula,
                differentiable,
            )
        })?;
        for (f, c) in found.iter_mut().zip(computed) {
            if f.is_none() {
                *f = c;
            }
        }
    }
    for (out, tangent) in outputs.iter().zip(found) {
        assign_tangent(out, tangent)?;
    }
    Ok(())
}

/// The tangent of `out` when it is a view of an input whose tangent is laid
/// out as that input: the same view of the tangent, so that writes through
/// either reach the other, as in PyTorch.
fn view_tangent(
    out: &Tensor,
    inputs: &[&Tensor],
    tangents: &[Option<Tensor>],
    differentiable: bool,
) -> Option<Tensor> {
    if differentiable || !out.dtype().is_differentiable() {
        return None;
    }
    inputs.iter().zip(tangents).find_map(|(x, t)| {
        let t = t.as_ref()?;
        let same_layout = t.layout() == x.layout() && t.dtype() == out.dtype();
        (same_layout && !out.same(x) && out.storage().same_buffer(x.storage()))
            .then(|| ops::shape::make_view(t, out.layout().clone()))
    })
}

/// `J·t` for each output, through the formula (see the module's notes).
/// Differentiable tangents of a recorded op read the saved outputs as the
/// outputs of `recorded`, so that their history reaches through them.
#[allow(clippy::too_many_arguments)]
fn jvp<S>(
    name: &'static str,
    inputs: &[&Tensor],
    outputs: &[&Tensor],
    tangents: &[Option<Tensor>],
    recorded: Option<&Arc<super::Node>>,
    saved: &S,
    formula: &dyn Fn(&BackwardCtx<'_>, &S, &Grads) -> Result<Grads>,
    differentiable: bool,
) -> Result<Vec<Option<Tensor>>> {
    let _record = GradModeGuard::new(true);
    let since = super::node::NodeMark::next();
    let sink: Arc<super::Node> = Arc::new(NodeWith::new(
        "TangentSink",
        Default::default(),
        Default::default(),
        TangentSink,
    ));
    let edges = tangents
        .iter()
        .map(|t| {
            t.as_ref().map(|_| Edge {
                node: sink.clone(),
                input_nr: 0,
            })
        })
        .collect();
    let metas = outputs.iter().map(|t| OutputMeta::of(t)).collect();
    let node: Arc<super::Node> = Arc::new(NodeWith::new(name, edges, metas, TangentSink));
    let cotangents: Grads = outputs
        .iter()
        .map(|out| {
            out.dtype().is_differentiable().then(|| {
                let u = Tensor::full(out.shape(), Scalar::Int(0), out.dtype())?;
                u.set_requires_grad(true)?;
                Ok(u)
            })
        })
        .map(Option::transpose)
        .collect::<Result<_>>()?;
    let ctx = BackwardCtx {
        node: &node,
        outputs_node: recorded.filter(|_| differentiable).unwrap_or(&node),
        create_graph: true,
    };
    let vjps = formula(&ctx, saved, &cotangents)?;
    let mut product: Option<Tensor> = None;
    for ((v, t), x) in vjps.iter().zip(tangents).zip(inputs) {
        let (Some(v), Some(t)) = (v, t) else {
            continue;
        };
        let v = match v.shape() == x.shape() {
            true => v.clone(),
            false => ops::reduce::sum_to(v, x.shape())?,
        };
        let v = ops::copy::to_dtype(&v, t.dtype())?;
        let term = match v.dtype().is_complex() {
            true => ops::complex::real(&ops::binary::mul(&ops::unary::conj(&v)?, t)?)?,
            false => ops::binary::mul(&v, t)?,
        };
        let term = ops::reduce::sum(&term, &[], false)?;
        product = Some(match product {
            Some(p) => ops::binary::add(&p, &term)?,
            None => term,
        });
    }
    let wrt: Vec<Tensor> = cotangents.iter().flatten().cloned().collect();
    let found = match product {
        Some(p) if p.requires_grad() && !wrt.is_empty() => {
            engine::grad_since(&[p], &wrt, differentiable, since)?
        }
        _ => vec![None; wrt.len()],
    };
    let mut found = found.into_iter();
    outputs
        .iter()
        .zip(&cotangents)
        .map(|(out, u)| match u {
            None => Ok(None),
            Some(_) => match found.next().flatten() {
                Some(t) => Ok(Some(t)),
                None => Ok(Some(ops::unary::zeros_like(out)?)),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(values: &[f64]) -> Tensor {
        Tensor::from_vec(values.to_vec(), &[values.len()]).unwrap()
    }

    /// One test: the level is global, and levels do not nest.
    #[test]
    fn tangents_follow_ops_views_and_writes_until_the_level_closes() {
        let level = enter_dual_level().unwrap();
        assert!(enter_dual_level().is_err());
        let x = vector(&[0.0, 1.0, 2.0]);
        let dual = make_dual(&x, &vector(&[1.0, 2.0, 3.0]), level).unwrap();
        // d(sin x · 3) = 3 cos x · t
        let y = ops::binary::mul(&ops::unary::sin(&dual).unwrap(), &vector(&[3.0; 3])).unwrap();
        let expected: Vec<f64> = [0.0f64, 1.0, 2.0]
            .iter()
            .zip([1.0, 2.0, 3.0])
            .map(|(x, t)| 3.0 * x.cos() * t)
            .collect();
        let got = y.tangent().unwrap().to_vec::<f64>();
        assert!(got
            .iter()
            .zip(&expected)
            .all(|(g, e)| (g - e).abs() < 1e-12));
        // A view's tangent is the same view of the tangent: a write through it shows in both.
        let tail = ops::shape::view(&dual, &[3]).unwrap();
        ops::inplace::mul_(&tail, &vector(&[2.0; 3])).unwrap();
        assert_eq!(dual.tangent().unwrap().to_vec::<f64>(), [2.0, 4.0, 6.0]);
        assert!(x.tangent().is_none());
        // The registry of tensors with tangents forgets those that died.
        for _ in 0..1000 {
            drop(make_dual(&x, &x, level).unwrap());
        }
        assert!(DUAL_TENSORS.lock().as_ref().unwrap().len() < 100);
        exit_dual_level(level).unwrap();
        assert!(y.tangent().is_none() && dual.tangent().is_none());
        assert!(make_dual(&x, &x, level).is_err());
    }
}
