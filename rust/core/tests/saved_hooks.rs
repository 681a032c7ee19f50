//! Saved-tensor hooks and anomaly detection in the core: packed saved
//! tensors are unpacked through the hook, a pack hook may not modify its
//! input, and anomaly mode names the node that returned NaN.

use ferrograd_core::autograd::saved::{
    pop_saved_tensors_hooks, push_saved_tensors_hooks, take_pack_error,
};
use ferrograd_core::autograd::{anomaly, backward, PackedSaved, SavedTensorsHooks};
use ferrograd_core::ops::{binary, inplace, reduce, unary};
use ferrograd_core::{Result, Scalar, Tensor};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn leaf(values: Vec<f64>) -> Tensor {
    let n = values.len();
    let t = Tensor::from_vec(values, &[n]).unwrap();
    t.set_requires_grad(true).unwrap();
    t
}

/// Keeps a copy scaled by `scale` and counts unpacks.
struct Scaling {
    scale: f64,
    unpacks: Arc<AtomicUsize>,
}

struct Scaled(Tensor, Arc<AtomicUsize>);

impl PackedSaved for Scaled {
    fn unpack(&self) -> Result<Tensor> {
        self.1.fetch_add(1, Ordering::Relaxed);
        Ok(self.0.clone())
    }
}

impl SavedTensorsHooks for Scaling {
    fn pack(&self, t: &Tensor) -> Result<Arc<dyn PackedSaved>> {
        let scaled = binary::mul(
            &t.detach(),
            &Tensor::wrapped_number(Scalar::Float(self.scale)),
        )?;
        Ok(Arc::new(Scaled(scaled, self.unpacks.clone())))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn backward_uses_what_the_hook_unpacks() {
    let unpacks = Arc::new(AtomicUsize::new(0));
    let x = leaf(vec![0.5, 1.0]);
    push_saved_tensors_hooks(Arc::new(Scaling {
        scale: 2.0,
        unpacks: unpacks.clone(),
    }));
    let y = reduce::sum(&unary::sin(&x).unwrap(), &[], false).unwrap();
    assert!(pop_saved_tensors_hooks());
    assert!(!pop_saved_tensors_hooks());
    backward(&[y], &[None], None, false, None).unwrap();
    // sin saved 2x instead of x: the gradient is cos(2x).
    let expected: Vec<f64> = [0.5f64, 1.0].iter().map(|v| (2.0 * v).cos()).collect();
    assert_eq!(x.grad().unwrap().to_vec::<f64>(), expected);
    assert_eq!(unpacks.load(Ordering::Relaxed), 1);
}

/// A pack hook that modifies its input.
struct Mutating;

impl SavedTensorsHooks for Mutating {
    fn pack(&self, t: &Tensor) -> Result<Arc<dyn PackedSaved>> {
        inplace::add_(
            t,
            &Tensor::wrapped_number(Scalar::Float(0.0)),
            Scalar::Float(1.0),
        )?;
        Ok(Arc::new(Scaled(t.clone(), Arc::new(AtomicUsize::new(0)))))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn a_pack_hook_may_not_modify_its_input() {
    let x = leaf(vec![1.0]);
    let a = binary::mul(&x, &Tensor::wrapped_number(Scalar::Float(1.0))).unwrap();
    push_saved_tensors_hooks(Arc::new(Mutating));
    let y = unary::sin(&a).unwrap();
    pop_saved_tensors_hooks();
    let err = take_pack_error().expect("the op reports the failed pack");
    assert!(err
        .to_string()
        .starts_with("A saved tensor pack hook is modifying its input in place."));
    // The saved tensor is unusable, with the same error.
    let y = reduce::sum(&y, &[], false).unwrap();
    let err = backward(&[y], &[None], None, false, None).unwrap_err();
    assert!(err
        .to_string()
        .contains("pack hook is modifying its input in place"));
    assert!(take_pack_error().is_none());
}

#[test]
fn anomaly_mode_names_the_node_that_returned_nan() {
    let a = leaf(vec![0.0]);
    let zero_over_zero = binary::div(&a, &a).unwrap();
    anomaly::set_enabled(true, true);
    let err = backward(
        std::slice::from_ref(&zero_over_zero),
        &[None],
        Some(true),
        false,
        None,
    )
    .unwrap_err();
    anomaly::set_enabled(true, false);
    let unchecked = backward(&[zero_over_zero], &[None], None, false, None);
    anomaly::set_enabled(false, true);
    assert_eq!(
        err.to_string(),
        "Function 'DivBackward0' returned nan values in its 1th output."
    );
    assert!(unchecked.is_ok());
    assert!(!anomaly::is_enabled());
}
