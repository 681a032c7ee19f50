//! Writes along one dimension at the positions an int64 index names, the
//! adjoints of `gather`: `scatter` (of a tensor's elements or of one value),
//! `scatter_add` and `scatter_reduce` (sum, prod, mean, amax, amin). For
//! `dim = 1`, `out[i][index[i][j]] = src[i][j]`, combined by the reduction
//! where several elements land on one position.

use super::binary::{bitwise_and, div, eq, floor_divide, mul};
use super::copy::{clone, try_cast};
use super::index::{gather, gather_offsets, masked_fill};
use super::num::{Arith, Real};
use super::shape::{expand, narrow, reshape};
use super::unary::{conj, where_};
use crate::autograd::{record, BackwardCtx, SavedTensor};
use crate::tensor::layout::{fmt_shape, wrap_dim};
use crate::tensor::storage::try_filled;
use crate::tensor::{DType, Element, Scalar, ScalarConvert, Tensor};
use crate::{bail, grads, with_dtype, with_real, Result};

/// How the elements landing on one position combine (`scatter_reduce`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    Sum,
    Prod,
    Mean,
    Amax,
    Amin,
}

impl Reduction {
    /// `scatter_reduce`'s `reduce` argument.
    pub fn parse(name: &str) -> Result<Reduction> {
        Ok(match name {
            "sum" => Reduction::Sum,
            "prod" => Reduction::Prod,
            "mean" => Reduction::Mean,
            "amax" => Reduction::Amax,
            "amin" => Reduction::Amin,
            _ => bail!(
                Runtime,
                "reduce argument must be either sum, prod, mean, amax or amin, got {name}"
            ),
        })
    }

    /// `scatter`'s older `reduce` argument: `add` or `multiply`, both
    /// combining with the input's own value.
    pub fn parse_scatter(name: &str) -> Result<Reduction> {
        Ok(match name {
            "add" => Reduction::Sum,
            "multiply" => Reduction::Prod,
            _ => bail!(Runtime, "reduce argument must be either add or multiply."),
        })
    }

    fn name(self) -> &'static str {
        match self {
            Reduction::Sum => "sum",
            Reduction::Prod => "prod",
            Reduction::Mean => "mean",
            Reduction::Amax => "amax",
            Reduction::Amin => "amin",
        }
    }

    fn unsupported(self, dtype: DType) -> crate::Error {
        crate::Error::NotImplemented(format!(
            "\"scatter_gather_tensor_cpu_reduce_{}\" not implemented for '{}'",
            self.name(),
            DType::scalar_type_name(dtype)
        ))
    }
}

/// PyTorch's checks of a scatter's operands (whose messages name `scatter`
/// for every form), in which a 0-d tensor counts as 1-d of one element; the
/// dimension, wrapped. An empty index is accepted whatever its shape.
fn check(t: &Tensor, dim: i64, index: &Tensor, src: Option<&Tensor>) -> Result<usize> {
    let d = wrap_dim(dim, t.ndim())?;
    if index.dtype() != DType::Int64 {
        bail!(Runtime, "scatter(): Expected dtype int32/int64 for index");
    }
    if src.is_some_and(|s| s.dtype() != t.dtype()) {
        bail!(
            Runtime,
            "scatter(): Expected self.dtype to be equal to src.dtype"
        );
    }
    if index.numel() == 0 {
        return Ok(d);
    }
    let dims = |x: &Tensor| x.ndim().max(1);
    if dims(index) != dims(t) {
        bail!(
            Runtime,
            "Index tensor must have the same number of dimensions as self tensor"
        );
    }
    if src.is_some_and(|s| dims(s) != dims(index)) {
        bail!(
            Runtime,
            "Index tensor must have the same number of dimensions as src tensor"
        );
    }
    let size = |x: &Tensor, k: usize| x.shape().get(k).copied().unwrap_or(1);
    let over_self = (0..dims(t)).any(|k| k != d && size(index, k) > size(t, k));
    let over_src = |s: &Tensor| (0..dims(t)).any(|k| size(index, k) > size(s, k));
    if over_self || src.is_some_and(over_src) {
        let tail = match src {
            Some(s) => format!(
                " and to be no larger size than src {}",
                fmt_shape(s.shape())
            ),
            None => String::new(),
        };
        bail!(
            Runtime,
            "Expected index {} to be no larger than self {} apart from dimension {d}{tail}",
            fmt_shape(index.shape()),
            fmt_shape(t.shape())
        );
    }
    Ok(d)
}

