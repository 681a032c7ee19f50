//! Engine behaviour: dependency counting, accumulation, diamonds, graph
//! freeing, `grad` with selected inputs, and parallel execution agreeing
//! with serial execution.

use ferrograd_core::autograd::engine::{current_task_id, will_execute};
use ferrograd_core::autograd::{backward, grad, register_hook, GradModeGuard};
use ferrograd_core::ops::{binary, reduce, unary};
use ferrograd_core::{Scalar, Tensor};

fn leaf(values: Vec<f64>, shape: &[usize]) -> Tensor {
    let t = Tensor::from_vec(values, shape).unwrap();
    t.set_requires_grad(true).unwrap();
    t
}

fn grad_of(t: &Tensor) -> Vec<f64> {
    t.grad().expect("gradient accumulated").to_vec::<f64>()
}

fn scalar_root(t: &Tensor) -> Tensor {
    reduce::sum(t, &[], false).unwrap()
}

#[test]
fn chain_rule_through_a_chain() {
    let x = leaf(vec![1.0, 2.0, 3.0], &[3]);
    // y = sum(exp(x) * 2)
    let y = scalar_root(
        &binary::mul(
            &unary::exp(&x).unwrap(),
            &Tensor::wrapped_number(Scalar::Float(2.0)),
        )
        .unwrap(),
    );
    backward(&[y], &[None], None, false, None).unwrap();
    let expected: Vec<f64> = [1.0f64, 2.0, 3.0].iter().map(|v| 2.0 * v.exp()).collect();
    assert_eq!(grad_of(&x), expected);
}

#[test]
fn diamond_sums_both_paths_once() {
    // z = a*b + a*c with b = x, c = x: dz/dx = 2a... with a = x: z = 2 x^2, dz/dx = 4x.
    let x = leaf(vec![1.5, -2.0], &[2]);
    let b = binary::mul(&x, &x).unwrap();
    let c = binary::mul(&x, &x).unwrap();
    let z = scalar_root(&binary::add(&b, &c).unwrap());
    backward(&[z], &[None], None, false, None).unwrap();
    assert_eq!(grad_of(&x), vec![6.0, -8.0]);
}

#[test]
fn leaf_gradients_accumulate_across_calls() {
    let x = leaf(vec![1.0, 2.0], &[2]);
    for _ in 0..3 {
        let y = scalar_root(&binary::mul(&x, &Tensor::wrapped_number(Scalar::Float(3.0))).unwrap());
        backward(&[y], &[None], None, false, None).unwrap();
    }
    assert_eq!(grad_of(&x), vec![9.0, 9.0]);
}

#[test]
fn second_backward_without_retain_graph_fails() {
    let x = leaf(vec![2.0], &[1]);
    let y = scalar_root(&binary::mul(&x, &x).unwrap());
    backward(std::slice::from_ref(&y), &[None], None, false, None).unwrap();
    let err = backward(&[y], &[None], None, false, None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("Trying to backward through the graph a second time"),
        "{err}"
    );
}

#[test]
fn retained_graph_runs_twice() {
    let x = leaf(vec![2.0], &[1]);
    let y = scalar_root(&binary::mul(&x, &x).unwrap());
    backward(std::slice::from_ref(&y), &[None], Some(true), false, None).unwrap();
    backward(&[y], &[None], None, false, None).unwrap();
    assert_eq!(grad_of(&x), vec![8.0]);
}

#[test]
fn grad_returns_only_requested_inputs_and_leaves_dot_grad_alone() {
    let x = leaf(vec![1.0, 2.0], &[2]);
    let w = leaf(vec![3.0, 4.0], &[2]);
    let y = scalar_root(&binary::mul(&x, &w).unwrap());
    let g = grad(&[y], std::slice::from_ref(&x), &[None], None, false, false).unwrap();
    assert_eq!(g[0].as_ref().unwrap().to_vec::<f64>(), vec![3.0, 4.0]);
    assert!(x.grad().is_none() && w.grad().is_none());
}

#[test]
fn unused_input_is_an_error_unless_allowed() {
    let x = leaf(vec![1.0], &[1]);
    let unused = leaf(vec![1.0], &[1]);
    let y = scalar_root(&x);
    let err = grad(
        std::slice::from_ref(&y),
        std::slice::from_ref(&unused),
        &[None],
        Some(true),
        false,
        false,
    )
    .unwrap_err();
    assert!(err
        .to_string()
        .contains("appears to not have been used in the graph"));
    let g = grad(&[y], &[unused], &[None], None, false, true).unwrap();
    assert!(g[0].is_none());
}

