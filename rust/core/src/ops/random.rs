//! Random numbers from a seedable global generator, or from one of the
//! user's generators put in force for a call.
//!
//! Each sampling op draws a single `u64` from the global generator and fills
//! fixed-size chunks of the output from small generators seeded by that
//! value and the chunk index, so large tensors fill in parallel and the
//! result depends only on the seed, never on the thread count.

use super::copy::try_cast;
use super::elementwise::PARALLEL_MIN_ELEMENTS;
use crate::autograd::record;
use crate::tensor::storage::{try_buffer, try_collect, try_filled};
use crate::tensor::{DType, Element, Scalar, ScalarConvert, Tensor};
use crate::{bail, grads, with_dtype, Result};
use num_complex::{Complex32, Complex64};
use parking_lot::Mutex;
use rand::rngs::{SmallRng, StdRng};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha12Rng;
use rand_distr::StandardNormal;
use std::cell::RefCell;
use std::f64::consts::FRAC_1_SQRT_2;
use std::sync::{Arc, LazyLock};

/// PyTorch's default seed for its CPU generator.
const DEFAULT_SEED: u64 = 67280421310721;
const CHUNK: usize = 1 << 14;

struct GeneratorState {
    initial_seed: u64,
    rng: ChaCha12Rng,
}

/// A random number generator: the global one (`default_generator`) or one
/// of the user's (`Generator()`), shared by its handles.
#[derive(Clone)]
pub struct Generator(Arc<Mutex<GeneratorState>>);

impl Default for Generator {
    fn default() -> Generator {
        Generator(Arc::new(Mutex::new(GeneratorState {
            initial_seed: DEFAULT_SEED,
            rng: ChaCha12Rng::seed_from_u64(DEFAULT_SEED),
        })))
    }
}

/// Words of a generator state: the 256-bit key, the 128-bit stream
/// position, the stream number and the initial seed.
pub const RNG_STATE_LEN: usize = 8;

impl Generator {
    /// The global generator.
    pub fn global() -> Generator {
        GLOBAL.clone()
    }

    /// Whether both handles are of one generator.
    pub fn same(&self, other: &Generator) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// `manual_seed(seed)`: restarts the generator from `seed`.
    pub fn manual_seed(&self, seed: u64) {
        let mut g = self.0.lock();
        g.initial_seed = seed;
        g.rng = ChaCha12Rng::seed_from_u64(seed);
    }

    /// `seed()`: reseeds from OS entropy and returns the new seed.
    pub fn seed(&self) -> u64 {
        let s = rand::random::<u64>() >> 1;
        self.manual_seed(s);
        s
    }

    pub fn initial_seed(&self) -> u64 {
        self.0.lock().initial_seed
    }

    /// `get_state()`: the state, for `set_state`.
    pub fn state(&self) -> [i64; RNG_STATE_LEN] {
        let g = self.0.lock();
        let mut state = [0i64; RNG_STATE_LEN];
        for (word, bytes) in state.iter_mut().zip(g.rng.get_seed().chunks_exact(8)) {
            *word = i64::from_le_bytes(bytes.try_into().expect("8-byte chunk"));
        }
        let pos = g.rng.get_word_pos();
        state[4] = pos as u64 as i64;
        state[5] = (pos >> 64) as u64 as i64;
        state[6] = g.rng.get_stream() as i64;
        state[7] = g.initial_seed as i64;
        state
    }

    /// `set_state(state)`: restores a state taken by [`Generator::state`].
    pub fn set_state(&self, state: &[i64]) -> Result<()> {
        if state.len() != RNG_STATE_LEN {
            bail!(
                Runtime,
                "Expected a generator state of size {RNG_STATE_LEN} but found the input RNG state size to be {}",
                state.len()
            );
        }
        let mut seed = [0u8; 32];
        for (bytes, word) in seed.chunks_exact_mut(8).zip(&state[..4]) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        let mut rng = ChaCha12Rng::from_seed(seed);
        rng.set_stream(state[6] as u64);
        rng.set_word_pos((state[4] as u64 as u128) | ((state[5] as u64 as u128) << 64));
        let mut g = self.0.lock();
        g.rng = rng;
        g.initial_seed = state[7] as u64;
        Ok(())
    }

