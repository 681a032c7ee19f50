//! Tensors saved for backward, checked against their version counter when
//! unpacked so that an in-place change never yields a wrong gradient.
//!
//! Saved-tensor hooks (`saved_tensors_hooks(pack, unpack)`) replace the
//! tensor by whatever `pack` returns; the core holds that packed form as a
//! [`PackedSaved`] without knowing what it is, and unpacks it on use.

use super::grad_mode::is_inference_mode_enabled;
use super::node::{BackwardCtx, Edge};
use crate::tensor::{Tensor, TensorImpl};
use crate::{bail, Result};
use smallvec::SmallVec;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

/// A saved tensor in the form a pack hook made of it.
pub trait PackedSaved: Send + Sync {
    /// Runs the unpack hook: the tensor to use in backward.
    fn unpack(&self) -> Result<Tensor>;
}

/// A `(pack, unpack)` pair applied to every tensor saved for backward.
pub trait SavedTensorsHooks: Send + Sync {
    fn pack(&self, t: &Tensor) -> Result<Arc<dyn PackedSaved>>;
    /// Lets bindings reach their own hook types.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// Weak handles to the tensors an op saved, so that the graph can be walked
/// for a garbage collector (see `node::for_each_owned`) without keeping
/// them alive.
pub type SavedRefs = SmallVec<[Weak<TensorImpl>; 2]>;

thread_local! {
    /// Where [`SavedTensor`]s being made are listed, while an op saves.
    static COLLECTING: RefCell<Option<SavedRefs>> = const { RefCell::new(None) };
    /// The hooks in force on this thread, innermost last.
    static HOOKS: RefCell<Vec<Arc<dyn SavedTensorsHooks>>> = const { RefCell::new(Vec::new()) };
    /// A pack hook failure, for the bindings to raise once the op returns.
    static PACK_ERROR: RefCell<Option<crate::Error>> = const { RefCell::new(None) };
}

/// How many saved-tensor hooks are pushed, over all threads: while none
/// is, saving a tensor skips the look at this thread's stack.
static HOOKS_PUSHED: AtomicUsize = AtomicUsize::new(0);

/// Enters a `saved_tensors_hooks` block on this thread.
pub fn push_saved_tensors_hooks(hooks: Arc<dyn SavedTensorsHooks>) {
    HOOKS.with_borrow_mut(|h| h.push(hooks));
    HOOKS_PUSHED.fetch_add(1, Ordering::Relaxed);
}

/// Leaves the innermost block; false when there was none.
pub fn pop_saved_tensors_hooks() -> bool {
    let popped = HOOKS.with_borrow_mut(|h| h.pop().is_some());
    if popped {
        HOOKS_PUSHED.fetch_sub(1, Ordering::Relaxed);
    }
    popped
}

/// The innermost hooks in force, if any.
pub fn current_saved_tensors_hooks() -> Option<Arc<dyn SavedTensorsHooks>> {
    if HOOKS_PUSHED.load(Ordering::Relaxed) == 0 {
        return None;
    }
    HOOKS.with_borrow(|h| h.last().cloned())
}

pub const INFERENCE_SAVED: &str = "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it in autograd, or use `ferrograd.no_grad()` instead of `ferrograd.inference_mode()`.";

/// A tensor that could not be saved: the op that saved it reports `e`.
fn failed(e: crate::Error) -> Data {
    PACK_ERROR.with_borrow_mut(|p| {
        p.get_or_insert(e.clone());
    });
    Data::Failed(e)
}

/// The error of a pack hook that failed while an op saved its tensors on
/// this thread, taken so that it is reported once.
pub fn take_pack_error() -> Option<crate::Error> {
    PACK_ERROR.with_borrow_mut(|e| e.take())
}

/// Runs `save` and lists the tensors it saved unpacked.
pub(crate) fn collect_saved<S>(save: impl FnOnce() -> S) -> (S, SavedRefs) {
    let outer = COLLECTING.replace(Some(SavedRefs::new()));
    let saved = save();
    let refs = COLLECTING.replace(outer).unwrap_or_default();
    (saved, refs)
}

/// Runs `f` (a pack hook) with no saved-tensor hooks in force: hooks are
/// not applied to what a pack hook itself saves.
pub fn with_hooks_suspended<R>(f: impl FnOnce() -> R) -> R {
    let _suspended = Suspended::new();
    f()
}

struct Suspended(Vec<Arc<dyn SavedTensorsHooks>>);

impl Suspended {
    fn new() -> Self {
        Suspended(HOOKS.with_borrow_mut(std::mem::take))
    }
}

impl Drop for Suspended {
    fn drop(&mut self) {
        HOOKS.with_borrow_mut(|h| *h = std::mem::take(&mut self.0));
    }
}

pub const PACK_IN_PLACE: &str = "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook cannot be modified by in-place operations as this can lead to unexpected side-effects. Please open an issue if you need to perform in-place operations on the input to a pack hook.";

#[derive(Clone)]
enum Data {
    Plain(Tensor),
    Packed {
        packed: Arc<dyn PackedSaved>,
        /// Where the gradient of a saved input goes, to reconnect the
        /// unpacked tensor for a differentiable backward.
        edge: Option<Edge>,
    },
    /// The pack hook failed; the error was raised when the op ran.
    Failed(crate::Error),
}

#[derive(Clone)]
pub struct SavedTensor {
    data: Data,
    saved_version: u64,
    /// Saved outputs are stored without their `grad_fn` (it is the node that
    /// saves them: keeping it would make a reference cycle) and re-attached
    /// to that node when unpacked for a differentiable backward.
    output_nr: Option<u32>,
    /// A packed tensor's tangent and the dual level it belongs to: what a
    /// pack hook returns knows nothing of it, and forward over reverse
    /// needs it on the unpacked tensor.
    tangent: Option<Box<(u64, KeptTangent)>>,
}

/// Where a packed saved tensor's tangent is kept.
#[derive(Clone)]
enum KeptTangent {
    /// An input's tangent, known when it is saved.
    Of(Tensor),
    /// An alias of a saved output, given the output's tangent once the op
    /// has computed it (see `forward::share_with_saved_outputs`).
    OnAlias(Tensor),
}

impl SavedTensor {
    /// Saves an input of the op.
    pub fn input(t: &Tensor) -> SavedTensor {
        SavedTensor::new(t, t.clone(), None)
    }

