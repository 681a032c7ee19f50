//! Graph nodes. A node is the backward of one forward op: it receives one
//! gradient per forward output and returns one optional gradient per forward
//! input, which flows along `next_edges` to the nodes that produced the inputs.

use super::grad_mode::is_grad_enabled;
use crate::tensor::{DType, Shape, Tensor, TensorImpl};
use crate::Result;
use parking_lot::{Mutex, RwLock};
use smallvec::SmallVec;
use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

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

impl OutputMeta {
    /// The shape and dtype of `t`.
    pub fn of(t: &Tensor) -> OutputMeta {
        OutputMeta {
            shape: Shape::from_slice(t.shape()),
            dtype: t.dtype(),
        }
    }
}

/// What a backward function sees besides the gradients.
pub struct BackwardCtx<'a> {
    pub node: &'a Arc<Node>,
    /// The node whose outputs saved outputs are unpacked as (under
    /// `create_graph`): `node`, except while a tangent is computed, when
    /// the formula runs on a stand-in and the outputs keep the node that
    /// recorded them, so that the tangent's history reaches through them.
    pub outputs_node: &'a Arc<Node>,
    pub create_graph: bool,
}

impl BackwardCtx<'_> {
    /// Whether forward input `i` takes a gradient: a formula whose inputs'
    /// gradients cost work of their own skips those nobody receives.
    pub fn needs_grad(&self, i: usize) -> bool {
        matches!(self.node.next_edges().get(i), Some(Some(_)))
    }
}

pub trait BackwardFn: Send + Sync {
    /// One gradient per forward output in, one per forward input out.
    fn apply(&self, ctx: &BackwardCtx<'_>, grads: Grads) -> Result<Grads>;
    /// Frees saved tensors once a backward that does not retain the graph
    /// has run.
    fn release_saved(&self) {}
    /// Lets bindings reach their own node types (e.g. Python Functions).
    fn as_any(&self) -> &dyn std::any::Any;
    /// The tensors saved for backward, as far as they are known.
    fn saved_refs(&self) -> &[Weak<TensorImpl>] {
        &[]
    }
}

/// A hook on the gradient of one output of a node (a tensor hook): it may
/// return a replacement gradient.
pub type GradHook = Arc<dyn Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync>;

/// A node pre-hook: sees the gradients arriving at the node (one per
/// forward output) and may replace them.
pub type NodePreHook = Arc<dyn Fn(&Grads) -> Result<Option<Grads>> + Send + Sync>;

/// A node post-hook: sees the gradients the node computed (one per forward
/// input) and those it received, and may replace the computed ones.
pub type NodePostHook = Arc<dyn Fn(&Grads, &Grads) -> Result<Option<Grads>> + Send + Sync>;

/// Hooks on a node, by kind; each with an id for removal.
#[derive(Default)]
struct NodeHooks {
    /// Tensor hooks by output number, run in registration order.
    tensor: Vec<(u64, u32, GradHook)>,
    /// `retain_grad`, run after the tensor hooks (it sees their result).
    retain_grad: Vec<(u32, GradHook)>,
    pre: Vec<(u64, NodePreHook)>,
    post: Vec<(u64, NodePostHook)>,
}

/// A hook run with a leaf after its `.grad` was updated.
pub type PostAccumulateHook = Arc<dyn Fn(&Tensor) -> Result<()> + Send + Sync>;

/// When a node was made: the making thread and that thread's count of
/// nodes made before. Nodes are made after their inputs' nodes, so a node
/// made before a mark of its own thread cannot reach a node made after it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct NodeMark {
    thread: u32,
    count: u64,
}

static THREADS_MAKING_NODES: AtomicU32 = AtomicU32::new(0);

thread_local! {
    /// This thread's next mark (a thread counter, not a global one: nodes
    /// are made on the hot path).
    static NEXT_MARK: Cell<NodeMark> = Cell::new(NodeMark {
        thread: THREADS_MAKING_NODES.fetch_add(1, Ordering::Relaxed),
        count: 0,
    });
}

impl NodeMark {
    /// The mark the next node made on this thread gets.
    pub fn next() -> NodeMark {
        NEXT_MARK.get()
    }

