//! The everyday elementwise API: more unary and binary math, bitwise ops,
//! comparisons with tolerance, and the activations `nn.functional` uses.

use crate::convert::{operand, scalar, tensor_arg, try_operand};
use crate::errors::IntoPyResult;
use crate::tensor::{maybe_detach, PyTensor};
use ferrograd_core::ops::{airy, bessel, binary, inplace, pointwise, polynomial, special, unary};
use ferrograd_core::{Result, Scalar, Tensor};
use pyo3::prelude::*;

type Slf<'py> = Bound<'py, PyTensor>;

fn un(py: Python<'_>, a: &Tensor, op: fn(&Tensor) -> Result<Tensor>) -> PyResult<PyTensor> {
    Ok(maybe_detach(py, a.numel(), || op(a)).py()?.into())
}

fn bin(
    py: Python<'_>,
    a: &Tensor,
    other: &Bound<'_, PyAny>,
    op: fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> PyResult<PyTensor> {
    let b = operand(other)?;
    Ok(maybe_detach(py, a.numel().max(b.numel()), || op(a, &b))
        .py()?
        .into())
}

/// A binary dunder: `NotImplemented` for operands that are not numbers or tensors.
fn dunder(
    py: Python<'_>,
    a: &Tensor,
    other: &Bound<'_, PyAny>,
    op: fn(&Tensor, &Tensor) -> Result<Tensor>,
    reflected: bool,
) -> PyResult<Py<PyAny>> {
    let Some(b) = try_operand(other, a.dtype()) else {
        return Ok(py.NotImplemented());
    };
    let out = if reflected { op(&b, a) } else { op(a, &b) }.py()?;
    Ok(Bound::new(py, PyTensor::from(out))?.into_any().unbind())
}

macro_rules! unary_methods {
    ($($name:ident $inplace:ident => $op:path;)*) => {
        #[pymethods]
        impl PyTensor {$(
            fn $name(&self, py: Python<'_>) -> PyResult<PyTensor> {
                un(py, &self.tensor(), $op)
            }
            fn $inplace<'py>(slf: &Slf<'py>) -> PyResult<Slf<'py>> {
                inplace::unary_(&slf.get().tensor(), $op).py()?;
                Ok(slf.clone())
            }
        )*}
    };
}

unary_methods! {
    exp2 exp2_ => unary::exp2;
    expm1 expm1_ => unary::expm1;
    log2 log2_ => unary::log2;
    log10 log10_ => unary::log10;
    log1p log1p_ => unary::log1p;
    floor floor_ => unary::floor;
    ceil ceil_ => unary::ceil;
    trunc trunc_ => unary::trunc;
    fix fix_ => unary::trunc;
    frac frac_ => unary::frac;
    reciprocal reciprocal_ => unary::reciprocal;
    rsqrt rsqrt_ => unary::rsqrt;
    square square_ => unary::square;
    sinh sinh_ => unary::sinh;
    cosh cosh_ => unary::cosh;
    asin asin_ => unary::asin;
    arcsin arcsin_ => unary::asin;
    acos acos_ => unary::acos;
    arccos arccos_ => unary::acos;
    atan atan_ => unary::atan;
    arctan arctan_ => unary::atan;
    sign sign_ => unary::sign;
    erf erf_ => unary::erf;
    erfc erfc_ => unary::erfc;
    asinh asinh_ => unary::asinh;
    arcsinh arcsinh_ => unary::asinh;
    acosh acosh_ => unary::acosh;
    arccosh arccosh_ => unary::acosh;
    atanh atanh_ => unary::atanh;
    arctanh arctanh_ => unary::atanh;
    bitwise_not bitwise_not_ => binary::bitwise_not;
    tan tan_ => unary::tan;
    lgamma lgamma_ => special::lgamma;
    digamma digamma_ => special::digamma;
    erfinv erfinv_ => special::erfinv;
    i0 i0_ => bessel::i0;
}

macro_rules! binary_methods {
    ($($name:ident $inplace:ident => $op:path;)*) => {
        #[pymethods]
        impl PyTensor {$(
            fn $name(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                bin(py, &self.tensor(), other, $op)
            }
            fn $inplace<'py>(slf: &Slf<'py>, other: &Bound<'_, PyAny>) -> PyResult<Slf<'py>> {
                let b = operand(other)?;
                inplace::binary_(&slf.get().tensor(), &b, $op).py()?;
                Ok(slf.clone())
            }
        )*}
    };
}

