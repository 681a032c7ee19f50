//! Complex numbers: views between a complex tensor and its real and
//! imaginary parts (`real`, `imag`, `view_as_real`, `view_as_complex`),
//! `angle`, `polar` and `complex`.
//!
//! Gradients follow PyTorch's convention for complex autograd: for a real
//! loss the gradient of a complex input is the conjugate Wirtinger
//! derivative, so with an incoming gradient `g` an op `y = f(z)` sends back
//! `conj(∂y/∂z) * g + (∂y/∂conj(z)) * conj(g)`. A holomorphic op multiplies
//! by the conjugate of its derivative; an op into the reals (`abs`, `angle`,
//! `real`) or out of them (`complex`, `polar`) uses the same formula with a
//! real `g` or a real input.

use super::binary::{div, eq, mul, sub};
use super::copy::{clone, try_cast};
use super::elementwise::{map, zip_map};
use super::shape::select;
use super::unary::{abs, conj, cos, sin, where_, zero_of, zeros_like};
use crate::autograd::{record, SavedTensor};
use crate::tensor::layout::Layout;
use crate::tensor::{DType, Scalar, Tensor};
use crate::{bail, grads, Result};
use num_complex::{Complex32, Complex64};

/// `base`'s memory seen as `dtype` elements laid out by `layout`: the view
/// shares the buffer and the version counter and is marked as a view.
fn reinterpret_view(base: &Tensor, dtype: DType, layout: Layout) -> Tensor {
    let v = base.alias_as(dtype, layout);
    crate::autograd::views::mark_view(&v, base);
    v
}

/// `view_as_real(z)`: a real view with a trailing dimension of size 2
/// holding the real and imaginary parts.
pub fn view_as_real(z: &Tensor) -> Result<Tensor> {
    if !z.dtype().is_complex() {
        bail!(
            Runtime,
            "view_as_real is only supported for complex tensors"
        );
    }
    let l = z.layout();
    let mut layout = Layout {
        shape: l.shape.clone(),
        strides: l.strides.iter().map(|s| s * 2).collect(),
        offset: l.offset * 2,
    };
    layout.shape.push(2);
    layout.strides.push(1);
    let out = reinterpret_view(z, z.dtype().to_real(), layout);
    record(
        "ViewAsRealBackward0",
        &[z],
        &out,
        || (),
        // A fresh tensor, never an alias of `g`: gradients may be
        // accumulated into in place.
        |_, _, g| {
            Ok(grads![Some(complex(
                &select(g, -1, 0)?,
                &select(g, -1, 1)?
            )?)])
        },
    );
    Ok(out)
}

/// `view_as_complex(x)`: a complex view of a real tensor whose last
/// dimension (size 2, stride 1) holds the real and imaginary parts.
pub fn view_as_complex(x: &Tensor) -> Result<Tensor> {
    if !x.dtype().is_floating_point() {
        bail!(
            Runtime,
            "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: {}",
            DType::scalar_type_name(x.dtype())
        );
    }
    let l = x.layout();
    let n = l.ndim();
    if n == 0 {
        bail!(Runtime, "Input tensor must have one or more dimensions");
    }
    if l.shape[n - 1] != 2 {
        bail!(Runtime, "Tensor must have a last dimension of size 2");
    }
    if l.strides[n - 1] != 1 {
        bail!(Runtime, "Tensor must have a last dimension with stride 1");
    }
    if l.strides[..n - 1].iter().any(|s| s % 2 != 0) {
        bail!(
            Runtime,
            "Tensor must have a stride divisible by 2 for all but last dimension"
        );
    }
    if l.offset % 2 != 0 {
        bail!(Runtime, "Tensor must have a storage_offset divisible by 2");
    }
    let layout = Layout {
        shape: l.shape[..n - 1].into(),
        strides: l.strides[..n - 1].iter().map(|s| s / 2).collect(),
        offset: l.offset / 2,
    };
    let out = reinterpret_view(x, x.dtype().to_complex(), layout);
    record(
        "ViewAsComplexBackward0",
        &[x],
        &out,
        || (),
        |_, _, g| Ok(grads![Some(clone(&view_as_real(g)?)?)]),
    );
    Ok(out)
}

/// `z.real`: a view of the real parts (a real tensor is its own real part).
pub fn real(z: &Tensor) -> Result<Tensor> {
    if !z.dtype().is_complex() {
        return Ok(z.clone());
    }
    select(&view_as_real(z)?, -1, 0)
}

