//! Graph nodes. A node is the backward of one forward op: it receives one
//! gradient per forward output and returns one optional gradient per forward
//! input, which flows along `next_edges` to the nodes that produced the inputs.

use super::grad_mode::is_grad_enabled;
use crate::tensor::{DType, Shape, Tensor};
use crate::Result;
use parking_lot::Mutex;
use smallvec::SmallVec;
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub type Grads = SmallVec<[Option<Tensor>; 2]>;

/// Where a gradient goes: input `input_nr` of `node` (the forward output
/// number of the tensor whose `grad_fn` is `node`).
#[derive(Clone)]
pub struct Edge {
    pub node: Arc<Node>,
    pub input_nr: u32,
}

/// Shape and dtype of a forward output, to validate incoming gradients.
#[derive(Clone, Debug)]
pub struct OutputMeta {
    pub shape: Shape,
    pub dtype: DType,
}

/// What a backward function sees besides the gradients.
pub struct BackwardCtx<'a> {
    pub node: &'a Arc<Node>,
    pub create_graph: bool,
}

pub trait BackwardFn: Send + Sync {
    /// One gradient per forward output in, one per forward input out.
    fn apply(&self, ctx: &BackwardCtx<'_>, grads: Grads) -> Result<Grads>;
    /// Frees saved tensors once a backward that does not retain the graph
    /// has run.
    fn release_saved(&self) {}
    /// Lets bindings reach their own node types (e.g. Python Functions).
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A hook on the gradient of one output of a node (a tensor hook): it may
/// return a replacement gradient.
pub type GradHook = Arc<dyn Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync>;

/// A hook run with a leaf after its `.grad` was updated.
pub type PostAccumulateHook = Arc<dyn Fn(&Tensor) -> Result<()> + Send + Sync>;

pub struct Node {
    name: Cow<'static, str>,
    next_edges: SmallVec<[Option<Edge>; 2]>,
    outputs: SmallVec<[OutputMeta; 1]>,
    backward: Box<dyn BackwardFn>,
    /// Tensor hooks by output number, run in registration order before the
    /// node; `retain_grad` hooks run after them.
    tensor_hooks: Mutex<Vec<(u64, u32, GradHook)>>,
    retain_grad_hooks: Mutex<Vec<(u32, GradHook)>>,
    /// Set once any hook is added: the engine skips both locks otherwise.
    has_hooks: AtomicBool,
}

impl Node {
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        next_edges: SmallVec<[Option<Edge>; 2]>,
        outputs: SmallVec<[OutputMeta; 1]>,
        backward: Box<dyn BackwardFn>,
    ) -> Node {
        Node {
            name: name.into(),
            next_edges,
            outputs,
            backward,
            tensor_hooks: Mutex::new(Vec::new()),
            retain_grad_hooks: Mutex::new(Vec::new()),
            has_hooks: AtomicBool::new(false),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn next_edges(&self) -> &[Option<Edge>] {
        &self.next_edges
    }

    pub fn outputs(&self) -> &[OutputMeta] {
        &self.outputs
    }

    pub fn backward_fn(&self) -> &dyn BackwardFn {
        &*self.backward
    }

    pub fn add_tensor_hook(&self, id: u64, output_nr: u32, hook: GradHook) {
        self.tensor_hooks.lock().push((id, output_nr, hook));
        self.has_hooks.store(true, Ordering::Release);
    }

    pub fn remove_tensor_hook(&self, id: u64) -> bool {
        let mut hooks = self.tensor_hooks.lock();
        let before = hooks.len();
        hooks.retain(|(i, _, _)| *i != id);
        hooks.len() != before
    }

    /// Installs the hook that stores output `output_nr`'s gradient (once).
    pub fn set_retain_grad_hook(&self, output_nr: u32, hook: GradHook) {
        let mut hooks = self.retain_grad_hooks.lock();
        hooks.retain(|(nr, _)| *nr != output_nr);
        hooks.push((output_nr, hook));
        self.has_hooks.store(true, Ordering::Release);
    }

    /// Runs tensor hooks, then retain-grad hooks, on the incoming gradients.
    pub(crate) fn run_tensor_hooks(&self, grads: &mut Grads) -> Result<()> {
        if !self.has_hooks.load(Ordering::Acquire) {
            return Ok(());
        }
        let hooks: Vec<(u32, GradHook)> = {
            let th = self.tensor_hooks.lock();
            let rh = self.retain_grad_hooks.lock();
            if th.is_empty() && rh.is_empty() {
                return Ok(());
            }
            th.iter()
                .map(|(_, nr, h)| (*nr, h.clone()))
                .chain(rh.iter().cloned())
                .collect()
        };
        for (nr, hook) in hooks {
            if let Some(g) = grads.get(nr as usize).and_then(|g| g.clone()) {
                if let Some(new) = hook(&g)? {
                    grads[nr as usize] = Some(new);
                }
            }
        }
        Ok(())
    }

    pub(crate) fn apply(self: &Arc<Node>, grads: Grads, create_graph: bool) -> Result<Grads> {
        let ctx = BackwardCtx {
            node: self,
            create_graph,
        };
        self.backward.apply(&ctx, grads)
    }

    pub(crate) fn release_saved(&self) {
        self.backward.release_saved();
    }
}

/// Long chains would recurse once per node when the last handle goes:
/// unlink them iteratively instead, so a 10^6-op graph frees without
/// exhausting the stack.
impl Drop for Node {
    fn drop(&mut self) {
        // Saved tensors hold their own creators: drop them only after those
        // creators are in `pending`, so the drop never descends.
        let mut pending: Vec<Arc<Node>> = self
            .next_edges
            .drain(..)
            .flatten()
            .map(|e| e.node)
            .collect();
        self.backward.release_saved();
        while let Some(node) = pending.pop() {
            if let Ok(mut last) = Arc::try_unwrap(node) {
                pending.extend(last.next_edges.drain(..).flatten().map(|e| e.node));
                last.backward.release_saved();
            }
        }
    }
}

/// Whether an op on these inputs must record a node.
pub fn any_requires_grad(inputs: &[&Tensor]) -> bool {
    is_grad_enabled() && inputs.iter().any(|t| t.requires_grad())
}

/// A built-in op's backward: saved tensors (freed after backward unless the
/// graph is retained) and the formula. Non-tensor state lives in `F`.
struct OpBackward<S, F> {
    saved: Mutex<Option<S>>,
    has_saved: bool,
    formula: F,
}

impl<S, F> BackwardFn for OpBackward<S, F>
where
    S: Clone + Send + Sync + 'static,
    F: Fn(&BackwardCtx<'_>, &S, &Grads) -> Result<Grads> + Send + Sync + 'static,
{
    fn apply(&self, ctx: &BackwardCtx<'_>, grads: Grads) -> Result<Grads> {
        if grads.iter().all(|g| g.is_none()) {
            return Ok(ctx.node.next_edges().iter().map(|_| None).collect());
        }
        let saved = match self.saved.lock().clone() {
            Some(s) => s,
            None => crate::bail!(Runtime, "{}", crate::error::GRAPH_FREED),
        };
        (self.formula)(ctx, &saved, &grads)
    }

    fn release_saved(&self) {
        if self.has_saved {
            *self.saved.lock() = None;
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Records the backward of an op with one output, if any input requires
/// grad in grad mode. `save` runs only then, so frozen subgraphs save nothing.
/// The formula receives the output gradient and returns one gradient per input.
pub fn record<S, F>(
    name: &'static str,
    inputs: &[&Tensor],
    output: &Tensor,
    save: impl FnOnce() -> S,
    formula: F,
) where
    S: Clone + Send + Sync + 'static,
    F: Fn(&BackwardCtx<'_>, &S, &Tensor) -> Result<Grads> + Send + Sync + 'static,
{
    record_multi(name, inputs, &[output], save, move |ctx, s, grads| {
        let g = grads[0]
            .as_ref()
            .expect("single-output node called without a gradient");
        formula(ctx, s, g)
    })
}

/// As [`record`], for ops with several differentiable outputs; missing
/// output gradients arrive as `None`.
pub fn record_multi<S, F>(
    name: &'static str,
    inputs: &[&Tensor],
    outputs: &[&Tensor],
    save: impl FnOnce() -> S,
    formula: F,
) where
    S: Clone + Send + Sync + 'static,
    F: Fn(&BackwardCtx<'_>, &S, &Grads) -> Result<Grads> + Send + Sync + 'static,
{
    if !any_requires_grad(inputs) {
        return;
    }
    let edges = inputs.iter().map(|t| t.gradient_edge()).collect();
    let metas = outputs
        .iter()
        .map(|t| OutputMeta {
            shape: t.shape().into(),
            dtype: t.dtype(),
        })
        .collect();
    let backward = OpBackward {
        saved: Mutex::new(Some(save())),
        has_saved: std::mem::size_of::<S>() > 0,
        formula,
    };
    let node = Arc::new(Node::new(name, edges, metas, Box::new(backward)));
    for (nr, out) in outputs.iter().enumerate() {
        out.set_grad_fn(node.clone(), nr as u32);
    }
}

impl Tensor {
    /// Makes `node` this tensor's creator (output `output_nr` of it).
    pub fn set_grad_fn(&self, node: Arc<Node>, output_nr: u32) {
        let mut m = self.meta();
        m.grad_fn = Some(node);
        m.output_nr = output_nr;
    }

    /// An alias of this tensor whose creator is `node`.
    pub fn with_grad_fn(&self, node: Arc<Node>, output_nr: u32) -> Tensor {
        let t = self.alias(self.layout().clone());
        t.set_grad_fn(node, output_nr);
        t
    }
}