binary_methods! {
    atan2 atan2_ => binary::atan2;
    arctan2 arctan2_ => binary::atan2;
    remainder remainder_ => binary::remainder;
    floor_divide floor_divide_ => binary::floor_divide;
    fmod fmod_ => binary::fmod;
    hypot hypot_ => binary::hypot;
    bitwise_and bitwise_and_ => binary::bitwise_and;
    bitwise_or bitwise_or_ => binary::bitwise_or;
    bitwise_xor bitwise_xor_ => binary::bitwise_xor;
    bitwise_left_shift bitwise_left_shift_ => binary::bitwise_left_shift;
    bitwise_right_shift bitwise_right_shift_ => binary::bitwise_right_shift;
    copysign copysign_ => pointwise::copysign;
    nextafter nextafter_ => pointwise::nextafter;
    heaviside heaviside_ => pointwise::heaviside;
    igamma igamma_ => special::igamma;
    igammac igammac_ => special::igammac;
}

/// Augmented assignments (`a &= b`, `a <<= b`, ...) write into `a`.
#[pymethods]
impl PyTensor {
    fn __iand__(slf: &Slf<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::bitwise_and_(slf, other).map(drop)
    }
    fn __ior__(slf: &Slf<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::bitwise_or_(slf, other).map(drop)
    }
    fn __ixor__(slf: &Slf<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::bitwise_xor_(slf, other).map(drop)
    }
    fn __ilshift__(slf: &Slf<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::bitwise_left_shift_(slf, other).map(drop)
    }
    fn __irshift__(slf: &Slf<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::bitwise_right_shift_(slf, other).map(drop)
    }
}

/// Binary functions PyTorch offers without an in-place form.
macro_rules! out_of_place_binary_methods {
    ($($name:ident => $op:path;)*) => {
        #[pymethods]
        impl PyTensor {$(
            fn $name(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                bin(py, &self.tensor(), other, $op)
            }
        )*}
    };
}

out_of_place_binary_methods! {
    logaddexp => pointwise::logaddexp;
    logaddexp2 => pointwise::logaddexp2;
    fmax => pointwise::fmax;
    fmin => pointwise::fmin;
}