/// `z.imag`: a view of the imaginary parts.
pub fn imag(z: &Tensor) -> Result<Tensor> {
    if !z.dtype().is_complex() {
        bail!(
            Runtime,
            "imag is not implemented for tensors with non-complex dtypes."
        );
    }
    select(&view_as_real(z)?, -1, 1)
}

/// `angle(z)`: the argument of each element, in (-π, π]; for real tensors
/// π where negative, else 0 (NaN stays NaN).
pub fn angle(z: &Tensor) -> Result<Tensor> {
    let out = match z.dtype() {
        DType::Complex64 => map::<Complex32, f32>(z, |x| x.im.atan2(x.re))?,
        DType::Complex128 => map::<Complex64, f64>(z, |x| x.im.atan2(x.re))?,
        DType::Float64 => map::<f64, f64>(z, real_angle)?,
        d => {
            let x = if d == DType::Float32 {
                z.clone()
            } else {
                try_cast(z, DType::Float32)?
            };
            map::<f32, f32>(&x, |v| real_angle(v as f64) as f32)?
        }
    };
    record(
        "AngleBackward0",
        &[z],
        &out,
        || SavedTensor::input(z),
        |ctx, sz, g| {
            let z = sz.unpack(ctx)?;
            if !z.dtype().is_complex() {
                return Ok(grads![Some(zeros_like(&z)?)]);
            }
            // conj(∂θ/∂z) g + (∂θ/∂conj z) g = i g z / |z|², 0 at z = 0.
            let a = abs(&z)?;
            let d = div(&mul(&z, &imaginary_unit())?, &mul(&a, &a)?)?;
            let v = mul(g, &d)?;
            let at_zero = eq(&a, &Tensor::wrapped_number(Scalar::Int(0)))?;
            Ok(grads![Some(where_(&at_zero, &zero_of(&v), &v)?)])
        },
    );
    Ok(out)
}

fn real_angle(v: f64) -> f64 {
    if v.is_nan() {
        v
    } else if v < 0.0 {
        std::f64::consts::PI
    } else {
        0.0
    }
}

fn imaginary_unit() -> Tensor {
    Tensor::wrapped_number(Scalar::Complex(Complex64::new(0.0, 1.0)))
}

/// Both parts of `complex`/`polar` must be float or double, of one dtype.
fn check_parts(a: &Tensor, b: &Tensor) -> Result<DType> {
    if !a.dtype().is_floating_point() || !b.dtype().is_floating_point() {
        bail!(
            Runtime,
            "Expected both inputs to be Half, Float or Double tensors but got {} and {}",
            DType::scalar_type_name(a.dtype()),
            DType::scalar_type_name(b.dtype())
        );
    }
    if a.dtype() != b.dtype() {
        bail!(
            Runtime,
            "Expected object of scalar type {} but got scalar type {} for second argument",
            DType::scalar_type_name(a.dtype()),
            DType::scalar_type_name(b.dtype())
        );
    }
    Ok(a.dtype())
}

/// `complex(real, imag)`: `real + i imag`, broadcast.
pub fn complex(re: &Tensor, im: &Tensor) -> Result<Tensor> {
    let out = match check_parts(re, im)? {
        DType::Float32 => zip_map::<f32, f32, Complex32>(re, im, Complex32::new)?,
        _ => zip_map::<f64, f64, Complex64>(re, im, Complex64::new)?,
    };
    record(
        "ComplexBackward0",
        &[re, im],
        &out,
        || (),
        // ℝ² → ℂ: the gradients are Re(g) and Im(g), as fresh tensors.
        |_, _, g| Ok(grads![Some(clone(&real(g)?)?), Some(clone(&imag(g)?)?)]),
    );
    Ok(out)
}

/// `polar(abs, angle)`: `abs * (cos(angle) + i sin(angle))`, broadcast.
pub fn polar(r: &Tensor, theta: &Tensor) -> Result<Tensor> {
    let out = match check_parts(r, theta)? {
        DType::Float32 => zip_map::<f32, f32, Complex32>(r, theta, Complex32::from_polar)?,
        _ => zip_map::<f64, f64, Complex64>(r, theta, Complex64::from_polar)?,
    };
    record(
        "PolarBackward0",
        &[r, theta],
        &out,
        || (SavedTensor::input(r), SavedTensor::input(theta)),
        |ctx, (sr, st), g| {
            let (r, theta) = (sr.unpack(ctx)?, st.unpack(ctx)?);
            // With e = exp(i θ): ∂out/∂r = e and ∂out/∂θ = i r e; a real
            // input's gradient is Re(conj(g) ∂out/∂x).
            let e = complex(&cos(&theta)?, &sin(&theta)?)?;
            let gc = conj(g)?;
            let gr = real(&mul(&gc, &e)?)?;
            let d_theta = mul(&mul(&e, &r)?, &imaginary_unit())?;
            let gt = real(&mul(&gc, &d_theta)?)?;
            // `gr`, `gt` view products no one else holds: no copy needed.
            Ok(grads![Some(gr), Some(gt)])
        },
    );
    Ok(out)
}

