//! In-place writes through views: the base's history becomes `CopySlices`,
//! views regenerate theirs from the base, and refused writes are errors.

use ferrograd_core::autograd::backward;
use ferrograd_core::ops::{binary, index, inplace, reduce, shape, unary};
use ferrograd_core::tensor::MemoryFormat;
use ferrograd_core::{Scalar, Tensor};

fn leaf(values: Vec<f64>, shape: &[usize]) -> Tensor {
    let t = Tensor::from_vec(values, shape).unwrap();
    t.set_requires_grad(true).unwrap();
    t
}

fn number(v: f64) -> Tensor {
    Tensor::wrapped_number(Scalar::Float(v))
}

fn name(t: &Tensor) -> String {
    t.grad_fn().expect("has history").name().to_string()
}

#[test]
fn write_through_view_rewrites_base_history() {
    let x = leaf(vec![1.0, 2.0, 3.0, 4.0], &[4]);
    let b = binary::mul(&x, &number(1.0)).unwrap();
    let v = shape::narrow(&b, 0, 1, 2).unwrap();
    let vv = shape::unsqueeze(&v, 0).unwrap();
    inplace::mul_(&v, &number(3.0)).unwrap();
    assert_eq!(name(&b), "CopySlices");
    assert_eq!(name(&v), "AsStridedBackward0");
    assert_eq!(name(&vv), "AsStridedBackward0");
    assert_eq!(b.to_vec::<f64>(), vec![1.0, 6.0, 9.0, 4.0]);
    let weights = Tensor::from_vec(vec![1.0, 10.0, 100.0, 1000.0], &[4]).unwrap();
    let loss = reduce::sum(&binary::mul(&b, &weights).unwrap(), &[], false).unwrap();
    // The view read once more through its regenerated history.
    let extra = reduce::sum(&vv, &[], false).unwrap();
    let total = binary::add(&loss, &extra).unwrap();
    backward(&[total], &[None], None, false, None).unwrap();
    assert_eq!(
        x.grad().unwrap().to_vec::<f64>(),
        vec![1.0, 33.0, 303.0, 1000.0]
    );
}

#[test]
fn refused_writes_are_errors() {
    let x = leaf(vec![1.0, 2.0, 3.0], &[3]);
    let err = inplace::add_(&x, &number(1.0), Scalar::Int(1)).unwrap_err();
    assert!(err.to_string().starts_with("a leaf Variable"));
    let v = shape::narrow(&x, 0, 0, 2).unwrap();
    let err = inplace::add_(&v, &number(1.0), Scalar::Int(1)).unwrap_err();
    assert!(err.to_string().starts_with("a view of a leaf Variable"));
    let b = binary::mul(&x, &number(1.0)).unwrap();
    let parts = index::unbind(&b, 0).unwrap();
    let err = inplace::mul_(&parts[1], &number(2.0)).unwrap_err();
    assert!(err.to_string().starts_with("Output 1 of Unbind is a view"));
}

#[test]
fn successor_of_a_leaf_receives_the_gradients_of_earlier_graphs() {
    let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
    x.set_requires_grad(true).unwrap();
    let loss = reduce::sum(&binary::mul(&x, &x).unwrap(), &[], false).unwrap();
    let replaced = x
        .with_data(&Tensor::from_vec(vec![5.0f64, 6.0, 7.0], &[3]).unwrap())
        .unwrap();
    assert!(replaced.requires_grad() && replaced.is_leaf());
    assert!(x.latest().same(&replaced));
    backward(&[loss], &[None], None, false, None).unwrap();
    // Computed with the values the graph saved, delivered to the successor.
    assert_eq!(
        replaced.grad().unwrap().to_vec::<f64>(),
        vec![2.0, 4.0, 6.0]
    );
    assert!(x.grad().is_none());
}

#[test]
fn restride_records_the_view_and_shares_the_version_counter() {
    let x = Tensor::from_vec((0..6).map(f64::from).collect(), &[2, 3]).unwrap();
    x.set_requires_grad(true).unwrap();
    let y = unary::neg(&x).unwrap();
    let t = shape::restride_(&y, shape::t).unwrap();
    assert_eq!(t.shape(), &[3, 2]);
    assert_eq!(t.strides(), &[1, 3]);
    assert_eq!(t.version(), y.version());
    assert_eq!(t.version(), 1);
    assert_eq!(t.grad_fn().unwrap().name(), "TBackward0");
    assert!(t.view_base().is_none());
    let weights = Tensor::from_vec((1..=6).map(f64::from).collect(), &[3, 2]).unwrap();
    let loss = reduce::sum(&binary::mul(&t, &weights).unwrap(), &[], false).unwrap();
    backward(&[loss], &[None], None, false, None).unwrap();
    assert_eq!(
        x.grad().unwrap().to_vec::<f64>(),
        vec![-1.0, -3.0, -5.0, -2.0, -4.0, -6.0]
    );
}

