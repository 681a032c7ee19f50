//! The tensor: a strided view of shared storage plus its autograd state.

pub mod dtype;
pub mod layout;
pub mod scalar;
pub mod storage;

pub use dtype::{DType, Element};
pub use layout::{Layout, MemoryFormat, Shape};
pub use scalar::{Scalar, ScalarConvert};
pub use storage::Storage;

use crate::autograd::accumulate::AccumulateGrad;
use crate::autograd::node::{Edge, Node, NodeWith};
use crate::{bail, with_dtype, Result};
use parking_lot::{Mutex, MutexGuard};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// Shared by every view of a storage (and by `detach()`): bumped by each
/// in-place write so that saved tensors can detect modification.
pub type VersionCounter = Arc<Version>;

/// A storage's version.
#[derive(Default)]
pub struct Version {
    count: AtomicU64,
    /// Set on the result of the out-of-place form of an in-place op once it
    /// was written into the target: the result then stands for the target,
    /// so later writes to the target count as writes to it (PyTorch's
    /// `exp_` saves the tensor it modified, and so does ferrograd). Holds
    /// the target's counter and its version when linked.
    follows: OnceLock<(VersionCounter, u64)>,
}

impl Version {
    fn get(&self) -> u64 {
        let own = self.count.load(Ordering::Acquire);
        match self.follows.get() {
            Some((target, at)) => own + target.get() - at,
            None => own,
        }
    }

    /// Version `v` of this counter counted as the followed target counts
    /// (the numbers a user sees on the tensor that was written).
    fn as_followed(&self, v: u64) -> u64 {
        match self.follows.get() {
            Some((_, at)) => (v + at).saturating_sub(self.count.load(Ordering::Acquire)),
            None => v,
        }
    }
}

/// Cheap handle: clones share the same tensor (same autograd identity).
#[derive(Clone)]
pub struct Tensor(pub(crate) Arc<TensorImpl>);

pub struct TensorImpl {
    pub(crate) storage: Arc<Storage>,
    pub(crate) layout: Layout,
    /// The version counter, shared with every alias of this tensor (its
    /// views, `detach()`). It is made when first needed, by a write or an
    /// alias: most results are never written nor aliased and stay at
    /// version 0 without one, an allocation saved per tensor.
    version: OnceLock<VersionCounter>,
    /// Created in inference mode, or an alias of such a tensor: it cannot
    /// be saved for backward or written in place outside inference mode,
    /// as in PyTorch, where such tensors carry no version counter at all.
    inference: bool,
    pub(crate) autograd: Mutex<AutogradMeta>,
    /// A Python number turned into a 0-d tensor: it takes part in type
    /// promotion with the lowest priority.
    pub(crate) wrapped_number: bool,
}

#[derive(Clone, Default)]
pub struct AutogradMeta {
    /// Set on leaves by the user; non-leaves require grad through `grad_fn`.
    pub requires_grad: bool,
    pub grad_fn: Option<Arc<Node>>,
    pub output_nr: u32,
    pub grad: Option<Tensor>,
    /// The leaf's accumulator node, shared by every use of the leaf in one
    /// graph, so its gradient is summed before it is accumulated.
    pub grad_accumulator: Weak<NodeWith<AccumulateGrad>>,
    pub retains_grad: bool,
    /// Set when this tensor is a view. Views and hooks are rare: they live
    /// out of line, so that every other tensor is made and freed faster.
    pub view: Option<Box<ViewMeta>>,
    /// Set once a hook is registered on this tensor as a leaf.
    pub leaf_hooks: Option<Box<LeafHooks>>,
    /// The tensor that took this one's place when its storage or layout
    /// was changed in place (see [`Tensor::successor`]): gradients that
    /// graphs recorded before the change still reach the tensor the user
    /// holds, and a stored `.grad` replaced through a passing handle
    /// (`p.grad.data = g`) stays replaced. Held strongly for that; a
    /// successor never refers back, so this makes no cycle.
    pub replaced_by: Option<Tensor>,
    /// The dtype a leaf's gradients are cast to (`t.grad_dtype`).
    pub grad_dtype: GradDType,
    /// The tangent of forward-mode AD, set only inside a dual level (see
    /// [`crate::autograd::forward`]).
    pub tangent: Option<Tensor>,
}