    fn take() -> NodeMark {
        NEXT_MARK.with(|m| {
            let mark = m.get();
            m.set(NodeMark {
                count: mark.count + 1,
                ..mark
            });
            mark
        })
    }

    /// Whether this mark was taken before `later` on the same thread.
    pub(crate) fn is_before(self, later: NodeMark) -> bool {
        self.thread == later.thread && self.count < later.count
    }
}

/// A graph node with its backward function `B` stored behind it, in one
/// allocation: nodes are handled as [`Node`], the backward's type erased.
pub struct NodeWith<B: ?Sized + BackwardFn> {
    name: Cow<'static, str>,
    pub(crate) made: NodeMark,
    next_edges: SmallVec<[Option<Edge>; 2]>,
    outputs: SmallVec<[OutputMeta; 1]>,
    /// Made when the first hook is added: most nodes never have one, and
    /// the engine then skips the lock.
    hooks: OnceLock<Box<Mutex<NodeHooks>>>,
    /// Where the forward ran, recorded under anomaly detection.
    forward_trace: Option<Arc<str>>,
    /// While a backward call discovers its graph: that call's stamp (high
    /// half) and this node's index in it (low half); 0 when unclaimed.
    pub(crate) discovery: AtomicU64,
    backward: B,
}

pub type Node = NodeWith<dyn BackwardFn>;

impl<B: BackwardFn> NodeWith<B> {
    /// A node to put in an `Arc<Node>` (which erases `B`).
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        next_edges: SmallVec<[Option<Edge>; 2]>,
        outputs: SmallVec<[OutputMeta; 1]>,
        backward: B,
    ) -> NodeWith<B> {
        NodeWith {
            name: name.into(),
            made: NodeMark::take(),
            next_edges,
            outputs,
            hooks: OnceLock::new(),
            forward_trace: super::anomaly::capture(),
            discovery: AtomicU64::new(0),
            backward,
        }
    }
}

impl Node {
    /// The traceback of the forward call that created this node, when
    /// anomaly detection was enabled then.
    pub fn forward_trace(&self) -> Option<&str> {
        self.forward_trace.as_deref()
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
        &self.backward
    }

    fn with_hooks(&self, f: impl FnOnce(&mut NodeHooks)) {
        f(&mut self.hooks.get_or_init(Default::default).lock());
    }

    pub fn add_tensor_hook(&self, id: u64, output_nr: u32, hook: GradHook) {
        self.with_hooks(|h| h.tensor.push((id, output_nr, hook)));
    }

    /// Installs the hook that stores output `output_nr`'s gradient (once).
    pub fn set_retain_grad_hook(&self, output_nr: u32, hook: GradHook) {
        self.with_hooks(|h| {
            h.retain_grad.retain(|(nr, _)| *nr != output_nr);
            h.retain_grad.push((output_nr, hook));
        });
    }

    /// Moves the hook that stores output `output_nr`'s gradient to output
    /// `to_nr` of `to`: a tensor that retains its gradient and was given a
    /// new history (by an in-place op, or as a view of a base written in
    /// place) keeps the gradient of its new value, as in PyTorch.
    pub(crate) fn move_retain_grad_hook(&self, output_nr: u32, to: &Node, to_nr: u32) {
        let Some(hooks) = self.hooks.get() else {
            return;
        };
        let hook = {
            let mut h = hooks.lock();
            let Some(at) = h.retain_grad.iter().position(|(nr, _)| *nr == output_nr) else {
                return;
            };
            h.retain_grad.remove(at).1
        };
        to.set_retain_grad_hook(to_nr, hook);
    }

    pub fn add_pre_hook(&self, id: u64, hook: NodePreHook) {
        self.with_hooks(|h| h.pre.push((id, hook)));
    }

    pub fn add_post_hook(&self, id: u64, hook: NodePostHook) {
        self.with_hooks(|h| h.post.push((id, hook)));
    }

