//! The backward engine.
//!
//! A call discovers the nodes reachable from its roots once, counting for
//! each how many edges feed it. A node runs when every contribution has
//! arrived; its outputs are summed into the input buffers of the nodes they
//! feed (one lock per buffer, never a global one). Chains and small graphs
//! run inline on the calling thread; when several heavy nodes are ready at
//! once they run side by side on the rayon pool. Callers release the GIL for
//! the whole call; nodes that run Python take it themselves.

use super::accumulate::{accumulate_into, is_sole_dense_handle, AccumulateGrad};
use super::forward;
use super::grad_mode::GradModeGuard;
use super::node::{Edge, Grads, Node, NodeMark};
use crate::ops;
use crate::tensor::layout::fmt_shape;
use crate::tensor::{Scalar, Tensor};
use crate::{bail, Error, Result};
use parking_lot::Mutex;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Gradients with at least this many elements make a node worth a thread.
const PARALLEL_MIN_NUMEL: usize = 1 << 15;

/// `tensors[i].backward(grad_tensors[i])` for all i at once, accumulating
/// into the `.grad` of leaves (only of `inputs`, when given).
pub fn backward(
    tensors: &[Tensor],
    grad_tensors: &[Option<Tensor>],
    retain_graph: Option<bool>,
    create_graph: bool,
    inputs: Option<&[Tensor]>,
) -> Result<()> {
    let roots = make_roots(tensors, grad_tensors)?;
    let targets = match inputs {
        Some(inputs) => {
            if inputs.is_empty() {
                bail!(
                    Runtime,
                    "`inputs` argument to `backward()` cannot be empty."
                );
            }
            Some(input_edges(inputs)?)
        }
        None => None,
    };
    let mode = Mode::Accumulate {
        targets: inputs.map(|i| i.to_vec()),
    };
    let task = GraphTask::new(
        roots,
        targets,
        mode,
        retain_graph.unwrap_or(create_graph),
        create_graph,
        None,
    )?;
    task.run()?;
    Ok(())
}

/// `autograd.grad`: the gradients of `outputs` with respect to `inputs`,
/// without touching any `.grad`.
pub fn grad(
    outputs: &[Tensor],
    inputs: &[Tensor],
    grad_outputs: &[Option<Tensor>],
    retain_graph: Option<bool>,
    create_graph: bool,
    allow_unused: bool,
) -> Result<Vec<Option<Tensor>>> {
    let roots = make_roots(outputs, grad_outputs)?;
    let targets = input_edges(inputs)?;
    let task = GraphTask::new(
        roots,
        Some(targets),
        Mode::Capture,
        retain_graph.unwrap_or(create_graph),
        create_graph,
        None,
    )?;
    let captured = task.run()?;
    used_gradients(captured, allow_unused)
}

/// The gradients of `outputs` (of one element each, seeded with ones) with
/// respect to `inputs`, all of whose nodes were made on this thread at or
/// after `since`: the walk skips every node made before, which cannot
/// reach them. A tangent's products (see `forward`) reach the whole
/// history of the op's inputs, which the walk would otherwise visit once
/// per op. `None` for an input that was not used.
pub fn grad_since(
    outputs: &[Tensor],
    inputs: &[Tensor],
    create_graph: bool,
    since: NodeMark,
) -> Result<Vec<Option<Tensor>>> {
    let roots = make_roots(outputs, &vec![None; outputs.len()])?;
    let targets = input_edges(inputs)?;
    let task = GraphTask::new(
        roots,
        Some(targets),
        Mode::Capture,
        create_graph,
        create_graph,
        Some(since),
    )?;
    used_gradients(task.run()?, true)
}

/// The captured gradients, an error for a missing one unless `allow_unused`.
fn used_gradients(
    captured: Vec<Option<Tensor>>,
    allow_unused: bool,
) -> Result<Vec<Option<Tensor>>> {
    captured
        .into_iter()
        .enumerate()
        .map(|(i, g)| match g {
            Some(g) => Ok(Some(g)),
            None if allow_unused => Ok(None),
            None => bail!(
                Runtime,
                "The differentiated Tensor at index {i} appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior."
            ),
        })
        .collect()
}