#[test]
fn create_graph_gives_second_derivatives() {
    // y = x^3: dy/dx = 3x^2, d2y/dx2 = 6x.
    let x = leaf(vec![2.0], &[1]);
    let y = scalar_root(&binary::pow_scalar(&x, Scalar::Int(3)).unwrap());
    let g = grad(&[y], std::slice::from_ref(&x), &[None], None, true, false).unwrap();
    let g = g[0].clone().unwrap();
    assert_eq!(g.to_vec::<f64>(), vec![12.0]);
    let gg = grad(&[scalar_root(&g)], &[x], &[None], None, false, false).unwrap();
    assert_eq!(gg[0].as_ref().unwrap().to_vec::<f64>(), vec![12.0]);
}

#[test]
fn no_grad_records_nothing() {
    let x = leaf(vec![1.0], &[1]);
    let _guard = GradModeGuard::new(false);
    let y = binary::mul(&x, &x).unwrap();
    assert!(!y.requires_grad() && y.grad_fn().is_none());
}

/// Many heavy independent branches: the parallel engine must give the same
/// gradients as a single-threaded run.
#[test]
fn parallel_branches_match_serial_execution() {
    let n = 1 << 16;
    let run = || {
        let x = leaf((0..n).map(|i| (i % 97) as f64 / 50.0 - 1.0).collect(), &[n]);
        let mut total: Option<Tensor> = None;
        for k in 0..8 {
            let scale = Tensor::wrapped_number(Scalar::Float(1.0 + k as f64 / 8.0));
            let branch = scalar_root(&unary::tanh(&binary::mul(&x, &scale).unwrap()).unwrap());
            total = Some(match total {
                None => branch,
                Some(t) => binary::add(&t, &branch).unwrap(),
            });
        }
        backward(&[total.unwrap()], &[None], None, false, None).unwrap();
        grad_of(&x)
    };
    let serial = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(run);
    let parallel = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap()
        .install(run);
    assert_eq!(serial.len(), parallel.len());
    for (a, b) in serial.iter().zip(&parallel) {
        assert!((a - b).abs() <= 1e-12 * a.abs().max(1.0), "{a} vs {b}");
    }
}

#[test]
fn a_parallel_backward_starts_on_the_calling_thread() {
    // Two branches of 2^16 elements each make the backward a parallel one.
    let n = 1 << 16;
    let x = leaf(vec![0.5; n], &[n]);
    let branches = [unary::tanh(&x).unwrap(), unary::exp(&x).unwrap()];
    let both = binary::add(&branches[0], &branches[1]).unwrap();
    let ran_on = std::sync::Arc::new(std::sync::Mutex::new(None));
    let record = ran_on.clone();
    register_hook(
        &both,
        std::sync::Arc::new(move |_| {
            *record.lock().unwrap() = Some(std::thread::current().id());
            Ok(None)
        }),
    )
    .unwrap();
    backward(&[scalar_root(&both)], &[None], None, false, None).unwrap();
    assert_eq!(*ran_on.lock().unwrap(), Some(std::thread::current().id()));
    let expected = 1.0 - 0.5f64.tanh().powi(2) + 0.5f64.exp();
    assert!(grad_of(&x).iter().all(|g| (g - expected).abs() < 1e-12));
}