    /// Removes a tensor, pre- or post-hook; false if there was none.
    pub fn remove_hook(&self, id: u64) -> bool {
        let Some(hooks) = self.hooks.get() else {
            return false;
        };
        let mut h = hooks.lock();
        let before = h.tensor.len() + h.pre.len() + h.post.len();
        h.tensor.retain(|(i, _, _)| *i != id);
        h.pre.retain(|(i, _)| *i != id);
        h.post.retain(|(i, _)| *i != id);
        h.tensor.len() + h.pre.len() + h.post.len() != before
    }

    /// Whether post-hooks need the incoming gradients kept.
    pub(crate) fn has_post_hooks(&self) -> bool {
        self.hooks.get().is_some_and(|h| !h.lock().post.is_empty())
    }

    /// Before the node runs: tensor hooks, retain-grad hooks, then node
    /// pre-hooks, on the incoming gradients. Hooks run without the lock held.
    pub(crate) fn run_pre_hooks(&self, grads: &mut Grads) -> Result<()> {
        let Some(hooks) = self.hooks.get() else {
            return Ok(());
        };
        let (tensor, pre) = {
            let h = hooks.lock();
            let tensor: Vec<(u32, GradHook)> = h
                .tensor
                .iter()
                .map(|(_, nr, f)| (*nr, f.clone()))
                .chain(h.retain_grad.iter().cloned())
                .collect();
            (
                tensor,
                h.pre.iter().map(|(_, f)| f.clone()).collect::<Vec<_>>(),
            )
        };
        for (nr, hook) in tensor {
            if let Some(g) = grads.get(nr as usize).and_then(|g| g.clone()) {
                if let Some(new) = hook(&g)? {
                    grads[nr as usize] = Some(new);
                }
            }
        }
        for hook in pre {
            if let Some(new) = hook(grads)? {
                *grads = new;
            }
        }
        Ok(())
    }

    /// After the node ran: node post-hooks on its results.
    pub(crate) fn run_post_hooks(&self, received: &Grads, computed: &mut Grads) -> Result<()> {
        let Some(hooks) = self.hooks.get() else {
            return Ok(());
        };
        let post: Vec<NodePostHook> = hooks.lock().post.iter().map(|(_, f)| f.clone()).collect();
        for hook in post {
            if let Some(new) = hook(computed, received)? {
                *computed = new;
            }
        }
        Ok(())
    }