    /// Runs `f` with this generator in force on this thread: the sampling
    /// ops it calls draw from it rather than from the global one.
    pub fn in_force<R>(&self, f: impl FnOnce() -> R) -> R {
        let outer = IN_FORCE.replace(Some(self.clone()));
        let _restore = Restore(outer);
        f()
    }
}

static GLOBAL: LazyLock<Generator> = LazyLock::new(Generator::default);

thread_local! {
    /// The generator that [`Generator::in_force`] put in force on this thread.
    static IN_FORCE: RefCell<Option<Generator>> = const { RefCell::new(None) };
}

/// Puts back the generator that was in force, even if the op panicked.
struct Restore(Option<Generator>);

impl Drop for Restore {
    fn drop(&mut self) {
        IN_FORCE.set(self.0.take());
    }
}

/// `manual_seed(seed)`: restarts the global generator from `seed`.
pub fn manual_seed(seed: u64) {
    GLOBAL.manual_seed(seed);
}

/// `get_rng_state()`: the global generator's state, for `set_rng_state`.
pub fn rng_state() -> [i64; RNG_STATE_LEN] {
    GLOBAL.state()
}

/// `set_rng_state(state)`: restores a state taken by [`rng_state`].
pub fn set_rng_state(state: &[i64]) -> Result<()> {
    GLOBAL.set_state(state)
}

/// `seed()`: reseeds the global generator from OS entropy.
pub fn seed() -> u64 {
    GLOBAL.seed()
}

pub fn initial_seed() -> u64 {
    GLOBAL.initial_seed()
}

/// The next draw of the generator in force: one a caller put in force on
/// this thread, else the global one.
fn next_seed() -> u64 {
    IN_FORCE
        .with_borrow(|g| g.as_ref().map(|g| g.0.lock().rng.next_u64()))
        .unwrap_or_else(|| GLOBAL.0.lock().rng.next_u64())
}