#[pymethods]
impl PyTensor {
    fn polygamma(&self, py: Python<'_>, n: i64) -> PyResult<PyTensor> {
        Ok(maybe_detach(py, self.tensor().numel(), || {
            special::polygamma(n, &self.tensor())
        })
        .py()?
        .into())
    }
    fn polygamma_<'py>(slf: &Slf<'py>, n: i64) -> PyResult<Slf<'py>> {
        inplace::unary_(&slf.get().tensor(), |s| special::polygamma(n, s)).py()?;
        Ok(slf.clone())
    }
    fn signbit(&self, py: Python<'_>) -> PyResult<PyTensor> {
        un(py, &self.tensor(), unary::signbit)
    }
    fn __mod__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::remainder, false)
    }
    fn __rmod__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::remainder, true)
    }
    fn __floordiv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::floor_divide, false)
    }
    fn __rfloordiv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        dunder(py, &self.tensor(), other, binary::floor_divide, true)
    }
    fn __imod__(slf: &Slf<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        PyTensor::remainder_(slf, other).map(drop)
    }
    fn __ifloordiv__(slf: &Slf<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        PyTensor::floor_divide_(slf, other).map(drop)
    }
    fn __ipow__(
        slf: &Slf<'_>,
        other: &Bound<'_, PyAny>,
        _modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let t = &slf.get().tensor();
        match other.downcast::<PyTensor>() {
            Ok(b) => inplace::binary_(t, &b.get().tensor(), binary::pow).py(),
            Err(_) => {
                let e = scalar(other)?;
                inplace::unary_(t, |s| binary::pow_scalar(s, e)).py()
            }
        }
    }

    #[pyo3(signature = (end, weight))]
    fn lerp(&self, end: &Bound<'_, PyAny>, weight: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let (e, w) = (tensor_arg(end, "lerp(): argument 'end'")?, operand(weight)?);
        Ok(binary::lerp(&self.tensor(), &e, &w).py()?.into())
    }
    #[pyo3(signature = (end, weight))]
    fn lerp_<'py>(
        slf: &Slf<'py>,
        end: &Bound<'_, PyAny>,
        weight: &Bound<'_, PyAny>,
    ) -> PyResult<Slf<'py>> {
        let (e, w) = (
            tensor_arg(end, "lerp_(): argument 'end'")?,
            operand(weight)?,
        );
        inplace::unary_(&slf.get().tensor(), |s| binary::lerp(s, &e, &w)).py()?;
        Ok(slf.clone())
    }
    #[pyo3(signature = (tensor1, tensor2, *, value=None))]
    fn addcmul(
        &self,
        tensor1: PyRef<'_, PyTensor>,
        tensor2: PyRef<'_, PyTensor>,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let v = value.map(scalar).transpose()?.unwrap_or(Scalar::Int(1));
        Ok(
            binary::addcmul(&self.tensor(), &tensor1.tensor(), &tensor2.tensor(), v)
                .py()?
                .into(),
        )
    }
    #[pyo3(signature = (tensor1, tensor2, *, value=None))]
    fn addcmul_<'py>(
        slf: &Slf<'py>,
        tensor1: PyRef<'_, PyTensor>,
        tensor2: PyRef<'_, PyTensor>,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Slf<'py>> {
        let v = value.map(scalar).transpose()?.unwrap_or(Scalar::Int(1));
        let (b, c) = (tensor1.tensor(), tensor2.tensor());
        inplace::unary_(&slf.get().tensor(), |s| binary::addcmul(s, &b, &c, v)).py()?;
        Ok(slf.clone())
    }
    #[pyo3(signature = (tensor1, tensor2, *, value=None))]
    fn addcdiv(
        &self,
        tensor1: PyRef<'_, PyTensor>,
        tensor2: PyRef<'_, PyTensor>,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let v = value.map(scalar).transpose()?.unwrap_or(Scalar::Int(1));
        Ok(
            binary::addcdiv(&self.tensor(), &tensor1.tensor(), &tensor2.tensor(), v)
                .py()?
                .into(),
        )
    }
    #[pyo3(signature = (tensor1, tensor2, *, value=None))]
    fn addcdiv_<'py>(
        slf: &Slf<'py>,
        tensor1: PyRef<'_, PyTensor>,
        tensor2: PyRef<'_, PyTensor>,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Slf<'py>> {
        let v = value.map(scalar).transpose()?.unwrap_or(Scalar::Int(1));
        let (b, c) = (tensor1.tensor(), tensor2.tensor());
        inplace::unary_(&slf.get().tensor(), |s| binary::addcdiv(s, &b, &c, v)).py()?;
        Ok(slf.clone())
    }
    #[pyo3(signature = (other, rtol=1e-5, atol=1e-8, equal_nan=false))]
    fn isclose(
        &self,
        other: PyRef<'_, PyTensor>,
        rtol: f64,
        atol: f64,
        equal_nan: bool,
    ) -> PyResult<PyTensor> {
        Ok(
            binary::isclose(&self.tensor(), &other.tensor(), rtol, atol, equal_nan)
                .py()?
                .into(),
        )
    }
    #[pyo3(signature = (other, rtol=1e-5, atol=1e-8, equal_nan=false))]
    fn allclose(
        &self,
        other: PyRef<'_, PyTensor>,
        rtol: f64,
        atol: f64,
        equal_nan: bool,
    ) -> PyResult<bool> {
        let close = binary::isclose(&self.tensor(), &other.tensor(), rtol, atol, equal_nan).py()?;
        Ok(close.to_vec::<bool>().iter().all(|&c| c))
    }
    fn equal(&self, other: PyRef<'_, PyTensor>) -> PyResult<bool> {
        binary::equal(&self.tensor(), &other.tensor()).py()
    }
    #[pyo3(signature = (nan=0.0, posinf=None, neginf=None))]
    fn nan_to_num(&self, nan: f64, posinf: Option<f64>, neginf: Option<f64>) -> PyResult<PyTensor> {
        Ok(unary::nan_to_num(&self.tensor(), nan, posinf, neginf)
            .py()?
            .into())
    }
    #[pyo3(signature = (nan=0.0, posinf=None, neginf=None))]
    fn nan_to_num_<'py>(
        slf: &Slf<'py>,
        nan: f64,
        posinf: Option<f64>,
        neginf: Option<f64>,
    ) -> PyResult<Slf<'py>> {
        inplace::unary_(&slf.get().tensor(), |s| {
            unary::nan_to_num(s, nan, posinf, neginf)
        })
        .py()?;
        Ok(slf.clone())
    }
}

/// `torch.special` functions without a tensor method: `ferrograd._C.special_*`
/// (one or two operands; the two-operand ones take tensors or numbers).
macro_rules! special_functions {
    (unary { $($uname:ident => $uop:path;)* } binary { $($bname:ident => $bop:path;)* }) => {
        $(
            #[pyfunction]
            fn $uname(py: Python<'_>, input: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
                un(py, &input.tensor(), $uop)
            }
        )*
        $(
            #[pyfunction]
            fn $bname(
                py: Python<'_>,
                input: &Bound<'_, PyAny>,
                other: &Bound<'_, PyAny>,
            ) -> PyResult<PyTensor> {
                let (a, b) = (operand(input)?, operand(other)?);
                Ok(maybe_detach(py, a.numel().max(b.numel()), || $bop(&a, &b))
                    .py()?
                    .into())
            }
        )*
        fn register_special(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($uname, m)?)?;)*
            $(m.add_function(wrap_pyfunction!($bname, m)?)?;)*
            Ok(())
        }
    };
}