#[test]
fn resize_grows_into_a_copy_and_shrinks_in_place() {
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let small = shape::resize_(&x, &[1, 2], Some(MemoryFormat::Contiguous)).unwrap();
    assert!(std::sync::Arc::ptr_eq(small.storage(), x.storage()));
    assert_eq!(small.to_vec::<f32>(), vec![1.0, 2.0]);
    let big = shape::resize_(&small, &[2, 3], None).unwrap();
    assert_eq!(big.to_vec::<f32>(), vec![1.0, 2.0, 3.0, 4.0, 0.0, 0.0]);
    assert_eq!(big.version(), 2);
    assert!(shape::resize_(&x, &[-1], None).is_err());
}

#[test]
fn resize_to_the_same_shape_keeps_strides_and_version_unless_a_format_is_asked() {
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let xt = shape::transpose(&x, 0, 1).unwrap();
    let kept = shape::resize_(&xt, &[2, 2], None).unwrap();
    assert_eq!(kept.strides(), &[1, 2]);
    assert_eq!(kept.version(), 0);
    let dense = shape::resize_(&xt, &[2, 2], Some(MemoryFormat::Contiguous)).unwrap();
    assert_eq!(dense.strides(), &[2, 1]);
    assert_eq!(dense.version(), 0);
    let reshaped = shape::resize_(&xt, &[4], None).unwrap();
    assert_eq!(reshaped.version(), 1);
}

#[test]
fn set_shares_the_source_storage_and_keeps_its_own_version_counter() {
    let x = Tensor::from_vec(vec![0.0f32; 2], &[2]).unwrap();
    let source = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let whole = shape::set_(&x, &source, None).unwrap();
    assert!(std::sync::Arc::ptr_eq(whole.storage(), source.storage()));
    assert_eq!((whole.version(), source.version()), (1, 0));
    let window = shape::set_(&whole, &source, Some((&[2], &[2], 1))).unwrap();
    assert_eq!(window.to_vec::<f32>(), vec![2.0, 4.0]);
    assert_eq!(window.version(), 2);
    let wide = Tensor::from_vec(vec![1.0f64], &[1]).unwrap();
    assert!(shape::set_(&window, &wide, None).is_err());
    assert!(shape::set_(&window, &source, Some((&[4], &[1], 1))).is_err());
}

#[test]
fn version_counters_made_on_first_need_are_shared_by_every_alias() {
    let x = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
    assert_eq!(x.version(), 0);
    // An alias taken before any write shares the counter the write bumps.
    let early = x.detach();
    inplace::mul_(&x, &number(2.0)).unwrap();
    assert_eq!((x.version(), early.version()), (1, 1));
    // A counter made by a write is shared by aliases taken after it.
    let y = Tensor::from_vec(vec![3.0f64], &[1]).unwrap();
    inplace::mul_(&y, &number(2.0)).unwrap();
    let late = shape::view(&y, &[1]).unwrap();
    inplace::mul_(&late, &number(2.0)).unwrap();
    assert_eq!((y.version(), late.version()), (2, 2));
    // `.data` reads the same memory with a counter of its own.
    let data = x.data();
    inplace::mul_(&data, &number(2.0)).unwrap();
    assert_eq!((x.version(), data.version()), (1, 1));
    assert_eq!(x.to_vec::<f64>(), vec![4.0, 8.0]);
    inplace::mul_(&early, &number(2.0)).unwrap();
    assert_eq!((x.version(), data.version()), (2, 1));
}

#[test]
fn a_write_after_a_save_is_detected_on_a_tensor_that_had_no_counter() {
    let w = leaf(vec![1.0, 2.0], &[2]);
    let x = Tensor::from_vec(vec![3.0f64, 4.0], &[2]).unwrap();
    let y = binary::mul(&w, &x).unwrap();
    inplace::mul_(&x, &number(2.0)).unwrap();
    let loss = reduce::sum(&y, &[], false).unwrap();
    let err = backward(&[loss], &[None], None, false, None).unwrap_err();
    assert!(err.to_string().contains("modified by an inplace operation"));
}