#[test]
fn hooks_see_the_call_they_run_in() {
    let x = leaf(vec![0.5, 1.5], &[2]);
    let (a, b) = (unary::tanh(&x).unwrap(), unary::exp(&x).unwrap());
    let unused = unary::sin(&x).unwrap();
    let y = scalar_root(&binary::add(&a, &b).unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    let (b_fn, unused_fn) = (b.grad_fn().unwrap(), unused.grad_fn().unwrap());
    register_hook(
        &a,
        std::sync::Arc::new(move |_| {
            record.lock().unwrap().push((
                current_task_id(),
                will_execute(&b_fn),
                will_execute(&unused_fn),
            ));
            Ok(None)
        }),
    )
    .unwrap();
    assert_eq!(current_task_id(), None);
    backward(std::slice::from_ref(&y), &[None], Some(true), false, None).unwrap();
    // Only the path to `b`'s input runs in a partial call.
    grad(&[y], std::slice::from_ref(&a), &[None], None, false, false).unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    let (first, second) = (seen[0], seen[1]);
    assert!(first.0.is_some() && second.0.is_some() && first.0 != second.0);
    assert_eq!((first.1, first.2), (true, false));
    assert_eq!((second.1, second.2), (false, false));
    assert_eq!(current_task_id(), None);
    assert!(!will_execute(&a.grad_fn().unwrap()));
}

#[test]
fn concurrent_backward_on_a_shared_leaf_loses_nothing() {
    let x = leaf(vec![1.0, 2.0, 3.0], &[3]);
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let x = x.clone();
            std::thread::spawn(move || {
                for _ in 0..50 {
                    let y = scalar_root(
                        &binary::mul(&x, &Tensor::wrapped_number(Scalar::Float(2.0))).unwrap(),
                    );
                    backward(&[y], &[None], None, false, None).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(grad_of(&x), vec![800.0, 800.0, 800.0]);
}

#[test]
fn broadcast_gradients_are_summed_to_input_shape() {
    let a = leaf(vec![1.0, 2.0, 3.0], &[3, 1]);
    let b = leaf(vec![10.0, 20.0], &[2]);
    let y = scalar_root(&binary::mul(&a, &b).unwrap());
    backward(&[y], &[None], None, false, None).unwrap();
    assert_eq!(grad_of(&a), vec![30.0, 30.0, 30.0]);
    assert_eq!(grad_of(&b), vec![6.0, 6.0]);
}

#[test]
fn very_deep_graphs_build_run_and_free_without_stack_overflow() {
    let x = leaf(vec![0.5], &[1]);
    let w = Tensor::wrapped_number(Scalar::Float(1.0));
    let mut y = x.clone();
    for _ in 0..200_000 {
        y = binary::mul(&y, &w).unwrap();
    }
    backward(&[scalar_root(&y)], &[None], None, false, None).unwrap();
    assert_eq!(grad_of(&x), vec![1.0]);
    drop(y);
}

#[test]
fn deep_graphs_with_saved_tensors_free_without_backward() {
    let x = leaf(vec![1.0], &[1]);
    let mut y = x.clone();
    for _ in 0..200_000 {
        y = binary::mul(&y, &y).unwrap();
    }
    drop(y);
}

#[test]
fn deep_graphs_over_many_leaves_free_without_stack_overflow() {
    // Each leaf's accumulator is also named by the leaf's weak handle, so
    // the unlinking drop lets it go as it is rather than emptying it.
    let leaves: Vec<Tensor> = (0..100_000).map(|_| leaf(vec![1.0], &[1])).collect();
    let mut y = leaves[0].clone();
    for l in &leaves[1..] {
        y = binary::mul(&y, l).unwrap();
    }
    drop(y);
    let z = binary::mul(&leaves[0], &leaves[1]).unwrap();
    backward(&[scalar_root(&z)], &[None], None, false, None).unwrap();
    assert_eq!(grad_of(&leaves[0]), vec![1.0]);
}

/// Threads that discover one retained graph at the same moment each number
/// it fully: nodes claimed by another thread's discovery are looked up in
/// that call's own map, and no claim outlives its call.
#[test]
fn concurrent_discovery_of_one_graph_numbers_every_node() {
    let x = leaf(vec![0.5, -1.0, 2.0], &[3]);
    // A diamond-rich graph: each level reads the previous one twice.
    let mut y = x.clone();
    for _ in 0..50 {
        y = unary::tanh(&binary::add(&y, &binary::mul(&y, &y).unwrap()).unwrap()).unwrap();
    }
    let root = scalar_root(&y);
    let grad_of_x = || {
        let g = grad(
            std::slice::from_ref(&root),
            std::slice::from_ref(&x),
            &[None],
            Some(true),
            false,
            false,
        );
        g.unwrap()[0].clone().unwrap().to_vec::<f64>()
    };
    let expected = grad_of_x();
    assert!(expected.iter().all(|g| g.is_finite() && *g != 0.0));
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..50 {
                    assert_eq!(grad_of_x(), expected);
                }
            });
        }
    });
}