    /// Saves output `output_nr` of the op itself.
    pub fn output(t: &Tensor, output_nr: u32) -> SavedTensor {
        SavedTensor::new(t, t.detach(), Some(output_nr))
    }

    fn new(original: &Tensor, kept: Tensor, output_nr: Option<u32>) -> SavedTensor {
        let saved_version = original.version();
        let level = super::forward::open_level();
        let output_alias = (level.is_some() && output_nr.is_some()).then(|| kept.clone());
        let data = if original.is_inference() && !is_inference_mode_enabled() {
            failed(crate::Error::Runtime(INFERENCE_SAVED.into()))
        } else {
            match current_saved_tensors_hooks() {
                None => {
                    COLLECTING.with_borrow_mut(|c| {
                        if let Some(c) = c {
                            c.push(Arc::downgrade(&kept.0));
                        }
                    });
                    Data::Plain(kept)
                }
                Some(hooks) => match pack(&*hooks, &kept) {
                    Ok(packed) => Data::Packed {
                        packed,
                        edge: match output_nr {
                            None => original.gradient_edge(),
                            Some(_) => None,
                        },
                    },
                    Err(e) => failed(e),
                },
            }
        };
        let tangent = match (&data, level, output_alias) {
            (Data::Packed { .. }, Some(level), None) => original
                .tangent()
                .map(|t| Box::new((level, KeptTangent::Of(t)))),
            (Data::Packed { .. }, Some(level), Some(alias)) => {
                COLLECTING.with_borrow_mut(|c| {
                    if let Some(c) = c {
                        c.push(Arc::downgrade(&alias.0));
                    }
                });
                Some(Box::new((level, KeptTangent::OnAlias(alias))))
            }
            _ => None,
        };
        SavedTensor {
            data,
            saved_version,
            output_nr,
            tangent,
        }
    }