/// What a leaf's incoming gradients are cast to before they reach `.grad`
/// (or a `grad()` result), and which dtype an assigned `.grad` must have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GradDType {
    /// The leaf's own dtype, whatever it is now.
    #[default]
    Own,
    /// A dtype the user chose.
    Fixed(DType),
    /// No cast: gradients keep the dtype they arrive with.
    Any,
}

/// What a view records of its base.
#[derive(Clone)]
pub struct ViewMeta {
    /// The tensor it views (the root base for a view of a view).
    pub base: Tensor,
    /// The storage version its `grad_fn` was built at; a newer version
    /// means the base was written in place and the view's history is
    /// regenerated from the base's.
    pub version: u64,
    /// How it was created (decides which in-place writes through it are
    /// allowed).
    pub creation: crate::autograd::views::CreationMeta,
}

/// Hooks registered on a leaf (a non-leaf's hooks live on its `grad_fn`).
#[derive(Clone, Default)]
pub struct LeafHooks {
    /// Run on the leaf's gradient before it is accumulated.
    pub on_grad: Vec<(u64, crate::autograd::node::GradHook)>,
    /// Run after the leaf's `.grad` was updated.
    pub post_accumulate: Vec<(u64, crate::autograd::node::PostAccumulateHook)>,
}

impl AutogradMeta {
    /// The leaf's hooks, made empty if it has none yet.
    pub fn leaf_hooks_mut(&mut self) -> &mut LeafHooks {
        self.leaf_hooks.get_or_insert_with(Default::default)
    }
}