fn shape_str(t: &Tensor) -> String {
    format!("ferrograd.Size({})", fmt_shape(t.shape()))
}

fn make_roots(tensors: &[Tensor], grads: &[Option<Tensor>]) -> Result<Vec<(Edge, Tensor)>> {
    if tensors.len() != grads.len() {
        bail!(
            Runtime,
            "got {} tensors and {} gradients",
            tensors.len(),
            grads.len()
        );
    }
    let mut roots = Vec::with_capacity(tensors.len());
    for (i, (t, g)) in tensors.iter().zip(grads).enumerate() {
        let grad = match g {
            Some(g) => {
                if g.shape() != t.shape() {
                    bail!(
                        Runtime,
                        "Mismatch in shape: grad_output[{i}] has a shape of {} and output[{i}] has a shape of {}.",
                        shape_str(g),
                        shape_str(t)
                    );
                }
                if g.dtype().is_complex() != t.dtype().is_complex() {
                    bail!(
                        Runtime,
                        "For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {} and output[{i}] has a dtype of {}.",
                        g.dtype(),
                        t.dtype()
                    );
                }
                g.clone()
            }
            None => {
                if t.requires_grad() && t.numel() != 1 {
                    bail!(
                        Runtime,
                        "grad can be implicitly created only for scalar outputs"
                    );
                }
                if t.requires_grad() && t.dtype().is_complex() {
                    bail!(
                        Runtime,
                        "grad can be implicitly created only for real scalar outputs but got {}",
                        t.dtype()
                    );
                }
                Tensor::full(t.shape(), Scalar::Int(1), t.dtype())?
            }
        };
        match t.gradient_edge() {
            Some(edge) => roots.push((edge, grad)),
            None => bail!(
                Runtime,
                "element {i} of tensors does not require grad and does not have a grad_fn"
            ),
        }
    }
    Ok(roots)
}

fn input_edges(inputs: &[Tensor]) -> Result<Vec<Edge>> {
    inputs
        .iter()
        .map(|t| match t.gradient_edge() {
            Some(e) => Ok(e),
            None => bail!(
                Runtime,
                "One of the differentiated Tensors does not require grad"
            ),
        })
        .collect()
}

/// A gradient waiting to be summed: (order key, input number, gradient).
type Arrival = (u64, u32, Tensor);

enum Mode {
    /// `backward()`: accumulate into `.grad` of leaves, or of `targets` only.
    Accumulate { targets: Option<Vec<Tensor>> },
    /// `grad()`: return the gradients arriving at the targets.
    Capture,
}

struct GraphTask {
    /// Tells this call apart from others running or run before.
    id: u64,
    nodes: Vec<Arc<Node>>,
    /// Per node, per next edge: the index of the node it feeds, when that
    /// node takes part in this call.
    children: Vec<SmallVec<[Option<u32>; 2]>>,
    deps: Vec<AtomicU32>,
    buffers: Vec<Mutex<Grads>>,
    /// In deterministic mode, per node: the contributions to its inputs as
    /// (order key, input number, gradient), summed in key order when it runs.
    arrivals: Vec<Mutex<SmallVec<[Arrival; 2]>>>,
    /// Whether a node's backward runs (else it is only reached to capture).
    execute: Vec<bool>,
    /// Per node: (input number, capture slot or target tensor index).
    captures: FxHashMap<u32, SmallVec<[(u32, usize); 1]>>,
    captured: Mutex<Vec<Option<Tensor>>>,
    mode: Mode,
    roots: Vec<u32>,
    retain_graph: bool,
    /// Whether the nodes' ops propagate tangents: as on the thread that
    /// started the call.
    tangents: bool,
    create_graph: bool,
    /// Whether only the paths to some inputs run (`grad`, `backward(inputs=)`).
    partial: bool,
    parallel: bool,
    /// Nodes handed to the pool that no thread has started yet: while there
    /// are some, the thread that called backward keeps its products whole
    /// as workers do (see `crate::parallel::has_queued_jobs`).
    queued: Arc<AtomicUsize>,
    failed: AtomicBool,
    error: Mutex<Option<Error>>,
}