    pub fn unpack(&self, ctx: &BackwardCtx<'_>) -> Result<Tensor> {
        let (tensor, edge) = match &self.data {
            Data::Plain(t) => (self.check_version(t, ctx)?, None),
            Data::Packed { packed, edge } => (packed.unpack()?, edge.as_ref()),
            Data::Failed(e) => return Err(e.clone()),
        };
        if !ctx.create_graph {
            return Ok(tensor);
        }
        let unpacked = match (self.output_nr, edge) {
            (Some(nr), _) => {
                let attached = tensor.with_grad_fn(ctx.outputs_node.clone(), nr);
                if let Some(tangent) = tensor.tangent() {
                    attached.set_tangent(tangent);
                }
                attached
            }
            (None, Some(e)) if matches!(self.data, Data::Packed { .. }) => {
                tensor.with_grad_fn(e.node.clone(), e.input_nr)
            }
            _ => tensor,
        };
        if let Some((level, kept)) = self.tangent.as_deref() {
            let tangent = match kept {
                KeptTangent::Of(t) => Some(t.clone()),
                KeptTangent::OnAlias(alias) => alias.tangent(),
            };
            if let Some(tangent) = tangent.filter(|_| super::forward::open_level() == Some(*level))
            {
                unpacked.set_tangent(tangent);
            }
        }
        Ok(unpacked)
    }

    fn check_version(&self, tensor: &Tensor, ctx: &BackwardCtx<'_>) -> Result<Tensor> {
        let current = tensor.version();
        if current != self.saved_version {
            let producer = match self.output_nr {
                Some(nr) => Some((ctx.node.name().to_string(), nr)),
                None => tensor
                    .grad_fn()
                    .map(|f| (f.name().to_string(), tensor.output_nr())),
            };
            let which = match producer {
                Some((name, nr)) => format!(", which is output {nr} of {},", operation_name(&name)),
                None => String::new(),
            };
            let hint = match super::anomaly::is_enabled() {
                true => "the backtrace further above shows the operation that failed to compute its gradient. The variable in question was changed in there or anywhere later. Good luck!",
                false => "enable anomaly detection to find the operation that failed to compute its gradient, with ferrograd.autograd.set_detect_anomaly(True, check_nan=False).",
            };
            bail!(
                Runtime,
                "one of the variables needed for gradient computation has been modified by an inplace operation: [{}]{} is at version {}; expected version {} instead. Hint: {hint}",
                tensor.type_description(),
                which,
                tensor.version_as_written(current),
                tensor.version_as_written(self.saved_version)
            );
        }
        Ok(tensor.clone())
    }
}

/// A node's name as PyTorch's version-check error shows it: the operation
/// without "Backward0" or "Backward" (`ExpBackward0` is `Exp`, `SumBackward1`
/// is `Sum1`), and the nodes without a generated name under their C++ path.
fn operation_name(node_name: &str) -> String {
    match node_name {
        "CopySlices" => "ferrograd::autograd::CopySlices".to_string(),
        name => match name.strip_suffix("Backward0") {
            Some(op) => op.to_string(),
            None => name.replacen("Backward", "", 1),
        },
    }
}

/// Runs a pack hook (without hooks applied to its own saves) and checks that
/// it left its input alone.
pub fn pack(hooks: &dyn SavedTensorsHooks, t: &Tensor) -> Result<Arc<dyn PackedSaved>> {
    let version = t.version();
    let packed = with_hooks_suspended(|| hooks.pack(t))?;
    if t.version() != version {
        bail!(Runtime, "{}", PACK_IN_PLACE);
    }
    Ok(packed)
}