fn chunk_rng(seed: u64, chunk: usize) -> SmallRng {
    SmallRng::seed_from_u64(seed ^ (chunk as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// `n` samples of `sample(rng, i)` (`i` the flat index), chunked as above.
fn samples<T: Element>(
    n: usize,
    sample: impl Fn(&mut SmallRng, usize) -> T + Sync,
) -> Result<Vec<T>> {
    let seed = next_seed();
    let fill = |(c, chunk): (usize, &mut [T])| {
        let mut rng = chunk_rng(seed, c);
        for (j, x) in chunk.iter_mut().enumerate() {
            *x = sample(&mut rng, c * CHUNK + j);
        }
    };
    let mut out = try_filled(T::default(), n)?;
    if n >= PARALLEL_MIN_ELEMENTS {
        crate::parallel::for_each_chunk_mut(&mut out, CHUNK, |start, chunk| {
            fill((start / CHUNK, chunk))
        });
    } else {
        out.chunks_mut(CHUNK).enumerate().for_each(fill);
    }
    Ok(out)
}

/// Overwrites `t`'s elements (any layout) with samples and bumps its version.
fn fill_with<T: Element>(
    t: &Tensor,
    sample: impl Fn(&mut SmallRng, usize) -> T + Sync,
) -> Result<()> {
    let vals = samples(t.numel(), sample)?;
    let l = t.layout();
    let mut d = t.storage().write::<T>()?;
    if l.is_contiguous() {
        d[l.offset..l.offset + vals.len()].copy_from_slice(&vals);
    } else {
        for (o, v) in l.offsets().zip(vals) {
            d[o] = v;
        }
    }
    drop(d);
    t.bump_version();
    Ok(())
}

fn not_implemented(kernel: &str, dtype: DType) -> crate::Error {
    super::binary::float_dtype_error(kernel, dtype)
}

/// `uniform_(from, to)` in place.
pub fn uniform_(t: &Tensor, from: f64, to: f64) -> Result<()> {
    if from > to {
        bail!(
            Runtime,
            "uniform_ expects to return a [from, to) range, but found from={from} > to={to}"
        );
    }
    let span = to - from;
    match t.dtype() {
        DType::Float32 => {
            let (a, s) = (from as f32, span as f32);
            fill_with::<f32>(t, |r, _| a + s * r.gen::<f32>())?;
        }
        DType::Float64 => fill_with::<f64>(t, |r, _| from + span * r.gen::<f64>())?,
        // Both parts of a complex element are drawn from the range.
        DType::Complex64 => {
            let (a, s) = (from as f32, span as f32);
            fill_with::<Complex32>(t, |r, _| {
                Complex32::new(a + s * r.gen::<f32>(), a + s * r.gen::<f32>())
            })?;
        }
        DType::Complex128 => fill_with::<Complex64>(t, |r, _| {
            Complex64::new(from + span * r.gen::<f64>(), from + span * r.gen::<f64>())
        })?,
        d => return Err(not_implemented("check_uniform_bounds", d)),
    }
    Ok(())
}

/// `normal_(mean, std)` in place.
pub fn normal_(t: &Tensor, mean: f64, std: f64) -> Result<()> {
    if std < 0.0 {
        bail!(Runtime, "normal expects std >= 0.0, but found std {std}");
    }
    match t.dtype() {
        DType::Float32 => {
            let (m, s) = (mean as f32, std as f32);
            fill_with::<f32>(t, |r, _| m + s * r.sample::<f32, _>(StandardNormal))?;
        }
        DType::Float64 => {
            fill_with::<f64>(t, |r, _| mean + std * r.sample::<f64, _>(StandardNormal))?;
        }
        // As in PyTorch: `mean` in both parts, and each part with variance
        // `std^2 / 2`, so the complex samples have variance `std^2`.
        DType::Complex64 => {
            let (m, s) = (mean as f32, (std * FRAC_1_SQRT_2) as f32);
            fill_with::<Complex32>(t, |r, _| {
                let (re, im): (f32, f32) = (r.sample(StandardNormal), r.sample(StandardNormal));
                Complex32::new(m + s * re, m + s * im)
            })?;
        }
        DType::Complex128 => {
            let s = std * FRAC_1_SQRT_2;
            fill_with::<Complex64>(t, |r, _| {
                let (re, im): (f64, f64) = (r.sample(StandardNormal), r.sample(StandardNormal));
                Complex64::new(mean + s * re, mean + s * im)
            })?;
        }
        d => return Err(not_implemented("normal_kernel_cpu", d)),
    }
    Ok(())
}

/// `random_(from, to)`: integers drawn uniformly from `[from, to)`.
pub fn random_(t: &Tensor, from: i64, to: i64) -> Result<()> {
    if from >= to {
        bail!(
            Runtime,
            "random_ expects 'from' to be less than 'to', but got from={from} >= to={to}"
        );
    }
    if t.dtype() == DType::Bool && (from < 0 || to > 2) {
        bail!(Runtime, "to - 1 is out of bounds for bool");
    }
    if t.dtype().is_complex() {
        return Err(not_implemented("random_from_to_kernel_cpu", t.dtype()));
    }
    with_dtype!(t.dtype(), T => fill_with::<T>(t, |r, _| T::from_scalar(Scalar::Int(r.gen_range(from..to))))?);
    Ok(())
}

/// `bernoulli_(p)` in place: 1 with probability `p`.
pub fn bernoulli_scalar_(t: &Tensor, p: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&p) {
        bail!(
            Runtime,
            "bernoulli_ expects p to be in [0, 1], but got p={p}"
        );
    }
    if t.dtype().is_complex() {
        return Err(not_implemented("bernoulli_scalar_cpu_", t.dtype()));
    }
    with_dtype!(t.dtype(), T => fill_with::<T>(t, |r, _| T::from_scalar(Scalar::Bool(r.gen::<f64>() < p)))?);
    Ok(())
}

/// `bernoulli_(p)` with per-element probabilities `p` (broadcast to `t`).
pub fn bernoulli_tensor_(t: &Tensor, p: &Tensor) -> Result<()> {
    let p = super::shape::expand_to(&try_cast(p, DType::Float64)?.detach(), t.shape())?;
    let probs = p.to_vec::<f64>();
    if probs.iter().any(|q| !(0.0..=1.0).contains(q)) {
        bail!(
            Runtime,
            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"
        );
    }
    if t.dtype().is_complex() {
        return Err(not_implemented("bernoulli_tensor_cpu_p_", t.dtype()));
    }
    with_dtype!(t.dtype(), T => fill_with::<T>(t, |r, i| T::from_scalar(Scalar::Bool(r.gen::<f64>() < probs[i])))?);
    Ok(())
}

/// `bernoulli(p)`: a new tensor of `p`'s shape and dtype. Its gradient with
/// respect to `p` is zero (`BernoulliBackward0`).
pub fn bernoulli(p: &Tensor) -> Result<Tensor> {
    let out = Tensor::full(p.shape(), Scalar::Int(0), p.dtype())?;
    bernoulli_tensor_(&out, p)?;
    record(
        "BernoulliBackward0",
        &[p],
        &out,
        || (),
        |_, _, g| {
            Ok(grads![Some(Tensor::full(
                g.shape(),
                Scalar::Int(0),
                g.dtype()
            )?)])
        },
    );
    Ok(out)
}

/// `bernoulli(input, p)`: samples of the one probability `p` in `input`'s
/// shape and dtype. Not differentiable with respect to `input`.
pub fn bernoulli_with_probability(input: &Tensor, p: f64) -> Result<Tensor> {
    let out = Tensor::full(input.shape(), Scalar::Int(0), input.dtype())?;
    bernoulli_scalar_(&out, p)?;
    record(
        "NotImplemented",
        &[input],
        &out,
        || (),
        |_, _, _| bail!(Runtime, "derivative for aten::bernoulli is not implemented"),
    );
    Ok(out)
}

/// A new tensor of `shape` filled by `init`.
pub fn sampled(
    shape: &[usize],
    dtype: DType,
    init: impl FnOnce(&Tensor) -> Result<()>,
) -> Result<Tensor> {
    let out = Tensor::full(shape, Scalar::Int(0), dtype)?;
    init(&out)?;
    // A fresh version counter: a new tensor is at version 0, whatever
    // writes made it.
    Ok(out.data())
}

/// `normal(mean, std)` with tensor arguments (broadcast together).
pub fn normal_tensors(mean: &Tensor, std: &Tensor) -> Result<Tensor> {
    if std.to_scalars().iter().any(|s| s.as_f64() < 0.0) {
        bail!(Runtime, "normal expects all elements of std >= 0.0");
    }
    let dtype = super::result_type(&[mean, std]);
    let shape = crate::tensor::layout::broadcast_shapes(mean.shape(), std.shape())?;
    let z = sampled(&shape, dtype, |t| normal_(t, 0.0, 1.0))?;
    let (m, s) = (mean.detach(), std.detach());
    let out = super::binary::add(&m, &super::binary::mul(&z, &s)?)?;
    // As in PyTorch, a sample's gradient with respect to its parameters is
    // zero (named by which of them are tensors).
    let name = match (mean.is_wrapped_number(), std.is_wrapped_number()) {
        (false, true) => "NormalBackward1",
        (true, false) => "NormalBackward2",
        _ => "NormalBackward3",
    };
    let zeros_of = |t: &Tensor| (t.shape().to_vec(), t.dtype());
    let (mean_like, std_like) = (zeros_of(mean), zeros_of(std));
    record(
        name,
        &[mean, std],
        &out,
        || (),
        move |_, _, _| {
            let zeros =
                |(shape, dtype): &(Vec<usize>, DType)| Tensor::full(shape, Scalar::Int(0), *dtype);
            Ok(grads![Some(zeros(&mean_like)?), Some(zeros(&std_like)?)])
        },
    );
    Ok(out)
}

/// `randperm(n)`: a random permutation of `0..n`.
pub fn randperm(n: i64, dtype: DType) -> Result<Tensor> {
    if n < 0 {
        bail!(Runtime, "n must be non-negative, got{n}");
    }
    crate::tensor::layout::check_numel(&[n as usize])?;
    let mut v: Vec<i64> = try_collect(n as usize, 0..n)?;
    let mut rng = StdRng::seed_from_u64(next_seed());
    for i in (1..v.len()).rev() {
        v.swap(i, rng.gen_range(0..=i));
    }
    try_cast(&Tensor::from_vec(v, &[n as usize])?, dtype)
}

/// `multinomial(probs, num_samples, replacement)` over the last dimension.
pub fn multinomial(p: &Tensor, num_samples: i64, replacement: bool) -> Result<Tensor> {
    if p.ndim() == 0 || p.ndim() > 2 {
        bail!(Runtime, "prob_dist must be 1 or 2 dim");
    }
    if !p.dtype().is_floating_point() {
        bail!(
            Runtime,
            "multinomial only supports floating-point dtypes for input, got: {}",
            DType::scalar_type_name(p.dtype())
        );
    }
    if num_samples <= 0 {
        bail!(Runtime, "cannot sample n_sample <= 0 samples");
    }
    let cats = *p.shape().last().expect("ndim >= 1");
    let k = num_samples as usize;
    if !replacement && k > cats {
        bail!(
            Runtime,
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        );
    }
    let mut out_shape = p.shape()[..p.ndim() - 1].to_vec();
    out_shape.push(k);
    crate::tensor::layout::check_numel(&out_shape)?;
    let rows = try_cast(p, DType::Float64)?.to_vec::<f64>();
    if rows.iter().any(|q| !q.is_finite() || *q < 0.0) {
        bail!(
            Runtime,
            "probability tensor contains either `inf`, `nan` or element < 0"
        );
    }
    let mut rng = StdRng::seed_from_u64(next_seed());
    let mut out = try_buffer(rows.len() / cats.max(1) * k)?;
    for row in rows.chunks(cats.max(1)) {
        let mut w = row.to_vec();
        for _ in 0..k {
            let total: f64 = w.iter().sum();
            if total <= 0.0 {
                bail!(
                    Runtime,
                    "invalid multinomial distribution (sum of probabilities <= 0)"
                );
            }
            let mut u = rng.gen::<f64>() * total;
            let mut pick = w.iter().rposition(|&q| q > 0.0).unwrap_or(0);
            for (j, &q) in w.iter().enumerate() {
                if u < q {
                    pick = j;
                    break;
                }
                u -= q;
            }
            out.push(pick as i64);
            if !replacement {
                w[pick] = 0.0;
            }
        }
    }
    let mut shape = p.shape().to_vec();
    *shape.last_mut().expect("ndim >= 1") = k;
    Tensor::from_vec(out, &shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeding_reproduces_samples() {
        manual_seed(7);
        let a = sampled(&[100_000], DType::Float32, |t| normal_(t, 0.0, 1.0)).unwrap();
        manual_seed(7);
        let b = sampled(&[100_000], DType::Float32, |t| normal_(t, 0.0, 1.0)).unwrap();
        assert_eq!(a.to_vec::<f32>(), b.to_vec::<f32>());
        let mean = a.to_vec::<f32>().iter().map(|&x| x as f64).sum::<f64>() / 1e5;
        assert!(mean.abs() < 0.02);
    }
}