/// Numbers the nodes of one backward call's graph. A node is claimed by
/// writing the call's stamp and its index into `Node::discovery`, so that
/// meeting it again along another edge costs one atomic load rather than a
/// hash lookup. A node already claimed by a concurrent call (threads
/// discovering a shared graph at the same moment) is numbered in a hash map
/// instead. Claims are released once discovery ends, even on unwinding.
struct Discovery {
    /// This call's stamp, in the high half of a `discovery` word.
    stamp: u64,
    nodes: Vec<Arc<Node>>,
    dep_counts: Vec<u32>,
    fallback: FxHashMap<*const (), u32>,
}

static NEXT_STAMP: AtomicU32 = AtomicU32::new(1);
static NEXT_TASK_ID: AtomicU64 = AtomicU64::new(0);

impl Discovery {
    fn new() -> Discovery {
        // Stamps wrap after 2^32 calls; claims never outlive their call, so
        // only 0 (unclaimed) must be skipped.
        let stamp = match NEXT_STAMP.fetch_add(1, Ordering::Relaxed) {
            0 => NEXT_STAMP.fetch_add(1, Ordering::Relaxed),
            s => s,
        };
        Discovery {
            stamp: u64::from(stamp) << 32,
            nodes: Vec::new(),
            dep_counts: Vec::new(),
            fallback: FxHashMap::default(),
        }
    }

    /// The number of a node met before, if any.
    fn find(&self, node: &Node) -> Option<u32> {
        let mark = node.discovery.load(Ordering::Relaxed);
        if mark >> 32 << 32 == self.stamp {
            return Some(mark as u32);
        }
        self.fallback
            .get(&std::ptr::from_ref(node).cast::<()>())
            .copied()
    }