/// The part of `src` a scatter reads, in `index`'s shape: its leading
/// block (PyTorch accepts a larger source, whose gradient is zero
/// elsewhere), or where the two differ in rank (one is 0-d, and the index
/// has at most one element) or the index is empty, its first element or
/// none.
fn source_block(src: &Tensor, index: &Tensor) -> Result<Tensor> {
    if src.ndim() != index.ndim() || index.numel() == 0 {
        let first = narrow(&reshape(src, &[-1])?, 0, 0, index.numel().min(1) as i64)?;
        return reshape(&first, &index_sizes(index));
    }
    let mut block = src.clone();
    for (k, &n) in index.shape().iter().enumerate() {
        if block.shape()[k] != n {
            block = narrow(&block, k as i64, 0, n as i64)?;
        }
    }
    Ok(block)
}

/// `value` of `dtype` in `index`'s shape, without a copy per element.
fn value_block(value: Scalar, dtype: DType, index: &Tensor) -> Result<Tensor> {
    expand(&Tensor::scalar(value, dtype), &index_sizes(index))
}

fn index_sizes(index: &Tensor) -> Vec<i64> {
    index.shape().iter().map(|&n| n as i64).collect()
}

/// Where a scatter reads and writes: for each index element, in index
/// order, the storage offset of its target in the output and of its
/// source element.
struct Plan {
    targets: Vec<usize>,
    sources: Vec<usize>,
}

impl Plan {
    /// The plan for writing `src` (of `index`'s shape) into `out` at
    /// `index` along `d`; errors on an index out of bounds.
    fn new(out: &Tensor, d: usize, index: &Tensor, src: &Tensor) -> Result<Plan> {
        let targets = gather_offsets(out.layout(), d, index)?;
        let sources = src.layout().offset_vec()?;
        Ok(Plan { targets, sources })
    }

    /// Combines `src`'s elements into their targets in `out` (on another
    /// buffer) by `combine(old, new)`; with `reset`, each target first
    /// holds that value instead of its own.
    fn apply<T: Element>(
        &self,
        out: &Tensor,
        src: &Tensor,
        reset: Option<T>,
        combine: impl Fn(T, T) -> T,
    ) -> Result<()> {
        let s = src.storage().read::<T>();
        let mut o = out.storage().write::<T>()?;
        if let Some(r) = reset {
            for &p in &self.targets {
                o[p] = r;
            }
        }
        for (&p, &q) in self.targets.iter().zip(&self.sources) {
            o[p] = combine(o[p], s[q]);
        }
        Ok(())
    }

    /// For each position of a contiguous output of `shape`: how many
    /// elements land on it plus `base`, at least one (a mean's divisor).
    fn divisors(&self, shape: &[usize], base: i64) -> Result<Tensor> {
        let mut counts = try_filled(base, shape.iter().product())?;
        for &p in &self.targets {
            counts[p] += 1;
        }
        counts.iter_mut().for_each(|c| *c = (*c).max(1));
        Tensor::from_vec(counts, shape)
    }
}

/// A contiguous copy of `t` (without history) combined with `src` at
/// `index` along `d` by `combine`, as [`Plan::apply`].
fn combined<T: Element>(
    t: &Tensor,
    d: usize,
    index: &Tensor,
    src: &Tensor,
    reset: Option<T>,
    combine: impl Fn(T, T) -> T,
) -> Result<(Tensor, Plan)> {
    combined_into(clone(&t.detach())?, d, index, src, reset, combine)
}

/// As [`combined`], written into `out`: a fresh contiguous tensor that
/// nothing else reads yet.
fn combined_into<T: Element>(
    out: Tensor,
    d: usize,
    index: &Tensor,
    src: &Tensor,
    reset: Option<T>,
    combine: impl Fn(T, T) -> T,
) -> Result<(Tensor, Plan)> {
    let plan = Plan::new(&out, d, index, src)?;
    plan.apply(&out, src, reset, combine)?;
    Ok((out, plan))
}