    pub(crate) fn apply(self: &Arc<Node>, grads: Grads, create_graph: bool) -> Result<Grads> {
        let ctx = BackwardCtx {
            node: self,
            outputs_node: self,
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
impl<B: ?Sized + BackwardFn> Drop for NodeWith<B> {
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
        while let Some(mut node) = pending.pop() {
            // A node held only here is emptied where it lies, so that its
            // own drop finds nothing to descend into. One that a weak handle
            // also names (a leaf's accumulator) is dropped as it is: its
            // drop unlinks what it holds the same way.
            if let Some(last) = Arc::get_mut(&mut node) {
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

/// Whether an op must save what the gradient with respect to its input `t`
/// needs: `t` requires grad, or carries a tangent, which forward AD
/// computes through the op's backward formula.
pub fn needs_input_grad(t: &Tensor) -> bool {
    t.requires_grad() || super::forward::any_tangent(&[t])
}

/// A built-in op's backward: saved tensors (freed after backward unless the
/// graph is retained) and the formula. Non-tensor state lives in `F`.
/// The formula reads the saved values under a read lock, without copying
/// them: backward calls sharing a retained graph read them side by side,
/// and freeing them waits for the readers.
struct OpBackward<S, F> {
    saved: RwLock<Option<S>>,
    has_saved: bool,
    formula: F,
    saved_refs: super::saved::SavedRefs,
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
        let saved = self.saved.read();
        let Some(saved) = saved.as_ref() else {
            crate::bail!(Runtime, "{}", crate::error::GRAPH_FREED);
        };
        (self.formula)(ctx, saved, &grads)
    }

    fn release_saved(&self) {
        if self.has_saved {
            *self.saved.write() = None;
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn saved_refs(&self) -> &[Weak<TensorImpl>] {
        &self.saved_refs
    }
}

/// Records the backward of an op with one output, if any input requires
/// grad in grad mode. `save` runs only then, so frozen subgraphs save nothing.
/// The formula receives the output gradient and returns one gradient per input.
pub fn record<S, F>(
    name: &'static str,
    inputs: &[&Tensor],
    output: &Tensor,
    save: impl Fn() -> S,
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
    save: impl Fn() -> S,
    formula: F,
) where
    S: Clone + Send + Sync + 'static,
    F: Fn(&BackwardCtx<'_>, &S, &Grads) -> Result<Grads> + Send + Sync + 'static,
{
    if !is_grad_enabled() {
        if super::forward::any_tangent(inputs) {
            propagate_tangents(name, inputs, outputs, &save, &formula, None);
        }
        return;
    }
    // One look at each input's record tells both whether it requires grad
    // and where its gradient goes.
    let edges: SmallVec<[Option<Option<Edge>>; 2]> =
        inputs.iter().map(|t| t.recording_edge()).collect();
    if edges.iter().all(Option::is_none) {
        if super::forward::any_tangent(inputs) {
            propagate_tangents(name, inputs, outputs, &save, &formula, None);
        }
        return;
    }
    let edges = edges.into_iter().map(Option::flatten).collect();
    let metas = outputs.iter().map(|t| OutputMeta::of(t)).collect();
    let forward = super::forward::any_tangent(inputs);
    let (saved, saved_refs) = super::saved::collect_saved(&save);
    let backward = OpBackward {
        saved: RwLock::new(Some(saved)),
        has_saved: std::mem::size_of::<S>() > 0,
        formula,
        saved_refs,
    };
    let node: Arc<NodeWith<OpBackward<S, F>>> =
        Arc::new(NodeWith::new(name, edges, metas, backward));
    for (nr, out) in outputs.iter().enumerate() {
        out.set_grad_fn(node.clone(), nr as u32);
    }
    // After the outputs joined the graph: their tangents' history (under
    // `create_graph`-like recording) then reaches through them.
    if forward {
        let recorded: Arc<Node> = node.clone();
        propagate_tangents(
            name,
            inputs,
            outputs,
            &save,
            &node.backward.formula,
            Some(&recorded),
        );
        super::forward::share_with_saved_outputs(inputs, outputs, &node.backward.saved_refs);
    }
}

/// Gives the outputs of an op their tangents (see
/// [`super::forward::propagate`]). Recording has no error path: a
/// failure is kept with the outputs and raised when their tangents are read.
fn propagate_tangents<S, F>(
    name: &'static str,
    inputs: &[&Tensor],
    outputs: &[&Tensor],
    save: &dyn Fn() -> S,
    formula: &F,
    recorded: Option<&Arc<Node>>,
) where
    F: Fn(&BackwardCtx<'_>, &S, &Grads) -> Result<Grads>,
{
    // What the formula reads, saved again without the saved-tensor hooks in
    // force: those pack for backward (a checkpoint's would recompute its
    // region now), while a tangent needs the values as they are.
    let saved = super::saved::with_hooks_suspended(save);
    if let Err(e) = super::forward::propagate(name, inputs, outputs, recorded, &saved, formula) {
        super::forward::mark_failed(outputs, name, e);
    }
}

/// Calls `node_fn` on each node that `t` alone keeps alive, and `hook_fn`
/// with the id of each hook on `t` (as a leaf) or on those nodes. Used to
/// tell a garbage collector which objects a graph owns.
///
/// A node or a saved tensor is owned when every strong reference to it
/// comes from `t` or from what `t` owns: its `grad_fn`, the nodes it reaches,
/// the tensors they saved and their `grad_fn`s. References the walk cannot
/// see make it conservative (nothing beyond them is visited), and a part
/// whose lock is busy is skipped, and so is what lies beyond the first
/// [`OWNED_WALK_LIMIT`] objects.
pub fn for_each_owned(t: &Tensor, node_fn: &mut dyn FnMut(&Node), hook_fn: &mut dyn FnMut(u64)) {
    if Arc::strong_count(&t.0) != 1 {
        return;
    }
    let Some(meta) = t.0.autograd.try_lock() else {
        return;
    };
    if let Some(hooks) = &meta.leaf_hooks {
        hooks
            .on_grad
            .iter()
            .map(|(id, _)| *id)
            .chain(hooks.post_accumulate.iter().map(|(id, _)| *id))
            .for_each(&mut *hook_fn);
    }
    let Some(root) = meta.grad_fn.clone() else {
        return;
    };
    drop(meta);
    // Each object seen, with one handle of our own, the references to it
    // found so far from owned objects, and whether it is owned: it is once
    // those references explain its strong count (less our handles).
    let mut nodes: HashMap<usize, Seen<Node>> = HashMap::new();
    let mut tensors: HashMap<usize, Seen<TensorImpl>> = HashMap::new();
    let mut owned_nodes: Vec<usize> = Vec::new();
    let mut owned_tensors: Vec<usize> = Vec::new();
    // `root` is a second handle while it is counted.
    Seen::found(&mut nodes, &root, 1, &mut owned_nodes);
    drop(root);
    // A garbage collector calls this often: only the part of the graph
    // near `t` is looked at, which finds the usual cycles (a ctx or hook
    // referring to an output) at a bounded cost.
    while nodes.len() + tensors.len() <= OWNED_WALK_LIMIT {
        if let Some(key) = owned_nodes.pop() {
            let node = nodes[&key].handle.clone();
            node_fn(&node);
            if let Some(h) = node.hooks.get().and_then(|h| h.try_lock()) {
                h.tensor
                    .iter()
                    .map(|(id, _, _)| *id)
                    .chain(h.pre.iter().map(|(id, _)| *id))
                    .chain(h.post.iter().map(|(id, _)| *id))
                    .for_each(&mut *hook_fn);
            }
            for e in node.next_edges.iter().flatten() {
                Seen::found(&mut nodes, &e.node, 0, &mut owned_nodes);
            }
            for saved in node.backward.saved_refs() {
                if let Some(impl_) = saved.upgrade() {
                    Seen::found(&mut tensors, &impl_, 1, &mut owned_tensors);
                }
            }
        } else if let Some(key) = owned_tensors.pop() {
            let grad_fn = tensors[&key]
                .handle
                .autograd
                .try_lock()
                .and_then(|m| m.grad_fn.clone());
            if let Some(node) = grad_fn {
                Seen::found(&mut nodes, &node, 1, &mut owned_nodes);
            }
        } else {
            break;
        }
    }
}

/// How many objects [`for_each_owned`] looks at, at most.
const OWNED_WALK_LIMIT: usize = 64;

/// An object met while looking for what a tensor owns.
struct Seen<T: ?Sized> {
    handle: Arc<T>,
    refs: usize,
    owned: bool,
}

impl<T: ?Sized> Seen<T> {
    /// Counts one more reference to `obj` from an owned object; `extra` is
    /// how many other temporary handles the caller holds. Queues it once
    /// owned.
    fn found(
        map: &mut HashMap<usize, Seen<T>>,
        obj: &Arc<T>,
        extra: usize,
        owned: &mut Vec<usize>,
    ) {
        let key = Arc::as_ptr(obj).cast::<()>() as usize;
        let seen = map.entry(key).or_insert_with(|| Seen {
            handle: obj.clone(),
            refs: 0,
            owned: false,
        });
        seen.refs += 1;
        if !seen.owned && Arc::strong_count(&seen.handle) == seen.refs + 1 + extra {
            seen.owned = true;
            owned.push(key);
        }
    }
}

impl Tensor {
    /// Makes `node` this tensor's creator (output `output_nr` of it).
    pub fn set_grad_fn(&self, node: Arc<Node>, output_nr: u32) {
        let mut m = self.meta();
        let old = match m.retains_grad {
            true => m.grad_fn.take().map(|f| (f, m.output_nr)),
            false => None,
        };
        m.grad_fn = Some(node.clone());
        m.output_nr = output_nr;
        drop(m);
        if let Some((f, nr)) = old {
            f.move_retain_grad_hook(nr, &node, output_nr);
        }
    }

    /// An alias of this tensor whose creator is `node`.
    pub fn with_grad_fn(&self, node: Arc<Node>, output_nr: u32) -> Tensor {
        let t = self.alias(self.layout().clone());
        t.set_grad_fn(node, output_nr);
        t
    }
}