    /// The number of `node`, and whether it was met for the first time.
    fn intern(&mut self, node: &Arc<Node>) -> (u32, bool) {
        if let Some(i) = self.find(node) {
            return (i, false);
        }
        let i = self.nodes.len() as u32;
        let claim = self.stamp | u64::from(i);
        let claimed = node
            .discovery
            .compare_exchange(0, claim, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok();
        if !claimed {
            self.fallback.insert(Arc::as_ptr(node).cast::<()>(), i);
        }
        self.nodes.push(node.clone());
        self.dep_counts.push(0);
        (i, true)
    }

    /// Releases the claims and hands over the nodes and their edge counts.
    fn finish(mut self) -> (Vec<Arc<Node>>, Vec<u32>) {
        self.release();
        (
            std::mem::take(&mut self.nodes),
            std::mem::take(&mut self.dep_counts),
        )
    }

    fn release(&self) {
        for (i, node) in self.nodes.iter().enumerate() {
            let claim = self.stamp | i as u64;
            let _ = node
                .discovery
                .compare_exchange(claim, 0, Ordering::Relaxed, Ordering::Relaxed);
        }
    }
}

impl Drop for Discovery {
    fn drop(&mut self) {
        self.release();
    }
}

impl GraphTask {
    /// With `since`, the walk leaves out the nodes made on this thread
    /// before that mark (see [`grad_since`]).
    fn new(
        roots: Vec<(Edge, Tensor)>,
        targets: Option<Vec<Edge>>,
        mode: Mode,
        retain_graph: bool,
        create_graph: bool,
        since: Option<NodeMark>,
    ) -> Result<GraphTask> {
        // Discover the graph, numbering nodes and counting incoming edges.
        let mut found = Discovery::new();
        let mut stack: Vec<u32> = Vec::new();
        let mut root_ids = Vec::new();
        for (edge, _) in &roots {
            let (i, new) = found.intern(&edge.node);
            root_ids.push(i);
            if new {
                stack.push(i);
            }
        }
        let mut children: Vec<SmallVec<[Option<u32>; 2]>> = Vec::new();
        while let Some(i) = stack.pop() {
            let node = found.nodes[i as usize].clone();
            let mut kids = SmallVec::new();
            for edge in node.next_edges() {
                let edge = edge
                    .as_ref()
                    .filter(|e| since.is_none_or(|since| !e.node.made.is_before(since)));
                kids.push(edge.map(|e| {
                    let (j, new) = found.intern(&e.node);
                    found.dep_counts[j as usize] += 1;
                    if new {
                        stack.push(j);
                    }
                    j
                }));
            }
            if children.len() <= i as usize {
                children.resize(found.nodes.len().max(i as usize + 1), SmallVec::new());
            }
            children[i as usize] = kids;
        }
        let target_ids: Option<Vec<Option<u32>>> = targets
            .as_ref()
            .map(|targets| targets.iter().map(|e| found.find(&e.node)).collect());
        let (nodes, dep_counts) = found.finish();
        children.resize(nodes.len(), SmallVec::new());
        let n = nodes.len();

        // With targets, only nodes on a path to a target take part.
        let mut captures: FxHashMap<u32, SmallVec<[(u32, usize); 1]>> = FxHashMap::default();
        let (reached, execute) = match &targets {
            None => (vec![true; n], vec![true; n]),
            Some(targets) => {
                let mut reached = vec![false; n];
                let mut is_target = vec![false; n];
                let ids = target_ids.as_deref().unwrap_or_default();
                for (slot, (e, id)) in targets.iter().zip(ids).enumerate() {
                    if let Some(i) = *id {
                        is_target[i as usize] = true;
                        reached[i as usize] = true;
                        captures.entry(i).or_default().push((e.input_nr, slot));
                    }
                }
                // Propagate reachability from targets back towards roots.
                let mut parents: Vec<SmallVec<[u32; 2]>> = vec![SmallVec::new(); n];
                for (i, kids) in children.iter().enumerate() {
                    for &j in kids.iter().flatten() {
                        parents[j as usize].push(i as u32);
                    }
                }
                let mut work: Vec<u32> = (0..n as u32).filter(|&i| reached[i as usize]).collect();
                while let Some(j) = work.pop() {
                    for &p in &parents[j as usize] {
                        if !reached[p as usize] {
                            reached[p as usize] = true;
                            work.push(p);
                        }
                    }
                }
                let accumulate = matches!(mode, Mode::Accumulate { .. });
                let execute = (0..n)
                    .map(|i| {
                        children[i].iter().flatten().any(|&j| reached[j as usize])
                            || (accumulate
                                && is_target[i]
                                && nodes[i].backward_fn().as_any().is::<AccumulateGrad>())
                    })
                    .collect();
                (reached, execute)
            }
        };
        // Edges into nodes that take no part in this call are dropped.
        for kids in children.iter_mut() {
            for k in kids.iter_mut() {
                if k.is_some_and(|j| !reached[j as usize]) {
                    *k = None;
                }
            }
        }

        let buffers: Vec<Mutex<Grads>> = nodes
            .iter()
            .map(|n| Mutex::new(n.outputs().iter().map(|_| None).collect()))
            .collect();
        let arrivals = match crate::parallel::deterministic() {
            true => (0..n).map(|_| Mutex::new(SmallVec::new())).collect(),
            false => Vec::new(),
        };
        let heavy = nodes
            .iter()
            .filter(|n| {
                n.outputs()
                    .iter()
                    .any(|m| crate::tensor::layout::numel(&m.shape) >= PARALLEL_MIN_NUMEL)
            })
            .count();
        let parallel = heavy >= 2 && crate::parallel::num_threads() > 1;
        let slots = targets.as_ref().map_or(0, |t| t.len());
        let mut root_ids_dedup = root_ids.clone();
        root_ids_dedup.sort_unstable();
        root_ids_dedup.dedup();
        root_ids_dedup.retain(|&i| dep_counts[i as usize] == 0 && reached[i as usize]);
        let task = GraphTask {
            id: NEXT_TASK_ID.fetch_add(1, Ordering::Relaxed),
            deps: dep_counts.into_iter().map(AtomicU32::new).collect(),
            nodes,
            children,
            buffers,
            arrivals,
            execute,
            captures,
            captured: Mutex::new(vec![None; slots]),
            mode,
            roots: root_ids_dedup,
            retain_graph,
            tangents: forward::is_enabled(),
            create_graph,
            partial: targets.is_some(),
            parallel,
            queued: Arc::new(AtomicUsize::new(0)),
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
        };
        for (r, ((edge, g), &i)) in roots.into_iter().zip(&root_ids).enumerate() {
            task.deliver(i as usize, edge.input_nr as usize, r as u64, g)?;
        }
        Ok(task)
    }