/// `g` with zeros at the positions `index` names along `d`: the gradient of
/// an input the scatter overwrote there.
fn zero_at(g: &Tensor, d: usize, index: &Tensor) -> Result<Tensor> {
    scatter_value(g, d as i64, index, Scalar::Int(0))
}

/// `t.scatter(dim, index, src)` (`ScatterBackward0`).
pub fn scatter(t: &Tensor, dim: i64, index: &Tensor, src: &Tensor) -> Result<Tensor> {
    let index = &super::index::int64_index(index)?;
    let d = check(t, dim, index, Some(src))?;
    let block = source_block(src, index)?;
    let (out, _) = with_dtype!(t.dtype(), T => combined::<T>(t, d, index, &block, None, |_, s| s))?;
    let idx = index.clone();
    record(
        "ScatterBackward0",
        &[t, &block],
        &out,
        || (),
        move |ctx, _, g| {
            Ok(grads![
                ctx.needs_grad(0).then(|| zero_at(g, d, &idx)).transpose()?,
                ctx.needs_grad(1)
                    .then(|| gather(g, d as i64, &idx))
                    .transpose()?
            ])
        },
    );
    Ok(out)
}

/// `t.scatter(dim, index, value)` (`ScatterBackward1`).
pub fn scatter_value(t: &Tensor, dim: i64, index: &Tensor, value: Scalar) -> Result<Tensor> {
    let index = &super::index::int64_index(index)?;
    let d = check(t, dim, index, None)?;
    let fill = value_block(value, t.dtype(), index)?;
    let (out, _) = with_dtype!(t.dtype(), T => combined::<T>(t, d, index, &fill, None, |_, v| v))?;
    let idx = index.clone();
    record(
        "ScatterBackward1",
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(zero_at(g, d, &idx)?)]),
    );
    Ok(out)
}

/// What `scatter` writes: a tensor's elements or one value.
#[derive(Clone)]
pub enum Source {
    Tensor(Tensor),
    Value(Scalar),
}

/// `t.scatter(dim, index, src or value, reduce=...)`, every form of
/// PyTorch's one entry: `reduce` ('add' or 'multiply') combines with the
/// values already there, as `scatter_reduce` does with `include_self`.
pub fn scatter_from(
    t: &Tensor,
    dim: i64,
    index: &Tensor,
    src: Source,
    reduce: Option<&str>,
) -> Result<Tensor> {
    match (src, reduce) {
        (Source::Tensor(s), None) => scatter(t, dim, index, &s),
        (Source::Value(v), None) => scatter_value(t, dim, index, v),
        (src, Some(name)) => {
            let reduce = Reduction::parse_scatter(name)?;
            let src = match src {
                Source::Tensor(s) => s,
                Source::Value(v) => value_block(v, t.dtype(), index)?,
            };
            scatter_reduce(t, dim, index, &src, reduce, true)
        }
    }
}

/// `t.scatter_add(dim, index, src)` (`ScatterAddBackward0`).
pub fn scatter_add(t: &Tensor, dim: i64, index: &Tensor, src: &Tensor) -> Result<Tensor> {
    added(t, clone(&t.detach())?, dim, index, src)
}

/// `base` (`t`'s values in a fresh contiguous tensor) with `src` added at
/// `index` along `dim`, recorded as `t.scatter_add(dim, index, src)`.
fn added(t: &Tensor, base: Tensor, dim: i64, index: &Tensor, src: &Tensor) -> Result<Tensor> {
    let index = &super::index::int64_index(index)?;
    let d = check(t, dim, index, Some(src))?;
    let block = source_block(src, index)?;
    let (out, _) = with_dtype!(t.dtype(), T => {
        combined_into::<T>(base, d, index, &block, None, <T as Arith>::add)
    })?;
    let idx = index.clone();
    record(
        "ScatterAddBackward0",
        &[t, &block],
        &out,
        || (),
        move |ctx, _, g| {
            Ok(grads![
                Some(g.clone()),
                ctx.needs_grad(1)
                    .then(|| gather(g, d as i64, &idx))
                    .transpose()?
            ])
        },
    );
    Ok(out)
}

