//! Engine and kernel benchmarks: `cargo bench -p ferrograd-core`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ferrograd_core::autograd::backward;
use ferrograd_core::ops::{binary, matmul, reduce, shape, unary};
use ferrograd_core::{Scalar, Tensor};

fn leaf(n: usize) -> Tensor {
    let t = Tensor::from_vec((0..n).map(|i| (i % 101) as f32 / 100.0).collect(), &[n]).unwrap();
    t.set_requires_grad(true).unwrap();
    t
}

fn root(t: &Tensor) -> Tensor {
    reduce::sum(t, &[], false).unwrap()
}

/// A chain of `depth` tiny ops: per-node overhead of graph build and backward.
fn chain(c: &mut Criterion) {
    let x = leaf(16);
    let scale = Tensor::wrapped_number(Scalar::Float(1.0001));
    c.bench_function("chain_2000_tiny_ops", |b| {
        b.iter(|| {
            let mut y = x.clone();
            for _ in 0..1000 {
                y = binary::add(&binary::mul(&y, &scale).unwrap(), &scale).unwrap();
            }
            backward(&[root(&y)], &[None], None, false, None).unwrap();
            x.set_grad(None).unwrap();
        })
    });
}

/// Diamonds: every node feeds two others that meet again.
fn diamonds(c: &mut Criterion) {
    let x = leaf(16);
    c.bench_function("diamonds_500", |b| {
        b.iter(|| {
            let mut y = x.clone();
            for _ in 0..500 {
                let l = unary::tanh(&y).unwrap();
                let r = unary::sigmoid(&y).unwrap();
                y = binary::add(&l, &r).unwrap();
            }
            backward(&[root(&y)], &[None], None, false, None).unwrap();
            x.set_grad(None).unwrap();
        })
    });
}

/// Independent heavy branches, which the engine runs in parallel.
fn wide(c: &mut Criterion) {
    let mut group = c.benchmark_group("wide_branches");
    group.sample_size(20);
    for branches in [1usize, 4, 16] {
        let x = leaf(1 << 18);
        group.bench_with_input(
            BenchmarkId::from_parameter(branches),
            &branches,
            |b, &branches| {
                b.iter(|| {
                    let mut total: Option<Tensor> = None;
                    for _ in 0..branches {
                        let br = root(&unary::tanh(&unary::exp(&x).unwrap()).unwrap());
                        total = Some(match total {
                            None => br,
                            Some(t) => binary::add(&t, &br).unwrap(),
                        });
                    }
                    backward(&[total.unwrap()], &[None], None, false, None).unwrap();
                    x.set_grad(None).unwrap();
                })
            },
        );
    }
    group.finish();
}

/// A deep graph: 10^4 nodes in one chain.
fn deep(c: &mut Criterion) {
    let x = leaf(4);
    c.bench_function("deep_10000", |b| {
        b.iter(|| {
            let mut y = x.clone();
            for _ in 0..10_000 {
                y = unary::tanh(&y).unwrap();
            }
            backward(&[root(&y)], &[None], None, false, None).unwrap();
            x.set_grad(None).unwrap();
        })
    });
}

fn kernels(c: &mut Criterion) {
    let mut group = c.benchmark_group("kernels");
    group.sample_size(20);
    for n in [1usize << 10, 1 << 16, 1 << 22] {
        let a = Tensor::from_vec(vec![1.5f32; n], &[n]).unwrap();
        let b = Tensor::from_vec(vec![0.5f32; n], &[n]).unwrap();
        group.bench_with_input(BenchmarkId::new("mul", n), &n, |bench, _| {
            bench.iter(|| binary::mul(&a, &b).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("tanh", n), &n, |bench, _| {
            bench.iter(|| unary::tanh(&a).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("sum", n), &n, |bench, _| {
            bench.iter(|| root(&a))
        });
    }
    group.finish();
}

/// Matrix products: square ones, and a linear layer's `x @ W.t()` (a
/// right operand stored by columns) with the two products of its backward.
fn products(c: &mut Criterion) {
    let mut group = c.benchmark_group("gemm");
    group.sample_size(20);
    let matrix = |rows: usize, cols: usize| {
        let data = (0..rows * cols)
            .map(|i| (i % 97) as f32 / 97.0 - 0.5)
            .collect();
        Tensor::from_vec(data, &[rows, cols]).unwrap()
    };
    for n in [256usize, 1024] {
        let (a, b) = (matrix(n, n), matrix(n, n));
        group.bench_with_input(BenchmarkId::new("square", n), &n, |bench, _| {
            bench.iter(|| matmul::mm(&a, &b).unwrap())
        });
    }
    let (x, w, g) = (matrix(64, 784), matrix(512, 784), matrix(64, 512));
    let wt = shape::transpose(&w, 0, 1).unwrap();
    let (gt, xt) = (
        shape::transpose(&g, 0, 1).unwrap(),
        shape::transpose(&x, 0, 1).unwrap(),
    );
    group.bench_function("linear_64x784_by_512", |bench| {
        bench.iter(|| matmul::mm(&x, &wt).unwrap())
    });
    group.bench_function("linear_grad_input", |bench| {
        bench.iter(|| matmul::mm(&g, &w).unwrap())
    });
    group.bench_function("linear_grad_weight", |bench| {
        bench.iter(|| matmul::mm(&gt, &x).unwrap())
    });
    group.bench_function("linear_grad_weight_transposed", |bench| {
        bench.iter(|| matmul::mm(&xt, &g).unwrap())
    });
    group.finish();
}

criterion_group!(benches, chain, diamonds, wide, deep, kernels, products);
criterion_main!(benches);