    /// Adds gradient `g` for input `slot` of node `node`. `key` orders the
    /// contributions when they must be summed deterministically: roots by
    /// position, then the outputs of nodes by discovery order and index.
    fn deliver(&self, node: usize, slot: usize, key: u64, g: Tensor) -> Result<()> {
        match self.arrivals.get(node) {
            Some(arrivals) => {
                arrivals.lock().push((key, slot as u32, g));
                Ok(())
            }
            None => accumulate_buffer(&self.buffers[node], slot, g, self.create_graph),
        }
    }

    /// A node's summed input gradients, taken out of its buffer.
    fn take_inputs(&self, node: usize) -> Result<Grads> {
        let mut grads = std::mem::take(&mut *self.buffers[node].lock());
        if let Some(arrivals) = self.arrivals.get(node) {
            let mut arrivals = std::mem::take(&mut *arrivals.lock());
            arrivals.sort_unstable_by_key(|&(key, _, _)| key);
            for (_, slot, g) in arrivals {
                let slot = &mut grads[slot as usize];
                *slot = Some(match slot.take() {
                    Some(prev) => sum_gradients(prev, g, self.create_graph)?,
                    None => g,
                });
            }
        }
        Ok(grads)
    }

    fn run(self) -> Result<Vec<Option<Tensor>>> {
        if self.parallel {
            // The calling thread drives the first root itself: handing it
            // to a worker and being woken at the end measured about a tenth
            // of a training step of a small MLP.
            let task = &self;
            let _tracking = crate::parallel::track_queued_jobs(task.queued.clone());
            crate::parallel::in_place_scope(|scope| {
                let Some((&first, rest)) = task.roots.split_first() else {
                    return;
                };
                for &r in rest {
                    task.hand_to_pool(scope, r);
                }
                task.drive(Some(scope), first);
            });
        } else {
            for &r in &self.roots {
                self.drive(None, r);
            }
        }
        if let Some(e) = self.error.lock().take() {
            return Err(e);
        }
        Ok(std::mem::take(&mut *self.captured.lock()))
    }

    /// Runs `start` and then, inline, whatever it makes ready; extra heavy
    /// ready nodes go to the pool when running in parallel. Ready leaf
    /// accumulators wait until this thread has nothing else to run: a
    /// gradient shared with sibling nodes (both inputs of an add) is then
    /// usually no longer read by them, and `.grad` takes it without a copy.
    fn drive<'s>(&'s self, scope: Option<&rayon::Scope<'s>>, start: u32) {
        let _current = CurrentTaskGuard::enter(self);
        let mut pending: SmallVec<[u32; 8]> = smallvec::smallvec![start];
        let mut accumulators: SmallVec<[u32; 8]> = SmallVec::new();
        while let Some(i) = pending.pop().or_else(|| accumulators.pop()) {
            if self.failed.load(Ordering::Relaxed) {
                return;
            }
            match self.run_node(i as usize) {
                Ok(ready) => {
                    for j in ready {
                        if self.nodes[j as usize]
                            .backward_fn()
                            .as_any()
                            .is::<AccumulateGrad>()
                        {
                            accumulators.push(j);
                            continue;
                        }
                        match scope {
                            Some(s) if !pending.is_empty() && self.is_heavy(j) => {
                                self.hand_to_pool(s, j);
                            }
                            _ => pending.push(j),
                        }
                    }
                }
                Err(e) => {
                    self.failed.store(true, Ordering::Relaxed);
                    self.error.lock().get_or_insert(e);
                    return;
                }
            }
        }
    }