/// Zeros of `shape` with `src` added at `index` along `d`: the gradient of
/// `gather` and of the ops that select along a dimension (`max(dim)`,
/// `sort`, ...); its own gradient is a gather.
pub fn scatter_add_zeros(
    src: &Tensor,
    d: usize,
    index: &Tensor,
    shape: &[usize],
) -> Result<Tensor> {
    // Added straight into the new zeros: no copy of them first.
    let zeros = Tensor::full(shape, Scalar::Int(0), src.dtype())?;
    added(&zeros.clone(), zeros, d as i64, index, src)
}

/// The reduction's value without history; its plan, and for a mean the
/// divisors.
fn reduced(
    t: &Tensor,
    d: usize,
    index: &Tensor,
    src: &Tensor,
    reduce: Reduction,
    include_self: bool,
) -> Result<(Tensor, Plan, Option<Tensor>)> {
    let dtype = t.dtype();
    let (src, fresh) = (src.detach(), !include_self);
    let (out, plan) = match reduce {
        Reduction::Mean if dtype == DType::Bool => return Err(reduce.unsupported(dtype)),
        Reduction::Sum | Reduction::Mean => {
            with_dtype!(dtype, T => combined::<T>(t, d, index, &src, fresh.then(<T as Arith>::zero), <T as Arith>::add))?
        }
        Reduction::Prod => {
            with_dtype!(dtype, T => combined::<T>(t, d, index, &src, fresh.then(<T as Arith>::one), <T as Arith>::mul))?
        }
        Reduction::Amax | Reduction::Amin => {
            let is_max = reduce == Reduction::Amax;
            // The identity of the reduction, for positions that drop their own value.
            let identity = match (dtype, is_max) {
                (DType::Bool, m) => Scalar::Bool(!m),
                (_, true) => Scalar::Float(f64::NEG_INFINITY),
                (_, false) => Scalar::Float(f64::INFINITY),
            };
            with_real!(dtype, T => {
                let reset = fresh.then(|| T::from_scalar(identity));
                match is_max {
                    true => combined::<T>(t, d, index, &src, reset, T::max_nan)?,
                    false => combined::<T>(t, d, index, &src, reset, T::min_nan)?,
                }
            }, return Err(reduce.unsupported(dtype)))
        }
    };
    if reduce != Reduction::Mean {
        return Ok((out, plan, None));
    }
    let divisors = plan.divisors(out.shape(), include_self as i64)?;
    let mean = match dtype {
        d if d.is_integral(false) => floor_divide(&out, &divisors)?,
        _ => div(&out, &divisors)?,
    };
    Ok((mean, plan, Some(divisors)))
}

/// `t.scatter_reduce(dim, index, src, reduce, include_self=...)`
/// (`ScatterReduceBackward0`): each position combines the elements landing
/// on it, with its own value unless `include_self` is false. Gradients are
/// PyTorch's: a mean divides by the count, amax/amin share among the
/// elements equal to the result, and prod gives each factor the product of
/// the others (exactly, also where factors are zero).
pub fn scatter_reduce(
    t: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
    reduce: Reduction,
    include_self: bool,
) -> Result<Tensor> {
    let index = &super::index::int64_index(index)?;
    let d = check(t, dim, index, Some(src))?;
    let block = source_block(src, index)?;
    let (out, _, divisors) = reduced(t, d, index, &block, reduce, include_self)?;
    let idx = index.clone();
    let keeps_values = matches!(reduce, Reduction::Prod | Reduction::Amax | Reduction::Amin);
    record(
        "ScatterReduceBackward0",
        &[t, &block],
        &out,
        || {
            keeps_values.then(|| {
                (
                    SavedTensor::input(t),
                    SavedTensor::input(&block),
                    SavedTensor::output(&out, 0),
                )
            })
        },
        move |ctx, saved, g| {
            let grads = Reduce {
                ctx,
                g,
                d,
                index: &idx,
                reduce,
                include_self,
            };
            let (gs, gsrc) = match saved {
                Some((x, s, out)) => {
                    let (x, s, out) = (x.unpack(ctx)?, s.unpack(ctx)?, out.unpack(ctx)?);
                    match reduce {
                        Reduction::Prod => grads.prod(&x, &s, &out)?,
                        _ => grads.extreme(&x, &s, &out)?,
                    }
                }
                None => grads.linear(divisors.as_ref())?,
            };
            let gs = match (gs, include_self) {
                (Some(gs), false) => Some(zero_at(&gs, d, &idx)?),
                (gs, _) => gs,
            };
            Ok(grads![gs, gsrc])
        },
    );
    Ok(out)
}