/// The gradient of `sgn` for complex `z` with output `s = z / |z|`:
/// `(g - s² conj(g)) / (2|z|)`, 0 at `z = 0`.
pub(crate) fn sgn_backward(z: &Tensor, s: &Tensor, g: &Tensor) -> Result<Tensor> {
    let a = abs(z)?;
    let num = sub(g, &mul(&mul(s, s)?, &conj(g)?)?)?;
    let v = div(&num, &mul(&a, &Tensor::wrapped_number(Scalar::Int(2)))?)?;
    let at_zero = eq(&a, &Tensor::wrapped_number(Scalar::Int(0)))?;
    where_(&at_zero, &zero_of(&v), &v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn z() -> Tensor {
        Tensor::from_vec(
            vec![
                Complex64::new(1.0, 2.0),
                Complex64::new(3.0, -4.0),
                Complex64::new(-5.0, 0.5),
                Complex64::new(0.0, 0.0),
            ],
            &[2, 2],
        )
        .unwrap()
    }

    #[test]
    fn parts_are_views_of_the_same_memory() {
        let z = z();
        let re = real(&z).unwrap();
        let im = imag(&z).unwrap();
        assert_eq!(re.dtype(), DType::Float64);
        assert_eq!(re.strides(), &[4, 2]);
        assert_eq!(im.storage_offset(), 1);
        assert_eq!(re.to_vec::<f64>(), vec![1.0, 3.0, -5.0, 0.0]);
        assert_eq!(im.to_vec::<f64>(), vec![2.0, -4.0, 0.5, 0.0]);
        assert!(im.storage().same_buffer(z.storage()));
        super::super::inplace::fill_(&im, Scalar::Float(7.0)).unwrap();
        assert_eq!(z.to_vec::<Complex64>()[1], Complex64::new(3.0, 7.0));
        assert_eq!(z.version(), im.version());
    }

    #[test]
    fn view_as_real_and_back_round_trip() {
        let z = z();
        let r = view_as_real(&z).unwrap();
        assert_eq!(r.shape(), &[2, 2, 2]);
        assert_eq!(r.strides(), &[4, 2, 1]);
        let back = view_as_complex(&r).unwrap();
        assert_eq!(back.dtype(), DType::Complex128);
        assert_eq!(back.to_vec::<Complex64>(), z.to_vec::<Complex64>());
        assert_eq!(back.data_ptr(), z.data_ptr());
    }

    #[test]
    fn view_as_complex_checks_the_layout() {
        let x = Tensor::zeros(&[3, 4], DType::Float32);
        let err = |t: &Tensor| view_as_complex(t).unwrap_err().to_string();
        assert!(err(&x).contains("last dimension of size 2"));
        let odd = super::super::shape::narrow(&x, 1, 1, 2).unwrap();
        assert!(err(&odd).contains("storage_offset divisible by 2"));
        let ints = Tensor::zeros(&[2], DType::Int64);
        assert!(err(&ints).contains("scalar type: Long"));
    }

    #[test]
    fn angle_polar_and_complex_forward() {
        let a = angle(&z()).unwrap().to_vec::<f64>();
        assert!((a[0] - 2f64.atan2(1.0)).abs() < 1e-15);
        assert_eq!(a[3], 0.0);
        let r = Tensor::from_vec(vec![2.0f32, 1.0], &[2]).unwrap();
        let t = Tensor::from_vec(vec![0.0f32, std::f32::consts::FRAC_PI_2], &[2]).unwrap();
        let p = polar(&r, &t).unwrap().to_vec::<Complex32>();
        assert!((p[0] - Complex32::new(2.0, 0.0)).norm() < 1e-6);
        assert!((p[1] - Complex32::new(0.0, 1.0)).norm() < 1e-6);
        let c = complex(&r, &t).unwrap();
        assert_eq!(c.dtype(), DType::Complex64);
        assert_eq!(c.to_vec::<Complex32>()[1].im, std::f32::consts::FRAC_PI_2);
        let ints = Tensor::zeros(&[2], DType::Int64);
        assert!(complex(&ints, &ints).is_err());
    }
}