    /// Queues node `i` for whichever thread of the pool is free, to drive
    /// from there.
    fn hand_to_pool<'s>(&'s self, scope: &rayon::Scope<'s>, i: u32) {
        self.queued.fetch_add(1, Ordering::AcqRel);
        scope.spawn(move |s| {
            self.queued.fetch_sub(1, Ordering::AcqRel);
            self.drive(Some(s), i)
        });
    }

    fn is_heavy(&self, i: u32) -> bool {
        self.nodes[i as usize]
            .outputs()
            .iter()
            .any(|m| crate::tensor::layout::numel(&m.shape) >= PARALLEL_MIN_NUMEL)
    }

    fn run_node(&self, i: usize) -> Result<SmallVec<[u32; 4]>> {
        let node = &self.nodes[i];
        let mut grads = self.take_inputs(i)?;
        let _mode = GradModeGuard::new(self.create_graph);
        let _tangents = forward::Suspend::to(!self.tangents);
        // A leaf's own hooks see (and may replace) its gradient before its
        // accumulator's pre-hooks do, as in PyTorch, whether the gradient is
        // accumulated or returned by `grad()`. Only accumulators have no
        // edges, so other nodes skip the type check.
        if node.next_edges().is_empty() {
            let leaf = node.backward_fn().as_any().downcast_ref::<AccumulateGrad>();
            if let (Some(leaf), Some(g)) = (leaf, grads[0].take()) {
                grads[0] = Some(leaf.run_tensor_hooks(g)?);
            }
        }
        node.run_pre_hooks(&mut grads)?;
        if let Some(caps) = (!self.captures.is_empty())
            .then(|| self.captures.get(&(i as u32)))
            .flatten()
        {
            for &(input_nr, slot) in caps {
                let g = grads[input_nr as usize].clone();
                match &self.mode {
                    Mode::Capture => self.captured.lock()[slot] = g,
                    Mode::Accumulate {
                        targets: Some(targets),
                    } => {
                        // A non-leaf target of backward(inputs=...) gets its
                        // gradient in `.grad`, like retain_grad.
                        let is_accumulator = node.backward_fn().as_any().is::<AccumulateGrad>();
                        if let (false, Some(g)) = (is_accumulator, g) {
                            accumulate_into(&targets[slot], g)?;
                        }
                    }
                    Mode::Accumulate { targets: None } => {}
                }
            }
        }
        let mut ready = SmallVec::new();
        if !self.execute[i] {
            return Ok(ready);
        }
        let received = node.has_post_hooks().then(|| grads.clone());
        // Inside a dual level the formulas' ops give the gradients tangents,
        // which fused kernels would not.
        let differentiable = self.create_graph || forward::is_active();
        let mut outputs = match super::anomaly::is_enabled() {
            true => super::anomaly::check(node, node.apply(grads, differentiable))?,
            false => node.apply(grads, differentiable)?,
        };
        let edges = node.next_edges();
        if outputs.len() != edges.len() {
            bail!(
                Runtime,
                "function {} returned an incorrect number of gradients (expected {}, got {})",
                node.name(),
                edges.len(),
                outputs.len()
            );
        }
        if let Some(received) = received {
            // As in PyTorch, post hooks see the gradients already summed
            // down to (and cast to) the tensors they are for.
            for (k, (g, edge)) in outputs.iter_mut().zip(edges).enumerate() {
                if let (Some(grad), Some(edge)) = (g.as_ref(), edge) {
                    *g = Some(validate(node, k, grad.clone(), edge)?);
                }
            }
            node.run_post_hooks(&received, &mut outputs)?;
        }
        if !self.retain_graph {
            node.release_saved();
        }
        for (k, (g, edge)) in outputs.into_iter().zip(edges).enumerate() {
            let (Some(j), Some(edge)) = (self.children[i][k], edge) else {
                continue;
            };
            if let Some(g) = g {
                let g = validate(node, k, g, edge)?;
                let key = ((i as u64 + 1) << 32) | k as u64;
                self.deliver(j as usize, edge.input_nr as usize, key, g)?;
            }
            if self.deps[j as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                ready.push(j);
            }
        }
        Ok(ready)
    }
}

thread_local! {
    /// The call whose nodes this thread is running, while it runs them.
    static CURRENT_TASK: Cell<*const GraphTask> = const { Cell::new(std::ptr::null()) };
}