/// The gradients of one `scatter_reduce` (input, source block), each
/// computed only when its input takes one.
struct Reduce<'a> {
    ctx: &'a BackwardCtx<'a>,
    g: &'a Tensor,
    d: usize,
    index: &'a Tensor,
    reduce: Reduction,
    include_self: bool,
}

type GradPair = (Option<Tensor>, Option<Tensor>);

impl Reduce<'_> {
    fn gather(&self, t: &Tensor) -> Result<Tensor> {
        gather(t, self.d as i64, self.index)
    }

    /// Sum and mean: the gradient, divided by each position's count.
    fn linear(&self, divisors: Option<&Tensor>) -> Result<GradPair> {
        let g = match divisors {
            Some(n) => div(self.g, n)?,
            None => self.g.clone(),
        };
        let gsrc = self
            .ctx
            .needs_grad(1)
            .then(|| self.gather(&g))
            .transpose()?;
        Ok((Some(g), gsrc))
    }

    /// amax and amin: shared evenly among the elements equal to the result.
    fn extreme(&self, x: &Tensor, s: &Tensor, out: &Tensor) -> Result<GradPair> {
        let dtype = self.g.dtype();
        let mut self_is = eq(x, out)?;
        if !self.include_self {
            // A value the reduction dropped is no candidate, even if equal.
            self_is = scatter_value(&self_is, self.d as i64, self.index, Scalar::Bool(false))?;
        }
        let src_is = try_cast(&eq(s, &self.gather(out)?)?, dtype)?;
        let self_is = try_cast(&self_is, dtype)?;
        let count = scatter_add(&self_is, self.d as i64, self.index, &src_is)?;
        let share = div(self.g, &count)?;
        let gs = self
            .ctx
            .needs_grad(0)
            .then(|| mul(&share, &self_is))
            .transpose()?;
        let gsrc = self
            .ctx
            .needs_grad(1)
            .then(|| mul(&self.gather(&share)?, &src_is))
            .transpose()?;
        Ok((gs, gsrc))
    }

    /// prod: each factor's gradient is the product of the other factors,
    /// found by dividing the result by the factor unless the factor is
    /// zero; a source factor that is its position's only zero source gets
    /// the product recomputed without it, and a zero input value gets the
    /// product of the sources.
    fn prod(&self, x: &Tensor, s: &Tensor, out: &Tensor) -> Result<GradPair> {
        let (d, zero, one) = (self.d as i64, Scalar::Int(0), Scalar::Int(1));
        let is_zero = |t: &Tensor| eq(t, &Tensor::scalar(zero, t.dtype()));
        let gs = match self.ctx.needs_grad(0) {
            false => None,
            true => {
                let x_nonzero = masked_fill(x, &is_zero(x)?, one)?;
                let others =
                    scatter_reduce(&x_nonzero, d, self.index, s, self.reduce, self.include_self)?;
                Some(mul(self.g, &conj(&div(&others, &x_nonzero)?)?)?)
            }
        };
        let gsrc = match self.ctx.needs_grad(1) {
            false => None,
            true => {
                let src_zero = is_zero(s)?;
                let zeros_here = scatter_add_zeros(
                    &try_cast(&src_zero, DType::Int64)?,
                    self.d,
                    self.index,
                    out.shape(),
                )?;
                let lone_zero = bitwise_and(
                    &src_zero,
                    &eq(
                        &self.gather(&zeros_here)?,
                        &Tensor::scalar(one, DType::Int64),
                    )?,
                )?;
                let without_lone_zero = scatter_reduce(
                    x,
                    d,
                    self.index,
                    &masked_fill(s, &lone_zero, one)?,
                    self.reduce,
                    self.include_self,
                )?;
                let by_division = div(
                    &self.gather(&mul(self.g, &conj(out)?)?)?,
                    &conj(&masked_fill(s, &src_zero, one)?)?,
                )?;
                let recomputed = self.gather(&mul(self.g, &conj(&without_lone_zero)?)?)?;
                Some(where_(&lone_zero, &recomputed, &by_division)?)
            }
        };
        Ok((gs, gsrc))
    }
}