impl Tensor {
    pub fn from_parts(storage: Arc<Storage>, layout: Layout) -> Tensor {
        Tensor(Arc::new(TensorImpl {
            storage,
            layout,
            version: OnceLock::new(),
            inference: crate::autograd::is_inference_mode_enabled(),
            autograd: Mutex::new(AutogradMeta::default()),
            wrapped_number: false,
        }))
    }

    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        if data.len() != layout::numel(shape) {
            bail!(
                Runtime,
                "shape '{}' is invalid for input of size {}",
                layout::fmt_shape(shape),
                data.len()
            );
        }
        Ok(Tensor::from_parts(
            Arc::new(Storage::from_vec(data)),
            Layout::contiguous(shape),
        ))
    }

    /// A tensor of the one element `value` and a `shape` of one element,
    /// with the element held in its storage (see [`Storage::from_element`]).
    pub fn from_element<T: Element>(value: T, shape: &[usize]) -> Tensor {
        debug_assert_eq!(layout::numel(shape), 1, "one element's shape");
        Tensor::from_parts(
            Arc::new(Storage::from_element(value)),
            Layout::contiguous(shape),
        )
    }

    /// A 0-d tensor holding `value` converted to `dtype`.
    pub fn scalar(value: Scalar, dtype: DType) -> Tensor {
        with_dtype!(dtype, T => Tensor::from_element(T::from_scalar(value), &[]))
    }

    /// A Python number taking part in an op: its dtype is the default of its
    /// kind and it never widens a tensor's dtype.
    pub fn wrapped_number(value: Scalar) -> Tensor {
        Tensor::wrapped_in(value, value.wrapped_dtype())
    }

    /// A Python number meeting a tensor of dtype `partner` in a binary op.
    /// A float meeting a floating tensor is stored in that tensor's dtype,
    /// to which the op casts it anyway (it promotes as the operand of
    /// lowest priority), so the op makes no cast of its own.
    pub fn wrapped_number_for(value: Scalar, partner: DType) -> Tensor {
        match (value, partner) {
            (Scalar::Float(_), DType::Float32 | DType::Float64) => {
                Tensor::wrapped_in(value, partner)
            }
            _ => Tensor::wrapped_number(value),
        }
    }

    fn wrapped_in(value: Scalar, dtype: DType) -> Tensor {
        let storage = with_dtype!(dtype, T => Storage::from_element(T::from_scalar(value)));
        Tensor(Arc::new(TensorImpl {
            storage: Arc::new(storage),
            layout: Layout::contiguous(&[]),
            version: OnceLock::new(),
            inference: crate::autograd::is_inference_mode_enabled(),
            autograd: Mutex::new(AutogradMeta::default()),
            wrapped_number: true,
        }))
    }

    pub fn full(shape: &[usize], value: Scalar, dtype: DType) -> Result<Tensor> {
        let n = layout::numel(shape);
        with_dtype!(dtype, T => Tensor::from_vec(storage::try_filled(T::from_scalar(value), n)?, shape))
    }

    /// Zeros of a size known to be small (tests, constants): unlike
    /// [`Tensor::full`], a failed allocation aborts, so sizes that come from
    /// user input go through `full`.
    pub fn zeros(shape: &[usize], dtype: DType) -> Tensor {
        with_dtype!(dtype, T => Tensor::from_vec(vec![T::default(); layout::numel(shape)], shape).expect("sized"))
    }

    /// A new tensor on this tensor's storage with another layout: a view.
    /// It shares the version counter; autograd wiring is the caller's job.
    pub(crate) fn alias(&self, layout: Layout) -> Tensor {
        self.alias_as(self.dtype(), layout)
    }

    /// [`Tensor::alias`] with the storage read as `dtype` (see
    /// [`Storage::reinterpret`] for which dtypes may read it).
    pub(crate) fn alias_as(&self, dtype: DType, layout: Layout) -> Tensor {
        let storage = match dtype == self.dtype() {
            true => self.0.storage.clone(),
            false => Arc::new(Storage::reinterpret(&self.0.storage, dtype)),
        };
        Tensor(Arc::new(TensorImpl {
            storage,
            layout,
            version: OnceLock::from(self.counter().clone()),
            inference: self.0.inference,
            autograd: Mutex::new(AutogradMeta::default()),
            wrapped_number: false,
        }))
    }

    pub fn dtype(&self) -> DType {
        self.0.storage.dtype()
    }

    pub fn shape(&self) -> &[usize] {
        &self.0.layout.shape
    }

    pub fn strides(&self) -> &[isize] {
        &self.0.layout.strides
    }

    pub fn layout(&self) -> &Layout {
        &self.0.layout
    }

    pub fn storage(&self) -> &Arc<Storage> {
        &self.0.storage
    }

    pub fn storage_offset(&self) -> usize {
        self.0.layout.offset
    }

    pub fn ndim(&self) -> usize {
        self.0.layout.ndim()
    }

    pub fn numel(&self) -> usize {
        self.0.layout.numel()
    }

    pub fn is_contiguous(&self) -> bool {
        self.0.layout.is_contiguous()
    }

    pub fn is_wrapped_number(&self) -> bool {
        self.0.wrapped_number
    }

    /// Address of the first element.
    pub fn data_ptr(&self) -> usize {
        self.0.storage.data_ptr() + self.0.layout.offset * self.dtype().itemsize()
    }

    /// Whether two handles are the same tensor.
    pub fn same(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// An identity usable as a map key while the tensor is alive.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// This tensor's version counter, made now if it has none yet.
    fn counter(&self) -> &VersionCounter {
        self.0.version.get_or_init(VersionCounter::default)
    }

    pub fn version(&self) -> u64 {
        self.0.version.get().map_or(0, |c| c.get())
    }

    /// Version `v` of this tensor as the tensor an in-place op wrote it
    /// into counts (see `Version::follows`); `v` itself for other tensors.
    pub(crate) fn version_as_written(&self, v: u64) -> u64 {
        self.0.version.get().map_or(v, |c| c.as_followed(v))
    }

    /// Whether this tensor was created in inference mode (or views one).
    pub fn is_inference(&self) -> bool {
        self.0.inference
    }

    /// PyTorch's refusal to write in place into an inference tensor from
    /// outside inference mode.
    pub fn check_inference_write(&self) -> Result<()> {
        if self.is_inference() && !crate::autograd::is_inference_mode_enabled() {
            bail!(
                Runtime,
                "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal tensor before doing inplace update."
            );
        }
        Ok(())
    }

    /// Marks the storage as modified in place.
    pub fn bump_version(&self) {
        self.counter().count.fetch_add(1, Ordering::AcqRel);
    }

    /// From now on, writes to `target`'s storage count as writes to this
    /// tensor's (see [`Version`]).
    pub(crate) fn follow_version_of(&self, target: &Tensor) {
        let link = (target.counter().clone(), target.version());
        let _ = self.counter().follows.set(link);
    }

    pub(crate) fn meta(&self) -> MutexGuard<'_, AutogradMeta> {
        self.0.autograd.lock()
    }

    /// The autograd record with a view's history brought up to date with
    /// its base's.
    fn fresh_meta(&self) -> MutexGuard<'_, AutogradMeta> {
        let m = self.meta();
        match &m.view {
            Some(view) if view.version != self.version() => {}
            _ => return m,
        }
        drop(m);
        crate::autograd::views::refresh(self);
        self.meta()
    }

    pub fn requires_grad(&self) -> bool {
        let m = self.fresh_meta();
        m.requires_grad || m.grad_fn.is_some() || base_requires_grad(m)
    }

    pub fn grad_fn(&self) -> Option<Arc<Node>> {
        self.fresh_meta().grad_fn.clone()
    }

    pub fn output_nr(&self) -> u32 {
        self.fresh_meta().output_nr
    }

    pub fn is_leaf(&self) -> bool {
        self.fresh_meta().grad_fn.is_none()
    }

    pub fn set_requires_grad(&self, flag: bool) -> Result<()> {
        let mut m = self.fresh_meta();
        if m.grad_fn.is_some() {
            if !flag {
                bail!(
                    Runtime,
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
                );
            }
            return Ok(());
        }
        if flag && !self.dtype().is_differentiable() {
            bail!(
                Runtime,
                "only Tensors of floating point and complex dtype can require gradients"
            );
        }
        if flag && self.is_inference() && !crate::autograd::is_inference_mode_enabled() {
            bail!(
                Runtime,
                "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
            );
        }
        m.requires_grad = flag;
        Ok(())
    }

    /// `.grad`: the stored gradient, or its successor when the user changed
    /// its storage or layout in place (`p.grad.data = g`), which from then
    /// on is the stored one.
    pub fn grad(&self) -> Option<Tensor> {
        let stored = self.meta().grad.clone()?;
        let latest = stored.latest();
        if !latest.same(&stored) {
            let mut m = self.meta();
            if m.grad.as_ref().is_some_and(|g| g.same(&stored)) {
                m.grad = Some(latest.clone());
            }
        }
        Some(latest)
    }

    pub fn set_grad(&self, grad: Option<Tensor>) -> Result<()> {
        if let Some(g) = &grad {
            if let Some(allowed) = self.grad_dtype_unchecked().filter(|&d| d != g.dtype()) {
                bail!(
                    Runtime,
                    "attempting to assign a gradient with dtype '{}' to a tensor with grad_dtype '{}'. The gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its gradient may break downstream systems that assume they match.",
                    g.dtype().cpp_name(),
                    allowed.scalar_type_name()
                );
            }
            if g.shape() != self.shape() {
                bail!(
                    Runtime,
                    "attempting to assign a gradient of size '{}' to a tensor of size '{}'. Please ensure that the gradient and the tensor are the same size",
                    layout::fmt_shape(g.shape()),
                    layout::fmt_shape(self.shape())
                );
            }
        }
        self.meta().grad = grad;
        Ok(())
    }

    /// `t.grad_dtype`: the dtype a leaf's gradients are cast to, `None`
    /// when they keep their own.
    pub fn grad_dtype(&self) -> Result<Option<DType>> {
        if !self.is_leaf() {
            bail!(Runtime, "grad_dtype can only be accessed on leaf tensors.");
        }
        Ok(self.grad_dtype_unchecked())
    }

    /// [`grad_dtype`](Tensor::grad_dtype) of a tensor known to be a leaf.
    pub(crate) fn grad_dtype_unchecked(&self) -> Option<DType> {
        match self.meta().grad_dtype {
            GradDType::Own => Some(self.dtype()),
            GradDType::Fixed(d) => Some(d),
            GradDType::Any => None,
        }
    }

    /// `t.grad_dtype = dtype` (`None`: gradients keep their dtype). A
    /// stored `.grad` must already have the new dtype.
    pub fn set_grad_dtype(&self, dtype: Option<DType>) -> Result<()> {
        if !self.is_leaf() {
            bail!(Runtime, "grad_dtype can only be set on leaf tensors.");
        }
        let mut m = self.meta();
        if let (Some(new), Some(grad)) = (dtype, &m.grad) {
            if grad.dtype() != new {
                bail!(
                    Runtime,
                    "Cannot set grad_dtype to '{}' because there is already a gradient with dtype '{}'. Please clear the gradient (.grad = None) before changing grad_dtype, or ensure the new grad_dtype matches the existing gradient's dtype.",
                    new.scalar_type_name(),
                    grad.dtype().cpp_name()
                );
            }
        }
        m.grad_dtype = dtype.map_or(GradDType::Any, GradDType::Fixed);
        Ok(())
    }

    pub fn retains_grad(&self) -> bool {
        self.meta().retains_grad
    }

    /// The tensor this one is a view of, if any.
    pub fn view_base(&self) -> Option<Tensor> {
        self.meta().view.as_ref().map(|v| v.base.clone())
    }

    /// The edge through which a gradient for this tensor enters the graph:
    /// its `grad_fn`, or for a leaf made to require grad its accumulator
    /// (none for a view that requires grad only through its base).
    pub fn gradient_edge(&self) -> Option<Edge> {
        self.recording_edge().flatten()
    }

    /// What recording an op on this tensor needs, from one look at its
    /// autograd record: `None` when it does not require grad, else its
    /// [`gradient_edge`](Tensor::gradient_edge).
    pub(crate) fn recording_edge(&self) -> Option<Option<Edge>> {
        let mut m = self.fresh_meta();
        if let Some(f) = &m.grad_fn {
            return Some(Some(Edge {
                node: f.clone(),
                input_nr: m.output_nr,
            }));
        }
        if !m.requires_grad {
            return base_requires_grad(m).then_some(None);
        }
        let acc = match m.grad_accumulator.upgrade() {
            Some(acc) => acc,
            None => {
                let acc = crate::autograd::accumulate::accumulate_grad_node(self);
                m.grad_accumulator = Arc::downgrade(&acc);
                acc
            }
        };
        Some(Some(Edge {
            node: acc,
            input_nr: 0,
        }))
    }

    /// Same storage and version counter, no history: `detach()`.
    pub fn detach(&self) -> Tensor {
        self.alias(self.0.layout.clone())
    }

    /// Same storage, a fresh version counter and no history: `.data`. The
    /// data of an inference tensor is one too.
    pub fn data(&self) -> Tensor {
        Tensor(Arc::new(TensorImpl {
            storage: self.0.storage.clone(),
            layout: self.0.layout.clone(),
            version: OnceLock::new(),
            inference: self.0.inference,
            autograd: Mutex::new(AutogradMeta::default()),
            wrapped_number: false,
        }))
    }

    /// The tensor that takes this one's place with `storage` and `layout`
    /// and the autograd record `meta`, sharing this one's version counter.
    /// A tensor's storage and layout never change, so that ops read them
    /// without locks; the ops that change them in place (`x.data = y`,
    /// `x.t_()`, `x.resize_(n)`) make a successor instead, which the Python
    /// object then stands for. Gradients that reach this tensor's
    /// accumulator are passed on to it.
    pub(crate) fn successor(
        &self,
        storage: Arc<Storage>,
        layout: Layout,
        mut meta: AutogradMeta,
    ) -> Tensor {
        meta.replaced_by = None;
        let next = Tensor(Arc::new(TensorImpl {
            storage,
            layout,
            version: OnceLock::from(self.counter().clone()),
            inference: self.0.inference,
            autograd: Mutex::new(meta),
            wrapped_number: false,
        }));
        self.meta().replaced_by = Some(next.clone());
        next
    }

    /// The tensor that stands for this one now: the last of its successors,
    /// or itself. The successors in between are let go of, so a tensor
    /// replaced many times keeps only the latest alive.
    pub fn latest(&self) -> Tensor {
        let Some(mut last) = self.meta().replaced_by.clone() else {
            return self.clone();
        };
        loop {
            let next = last.meta().replaced_by.clone();
            match next {
                Some(next) => last = next,
                None => break,
            }
        }
        let mut m = self.meta();
        if m.replaced_by.as_ref().is_some_and(|r| !r.same(&last)) {
            m.replaced_by = Some(last.clone());
        }
        last
    }

    /// `x.data = new`: the tensor that takes `x`'s place with `new`'s
    /// storage and layout and `x`'s autograd record (its `requires_grad`,
    /// `grad_fn`, `.grad` and hooks) and version counter, as in PyTorch.
    /// The result is no view. `x` itself when `new` already is its data.
    pub fn with_data(&self, new: &Tensor) -> Result<Tensor> {
        if Arc::ptr_eq(&self.0.storage, &new.0.storage) && self.0.layout == new.0.layout {
            return Ok(self.clone());
        }
        if self.requires_grad() && !new.dtype().is_differentiable() {
            bail!(
                Runtime,
                "data set to a tensor that requires gradients must be floating point or complex dtype"
            );
        }
        let meta = self.record_without_view();
        Ok(self.successor(new.0.storage.clone(), new.0.layout.clone(), meta))
    }

    /// A copy of this tensor's autograd record for a successor that no
    /// longer aliases this tensor's base: the view fields left out.
    pub(crate) fn record_without_view(&self) -> AutogradMeta {
        AutogradMeta {
            view: None,
            ..self.meta().clone()
        }
    }

    /// `body` of the elements in row-major order, as one slice: the
    /// tensor's own when it is contiguous (as callers arrange), else a copy.
    pub fn with_contiguous<T: Element, R>(&self, body: impl FnOnce(&[T]) -> R) -> R {
        if !self.is_contiguous() {
            return body(&self.to_vec::<T>());
        }
        let data = self.0.storage.read::<T>();
        let l = &self.0.layout;
        match l.numel() {
            // An empty view may carry any offset, even past the storage's end.
            0 => body(&[]),
            n => body(&data[l.offset..l.offset + n]),
        }
    }

    /// Elements in row-major order as a fresh `Vec`.
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        let data = self.0.storage.read::<T>();
        let l = &self.0.layout;
        if l.numel() == 0 {
            return Vec::new();
        }
        if l.is_contiguous() {
            return data[l.offset..l.offset + l.numel()].to_vec();
        }
        // Whole rows at a time: a broadcast row is one repeated element, a
        // dense one a slice.
        let [merged] = Layout::coalesced([l]);
        let (starts, len, stride) = merged.rows();
        let mut out = Vec::with_capacity(l.numel());
        for start in starts.offsets() {
            match stride {
                0 => out.extend(std::iter::repeat_n(data[start], len)),
                1 => out.extend_from_slice(&data[start..start + len]),
                _ => out.extend(
                    (0..len as isize).map(|k| data[(start as isize + k * stride) as usize]),
                ),
            }
        }
        out
    }

    /// Every element, in row-major order, as a scalar.
    pub fn to_scalars(&self) -> Vec<Scalar> {
        with_dtype!(self.dtype(), T => self.to_vec::<T>().into_iter().map(|x| x.to_scalar()).collect())
    }

    /// The single element of a one-element tensor.
    pub fn item(&self) -> Result<Scalar> {
        if self.numel() != 1 {
            bail!(
                Runtime,
                "a Tensor with {} elements cannot be converted to Scalar",
                self.numel()
            );
        }
        Ok(with_dtype!(self.dtype(), T => {
            let data = self.0.storage.read::<T>();
            data[self.0.layout.offset].to_scalar()
        }))
    }

    /// `ferrograd.FloatTensor [2, 3]`, as PyTorch names tensors in messages.
    pub fn type_description(&self) -> String {
        format!(
            "ferrograd.{} {}",
            self.dtype().legacy_name(),
            layout::fmt_shape(self.shape())
        )
    }
}

/// Whether the tensor whose record `m` is, having no history and not
/// made to require grad itself, requires grad through its base. A view
/// without history (made under `no_grad`, or before its base was made to
/// require grad) requires grad when its base does, as in PyTorch: ops on
/// it, and in-place writes to it, are recorded, and the gradient sent to it
/// is dropped, since it has neither a history nor a gradient accumulator
/// of its own.
fn base_requires_grad(m: MutexGuard<'_, AutogradMeta>) -> bool {
    let Some(base) = m.view.as_ref().map(|v| v.base.clone()) else {
        return false;
    };
    drop(m);
    base.requires_grad()
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tensor({})", self.type_description())
    }
}