/// Marks this thread as running the nodes of `task` until dropped, then
/// restores the outer call's mark (a hook may call backward itself).
struct CurrentTaskGuard(*const GraphTask);

impl CurrentTaskGuard {
    fn enter(task: &GraphTask) -> Self {
        CurrentTaskGuard(CURRENT_TASK.replace(std::ptr::from_ref(task)))
    }
}

impl Drop for CurrentTaskGuard {
    fn drop(&mut self) {
        CURRENT_TASK.set(self.0);
    }
}

/// Runs `f` on the call whose node this thread is running, if any.
fn with_current_task<R>(f: impl FnOnce(&GraphTask) -> R) -> Option<R> {
    let task = CURRENT_TASK.get();
    // SAFETY: the pointer is set only by a `CurrentTaskGuard` living in
    // `GraphTask::drive`, which borrows the task for as long as it runs on
    // this thread, and the guard restores the outer value before that
    // borrow ends; so a non-null pointer addresses a live task.
    (!task.is_null()).then(|| f(unsafe { &*task }))
}

/// Whether a node running now may rerun a forward and call `backward()` on
/// it (reentrant checkpointing): not inside `grad()` or
/// `backward(inputs=)`, whose partial runs would skip the recomputed graph.
pub fn checkpoint_valid() -> bool {
    with_current_task(|task| !task.partial).unwrap_or(true)
}

/// The id of the backward call whose node this thread is running, if any.
pub fn current_task_id() -> Option<u64> {
    with_current_task(|task| task.id)
}

/// Whether the backward call whose node this thread is running will run
/// `node`, or capture the gradient arriving at it; `false` outside one.
pub fn will_execute(node: &Node) -> bool {
    with_current_task(|task| {
        task.nodes
            .iter()
            .position(|n| std::ptr::addr_eq(Arc::as_ptr(n), node))
            .is_some_and(|i| task.execute[i] || task.captures.contains_key(&(i as u32)))
    })
    .unwrap_or(false)
}

/// Checks a gradient against the tensor it is for: a broadcastable shape is
/// summed down to it and the dtype converted, anything else is an error.
fn validate(node: &Node, index: usize, g: Tensor, edge: &Edge) -> Result<Tensor> {
    let meta = &edge.node.outputs()[edge.input_nr as usize];
    let mut g = g;
    if g.shape() != meta.shape.as_slice() {
        if crate::tensor::layout::broadcast_shapes(&meta.shape, g.shape())
            .ok()
            .as_deref()
            == Some(g.shape())
        {
            g = ops::reduce::sum_to(&g, &meta.shape)?;
        } else {
            bail!(
                Runtime,
                "Function {} returned an invalid gradient at index {} - got {} but expected shape compatible with {}",
                node.name(),
                index,
                fmt_shape(g.shape()),
                fmt_shape(&meta.shape)
            );
        }
    }
    let dtype = match edge
        .node
        .backward_fn()
        .as_any()
        .downcast_ref::<AccumulateGrad>()
    {
        Some(acc) => acc.grad_dtype(meta.dtype)?,
        None => Some(meta.dtype),
    };
    match dtype {
        Some(dtype) if dtype != g.dtype() => ops::copy::to_dtype(&g, dtype),
        _ => Ok(g),
    }
}

/// Adds `g` into input `slot` of a node's buffer. As for `.grad`, the lock
/// is never held while adding (see `accumulate_into`).
fn accumulate_buffer(buf: &Mutex<Grads>, slot: usize, g: Tensor, create_graph: bool) -> Result<()> {
    let mut pending = g;
    loop {
        let prev = {
            let mut b = buf.lock();
            match b[slot].take() {
                None => {
                    b[slot] = Some(pending);
                    return Ok(());
                }
                Some(prev) => prev,
            }
        };
        pending = sum_gradients(prev, pending, create_graph)?;
    }
}