special_functions! {
    unary {
        special_i0e => bessel::i0e;
        special_i1 => bessel::i1;
        special_i1e => bessel::i1e;
        special_erfcx => special::erfcx;
        special_modified_bessel_i0 => bessel::modified_bessel_i0;
        special_modified_bessel_i1 => bessel::modified_bessel_i1;
        special_spherical_bessel_j0 => bessel::spherical_bessel_j0;
        special_bessel_j0 => bessel::bessel_j0;
        special_bessel_j1 => bessel::bessel_j1;
        special_bessel_y0 => bessel::bessel_y0;
        special_bessel_y1 => bessel::bessel_y1;
        special_modified_bessel_k0 => bessel::modified_bessel_k0;
        special_modified_bessel_k1 => bessel::modified_bessel_k1;
        special_scaled_modified_bessel_k0 => bessel::scaled_modified_bessel_k0;
        special_scaled_modified_bessel_k1 => bessel::scaled_modified_bessel_k1;
        special_airy_ai => airy::airy_ai;
    }
    binary {
        special_zeta => special::zeta;
        special_chebyshev_polynomial_t => polynomial::chebyshev_polynomial_t;
        special_chebyshev_polynomial_u => polynomial::chebyshev_polynomial_u;
        special_chebyshev_polynomial_v => polynomial::chebyshev_polynomial_v;
        special_chebyshev_polynomial_w => polynomial::chebyshev_polynomial_w;
        special_shifted_chebyshev_polynomial_t => polynomial::shifted_chebyshev_polynomial_t;
        special_shifted_chebyshev_polynomial_u => polynomial::shifted_chebyshev_polynomial_u;
        special_shifted_chebyshev_polynomial_v => polynomial::shifted_chebyshev_polynomial_v;
        special_shifted_chebyshev_polynomial_w => polynomial::shifted_chebyshev_polynomial_w;
        special_hermite_polynomial_h => polynomial::hermite_polynomial_h;
        special_hermite_polynomial_he => polynomial::hermite_polynomial_he;
        special_laguerre_polynomial_l => polynomial::laguerre_polynomial_l;
        special_legendre_polynomial_p => polynomial::legendre_polynomial_p;
    }
}

/// `ferrograd._C` versions of `torch.nn.functional` activations.
#[pyfunction]
#[pyo3(signature = (input, beta=1.0, threshold=20.0))]
fn softplus(input: PyRef<'_, PyTensor>, beta: f64, threshold: f64) -> PyResult<PyTensor> {
    Ok(unary::softplus(&input.tensor(), beta, threshold)
        .py()?
        .into())
}

#[pyfunction]
#[pyo3(signature = (input, approximate="none"))]
fn gelu(input: PyRef<'_, PyTensor>, approximate: &str) -> PyResult<PyTensor> {
    let tanh = match approximate {
        "none" => false,
        "tanh" => true,
        other => {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
                "approximate argument must be either none or tanh. got {other}"
            )))
        }
    };
    Ok(unary::gelu(&input.tensor(), tanh).py()?.into())
}

#[pyfunction]
fn silu(input: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
    Ok(unary::silu(&input.tensor()).py()?.into())
}

#[pyfunction]
#[pyo3(signature = (input, negative_slope=0.01))]
fn leaky_relu(input: PyRef<'_, PyTensor>, negative_slope: f64) -> PyResult<PyTensor> {
    Ok(unary::leaky_relu(&input.tensor(), negative_slope)
        .py()?
        .into())
}

#[pyfunction]
#[pyo3(signature = (input, min_val=-1.0, max_val=1.0))]
fn hardtanh(input: PyRef<'_, PyTensor>, min_val: f64, max_val: f64) -> PyResult<PyTensor> {
    let (min, max) = (Scalar::Float(min_val), Scalar::Float(max_val));
    Ok(unary::hardtanh(&input.tensor(), min, max).py()?.into())
}

#[pyfunction]
#[pyo3(signature = (input, alpha=1.0))]
fn elu(input: PyRef<'_, PyTensor>, alpha: f64) -> PyResult<PyTensor> {
    Ok(unary::elu(&input.tensor(), alpha).py()?.into())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(softplus, m)?)?;
    m.add_function(wrap_pyfunction!(gelu, m)?)?;
    m.add_function(wrap_pyfunction!(silu, m)?)?;
    m.add_function(wrap_pyfunction!(leaky_relu, m)?)?;
    m.add_function(wrap_pyfunction!(elu, m)?)?;
    m.add_function(wrap_pyfunction!(hardtanh, m)?)?;
    register_special(m)
}