/// `a + b` for two gradients of one input. Unless the sum's own graph is
/// recorded, it is written into an operand that nothing else holds or sees,
/// as PyTorch's input buffers do: a node reached by many paths then costs
/// no allocation per path.
fn sum_gradients(a: Tensor, b: Tensor, create_graph: bool) -> Result<Tensor> {
    if !create_graph && a.shape() == b.shape() && a.dtype() == b.dtype() {
        if may_sum_into(&a) {
            ops::binary::add_into(&a, &b)?;
            return Ok(a);
        }
        if may_sum_into(&b) {
            ops::binary::add_into(&b, &a)?;
            return Ok(b);
        }
    }
    ops::binary::add(&a, &b)
}

/// Whether a sum may overwrite `t`: its only handle, on memory of its own,
/// not requiring grad and not weakly referenced (a saved-tensor record).
fn may_sum_into(t: &Tensor) -> bool {
    // Not requiring grad, it has no history: one look at its autograd
    // record tells both.
    is_sole_dense_handle(t)
        && Arc::weak_count(&t.0) == 0
        && !t.requires_grad()
        && t.storage().owns_memory()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(values: &[f64]) -> Tensor {
        let t = Tensor::from_vec(values.to_vec(), &[values.len()]).unwrap();
        t.set_requires_grad(true).unwrap();
        t
    }

    /// `grad_since` walks only what was made after its mark, yet gives the
    /// gradients `grad` gives, with their history through the older nodes.
    #[test]
    fn grad_since_skips_older_nodes_and_keeps_their_history() {
        let _record = GradModeGuard::new(true);
        let x = leaf(&[0.5, 1.0, 2.0]);
        let older = ops::unary::exp(&ops::unary::sin(&x).unwrap()).unwrap();
        let since = NodeMark::next();
        let u = leaf(&[1.0, -1.0, 3.0]);
        let squared = ops::binary::mul(&u, &u).unwrap();
        let product =
            ops::reduce::sum(&ops::binary::mul(&squared, &older).unwrap(), &[], false).unwrap();
        assert!(older.grad_fn().unwrap().made.is_before(since));
        assert!(!squared.grad_fn().unwrap().made.is_before(since));
        // Whether the walk for `product`'s gradient with respect to `u` meets `older`'s node.
        let walks_older = |since: Option<NodeMark>| {
            let roots = make_roots(std::slice::from_ref(&product), &[None]).unwrap();
            let targets = input_edges(std::slice::from_ref(&u)).unwrap();
            let task =
                GraphTask::new(roots, Some(targets), Mode::Capture, true, true, since).unwrap();
            let older_node = older.grad_fn().unwrap();
            task.nodes.iter().any(|n| Arc::ptr_eq(n, &older_node))
        };
        assert!(walks_older(None));
        assert!(!walks_older(Some(since)));

        let pruned = grad_since(
            std::slice::from_ref(&product),
            std::slice::from_ref(&u),
            true,
            since,
        )
        .unwrap()[0]
            .clone()
            .unwrap();
        let full = grad(
            &[product],
            std::slice::from_ref(&u),
            &[None],
            None,
            true,
            false,
        )
        .unwrap()[0]
            .clone()
            .unwrap();
        assert_eq!(pruned.to_vec::<f64>(), full.to_vec::<f64>());
        // d/dx sum(2u·exp(sin x)) = 2u·exp(sin x)·cos x, through the older nodes.
        let total = ops::reduce::sum(&pruned, &[], false).unwrap();
        let dx = grad(&[total], &[x], &[None], None, false, false).unwrap()[0]
            .clone()
            .unwrap();
        let expected: Vec<f64> = [(0.5f64, 1.0), (1.0, -1.0), (2.0, 3.0)]
            .iter()
            .map(|&(x, u)| 2.0 * u * x.sin().exp() * x.cos())
            .collect();
        for (got, want) in dx.to_vec::<f64>().iter().zip(&expected) {
            assert!((got - want).abs() < 1e-12, "{got} != {want}");
        }
    }

    /// Marks order the nodes of one thread only.
    #[test]
    fn marks_of_other_threads_are_never_before() {
        let here = NodeMark::next();
        let there = std::thread::spawn(NodeMark::next).join().unwrap();
        assert!(!there.is_before(here) && !here.is_before(there));
    }
}
