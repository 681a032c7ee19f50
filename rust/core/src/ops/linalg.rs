//! Matrix decompositions and the solvers built on them, over batches of
//! matrices `[..., m, n]`: `inv`, `det`, `slogdet`, `logdet`, `solve`,
//! `cholesky`, `solve_triangular`, `eigh`, `eig`. Kernels run faer per matrix (in
//! parallel over the batch); each backward rule is written with
//! differentiable ops, so second derivatives follow. The LU-based ops
//! (`inv`, `det`, `slogdet`, `solve`) take complex matrices too; their rules
//! use conjugate transposes, which are plain transposes for real ones.

use super::binary::{add, eq, mul, sub};
use super::complex::{complex, imag, real};
use super::creation::eye;
use super::index::{cat, tril, triu};
use super::matmul::matmul;
use super::num::{Arith, Float, RealFloat};
use super::reduce::sum_to;
use super::shape::{diagonal, expand_to, narrow, squeeze_dims, transpose, unsqueeze};
use super::unary::{conj, neg, where_, zeros_like};
use crate::autograd::{record, record_multi, Grads, SavedTensor};
use crate::tensor::layout::broadcast_shapes;
use crate::tensor::storage::try_buffer;
use crate::tensor::{DType, Element, Scalar, Tensor};
use crate::{bail, grads, Result};
use faer::linalg::solvers::{DenseSolveCore, LltError, Solve};
use faer::linalg::triangular_solve;
use faer::{Mat, MatRef, Par, Side};
use rayon::prelude::*;

/// The element types the decompositions run on.
trait LinalgFloat: RealFloat + faer::traits::RealField {}
impl LinalgFloat for f32 {}
impl LinalgFloat for f64 {}

/// The element types the LU-based kernels run on: real and complex.
trait LinalgField: Float<Real: Element> + Element + PartialEq + faer::traits::ComplexField {}
impl LinalgField for f32 {}
impl LinalgField for f64 {}
impl LinalgField for num_complex::Complex32 {}
impl LinalgField for num_complex::Complex64 {}

/// As [`with_linalg_float`], with complex64 and complex128 too.
macro_rules! with_linalg_field {
    ($dtype:expr, $kernel:expr, $T:ident => $body:expr) => {
        match $dtype {
            DType::Complex64 => {
                type $T = num_complex::Complex32;
                $body
            }
            DType::Complex128 => {
                type $T = num_complex::Complex64;
                $body
            }
            other => with_linalg_float!(other, $kernel, $T => $body),
        }
    };
}

/// Runs `$body` with `$T` bound to float32 or float64; other float dtypes
/// get PyTorch's "not implemented" error for the op's kernel.
macro_rules! with_linalg_float {
    ($dtype:expr, $kernel:expr, $T:ident => $body:expr) => {
        match $dtype {
            DType::Float32 => {
                type $T = f32;
                $body
            }
            DType::Float64 => {
                type $T = f64;
                $body
            }
            other => bail!(
                NotImplemented,
                "\"{}\" not implemented for '{}'",
                $kernel,
                DType::scalar_type_name(other)
            ),
        }
    };
}

/// PyTorch's checks of a matrix operand: at least two dimensions, a
/// floating dtype. Returns the matrix dimensions.
fn check_matrix(a: &Tensor, op: &str, name: &str) -> Result<(usize, usize)> {
    if a.ndim() < 2 {
        bail!(
            Runtime,
            "{op}: The input tensor {name} must have at least 2 dimensions."
        );
    }
    if !matches!(
        a.dtype(),
        DType::Float32 | DType::Float64 | DType::Complex64 | DType::Complex128
    ) {
        bail!(
            Runtime,
            "{op}: Expected a floating point or complex tensor as input. Got {}",
            DType::scalar_type_name(a.dtype())
        );
    }
    let s = a.shape();
    Ok((s[s.len() - 2], s[s.len() - 1]))
}

/// As [`check_matrix`], for square matrices: their order.
fn check_square(a: &Tensor, op: &str) -> Result<usize> {
    let (m, n) = check_matrix(a, op, "A")?;
    if m != n {
        bail!(
            Runtime,
            "{op}: A must be batches of square matrices, but they are {m} by {n} matrices"
        );
    }
    Ok(n)
}

fn check_same_dtype(a: &Tensor, b: &Tensor, op: &str) -> Result<()> {
    if a.dtype() != b.dtype() {
        bail!(
            Runtime,
            "{op}: Expected A and B to have the same dtype, but found A of type {} and B of type {} instead",
            DType::scalar_type_name(a.dtype()),
            DType::scalar_type_name(b.dtype())
        );
    }
    Ok(())
}

fn batch_shape(t: &Tensor) -> &[usize] {
    &t.shape()[..t.ndim() - 2]
}

fn with_matrix(batch: &[usize], rows: usize, cols: usize) -> Vec<usize> {
    let mut shape = batch.to_vec();
    shape.extend([rows, cols]);
    shape
}

/// The last two dimensions swapped.
fn mt(t: &Tensor) -> Result<Tensor> {
    transpose(t, -2, -1)
}

/// The conjugate transpose (the transpose of a real matrix).
fn mh(t: &Tensor) -> Result<Tensor> {
    conj(&mt(t)?)
}

/// The matrices of a `[..., rows, cols]` tensor, copied out row-major.
struct Matrices<T> {
    data: Vec<T>,
    rows: usize,
    cols: usize,
    count: usize,
}

impl<T: Element> Matrices<T> {
    fn of(t: &Tensor) -> Matrices<T> {
        let s = t.shape();
        let (rows, cols) = (s[s.len() - 2], s[s.len() - 1]);
        Matrices {
            data: t.to_vec::<T>(),
            rows,
            cols,
            count: batch_shape(t).iter().product(),
        }
    }

    fn get(&self, b: usize) -> MatRef<'_, T> {
        let size = self.rows * self.cols;
        MatRef::from_row_major_slice(&self.data[b * size..(b + 1) * size], self.rows, self.cols)
    }
}

/// `f` of each batch element, in parallel; the first failure (in batch
/// order) as a `LinAlgError`, prefixed with its batch element when the
/// input is batched, as PyTorch's messages are.
fn per_matrix<R: Send>(
    count: usize,
    batched: bool,
    op: &str,
    f: impl Fn(usize) -> std::result::Result<R, String> + Sync + Send,
) -> Result<Vec<R>> {
    let results: Vec<_> = (0..count).into_par_iter().map(f).collect();
    results
        .into_iter()
        .enumerate()
        .map(|(b, r)| {
            r.map_err(|why| {
                let prefix = match batched {
                    true => format!("(Batch element {b}): "),
                    false => String::new(),
                };
                crate::Error::LinAlg(format!("{op}: {prefix}{why}"))
            })
        })
        .collect()
}

/// The matrices stacked into one tensor of `shape`, row-major.
fn stack_matrices<T: Element>(mats: &[Mat<T>], shape: &[usize]) -> Result<Tensor> {
    let mut data = try_buffer(shape.iter().product())?;
    for m in mats {
        for i in 0..m.nrows() {
            data.extend((0..m.ncols()).map(|j| m[(i, j)]));
        }
    }
    Tensor::from_vec(data, shape)
}

/// The first exactly zero pivot of an LU factor `u`, 1-based (LAPACK's
/// convention, which PyTorch's messages use).
fn zero_pivot<T: LinalgField>(u: MatRef<'_, T>) -> Option<usize> {
    (0..u.nrows())
        .find(|&k| u[(k, k)] == <T as Arith>::zero())
        .map(|k| k + 1)
}

/// Whether a permutation (given as its forward array) is odd.
fn is_odd(perm: &[usize]) -> bool {
    let mut seen = vec![false; perm.len()];
    let mut transpositions = 0;
    for start in 0..perm.len() {
        let mut k = start;
        let mut length = 0usize;
        while !seen[k] {
            seen[k] = true;
            k = perm[k];
            length += 1;
        }
        transpositions += length.saturating_sub(1);
    }
    transpositions % 2 == 1
}

/// `(sign, log|det|)` of one matrix from its LU factorization: the sign is
/// the product of the pivots' directions (±1 for a real matrix, on the unit
/// circle for a complex one).
fn sign_logabsdet<T: LinalgField>(m: MatRef<'_, T>) -> (T, <T as Float>::Real) {
    let lu = m.partial_piv_lu();
    let u = lu.U();
    let mut sign = match is_odd(lu.P().arrays().0) {
        true => -<T as Arith>::one(),
        false => <T as Arith>::one(),
    };
    let mut log = <<T as Float>::Real as Arith>::zero();
    for k in 0..u.nrows() {
        let d = u[(k, k)];
        let magnitude = d.abs_val();
        if magnitude == <<T as Float>::Real as Arith>::zero() {
            return (
                <T as Arith>::zero(),
                <<T as Float>::Real as Float>::from_f64(f64::NEG_INFINITY),
            );
        }
        sign = Arith::mul(sign, Arith::div(d, T::from_real(magnitude)));
        log = Arith::add(log, <<T as Float>::Real as Float>::ln(magnitude));
    }
    (sign, log)
}

/// `A^{-1}` of each matrix; errors on a zero pivot as LAPACK's `getrf`.
fn inverse_kernel<T: LinalgField>(a: &Tensor) -> Result<Tensor> {
    let m = Matrices::<T>::of(a);
    let inverses = per_matrix(m.count, a.ndim() > 2, "linalg.inv", |b| {
        let lu = m.get(b).partial_piv_lu();
        match zero_pivot(lu.U()) {
            Some(k) => Err(format!("The diagonal element {k} is zero, the inversion could not be completed because the input matrix is singular.")),
            None => Ok(lu.inverse()),
        }
    })?;
    stack_matrices(&inverses, a.shape())
}

/// `linalg.inv(A)` (`LinalgInvExBackward0`): gA = -A^{-H} G A^{-H}.
pub fn inv(a: &Tensor) -> Result<Tensor> {
    check_square(a, "linalg.inv")?;
    let out = with_linalg_field!(a.dtype(), "linalg_inv", T => inverse_kernel::<T>(a)?);
    record(
        "LinalgInvExBackward0",
        &[a],
        &out,
        || SavedTensor::output(&out, 0),
        |ctx, inverse, g| {
            let inverse_h = mh(&inverse.unpack(ctx)?)?;
            Ok(grads![Some(neg(&matmul(
                &matmul(&inverse_h, g)?,
                &inverse_h
            )?)?)])
        },
    );
    Ok(out)
}

/// `(sign, logabsdet, det)` of each matrix, without history.
fn determinants(a: &Tensor) -> Result<(Tensor, Tensor, Tensor)> {
    let batch = batch_shape(a).to_vec();
    with_linalg_field!(a.dtype(), "linalg_det", T => {
        let m = Matrices::<T>::of(a);
        let parts: Vec<(T, <T as Float>::Real)> = (0..m.count)
            .into_par_iter()
            .map(|b| sign_logabsdet(m.get(b)))
            .collect();
        let sign: Vec<T> = parts.iter().map(|p| p.0).collect();
        let log: Vec<_> = parts.iter().map(|p| p.1).collect();
        let det: Vec<T> = parts
            .iter()
            .map(|&(s, l)| Arith::mul(s, T::from_real(Float::exp(l))))
            .collect();
        Ok((
            Tensor::from_vec(sign, &batch)?,
            Tensor::from_vec(log, &batch)?,
            Tensor::from_vec(det, &batch)?,
        ))
    })
}

/// `x[..., None, None] * A^{-H}`: the gradient of a function of `A`'s
/// determinant whose derivative is `x A^{-H}` (det: `x = g conj(det)`;
/// log|det|: `x = g`).
fn scaled_inverse_h(x: &Tensor, a: &Tensor) -> Result<Tensor> {
    let x = unsqueeze(&unsqueeze(x, -1)?, -1)?;
    mul(&x, &mh(&inv(a)?)?)
}

/// `linalg.det(A)` (`LinalgDetBackward0`): gA = g conj(det) A^{-H}.
pub fn det(a: &Tensor) -> Result<Tensor> {
    check_square(a, "linalg.det")?;
    let (_, _, out) = determinants(a)?;
    record(
        "LinalgDetBackward0",
        &[a],
        &out,
        || (SavedTensor::input(a), SavedTensor::output(&out, 0)),
        |ctx, (a, det), g| {
            let (a, det) = (a.unpack(ctx)?, det.unpack(ctx)?);
            Ok(grads![Some(scaled_inverse_h(&mul(g, &conj(&det)?)?, &a)?)])
        },
    );
    Ok(out)
}

/// `linalg.slogdet(A)` as `(sign, logabsdet)` (`LinalgSlogdetBackward0`):
/// with `dz = tr(A^{-1} dA)`, d logabsdet = Re(dz) and, for a complex
/// matrix, d sign = i sign Im(dz) (a real matrix's sign is locally
/// constant), so gA = (g_logabsdet - i Im(conj(g_sign) sign)) A^{-H}.
pub fn slogdet(a: &Tensor) -> Result<(Tensor, Tensor)> {
    slogdet_named(a, "linalg.slogdet")
}

fn slogdet_named(a: &Tensor, op: &str) -> Result<(Tensor, Tensor)> {
    check_square(a, op)?;
    let (sign, log, _) = determinants(a)?;
    record_multi(
        "LinalgSlogdetBackward0",
        &[a],
        &[&sign, &log],
        || (SavedTensor::input(a), SavedTensor::output(&sign, 0)),
        |ctx, (a, sign), grads| {
            let a = a.unpack(ctx)?;
            let from_sign = match (&grads[0], a.dtype().is_complex()) {
                (Some(g_sign), true) => {
                    let turn = imag(&mul(&conj(g_sign)?, &sign.unpack(ctx)?)?)?;
                    let zero = zeros_like(&turn)?;
                    Some(complex(&zero, &neg(&turn)?)?)
                }
                _ => None,
            };
            let x = match (&grads[1], from_sign) {
                (Some(g), Some(s)) => Some(add(g, &s)?),
                (Some(g), None) => Some(g.clone()),
                (None, s) => s,
            };
            let g = x.map(|x| scaled_inverse_h(&x, &a)).transpose()?;
            Ok(grads![g])
        },
    );
    Ok((sign, log))
}

/// `logdet(A)`: log|det A| where the determinant is positive, NaN where it
/// is negative (as PyTorch does, through `slogdet`); for a complex matrix,
/// the principal logarithm of its determinant.
pub fn logdet(a: &Tensor) -> Result<Tensor> {
    let (sign, log) = slogdet_named(a, "logdet")?;
    if a.dtype().is_complex() {
        return add(&super::unary::log(&sign)?, &log);
    }
    let negative = eq(&sign, &Tensor::scalar(Scalar::Int(-1), sign.dtype()))?;
    let nan = Tensor::scalar(Scalar::Float(f64::NAN), log.dtype());
    where_(&negative, &nan, &log)
}

/// How `solve`'s right-hand side is shaped: PyTorch treats `B` as a
/// (batch of) vector(s) when it is 1-d or has exactly `A`'s shape less the
/// last dimension.
fn is_vector_rhs(a: &Tensor, b: &Tensor) -> bool {
    b.ndim() == 1 || (b.ndim() + 1 == a.ndim() && b.shape() == &a.shape()[..a.ndim() - 1])
}

/// `A` and `B` (as matrices) expanded to their broadcast batch shape,
/// without history; the batch shape.
fn broadcast_batches(a: &Tensor, b: &Tensor) -> Result<(Tensor, Tensor, Vec<usize>)> {
    let batch = broadcast_shapes(batch_shape(a), batch_shape(b))?.to_vec();
    let expand = |t: &Tensor| {
        let (r, c) = (t.shape()[t.ndim() - 2], t.shape()[t.ndim() - 1]);
        expand_to(&t.detach(), &with_matrix(&batch, r, c))
    };
    Ok((expand(a)?, expand(b)?, batch))
}

/// `B`'s rows (left) or columns (right) must match `A`'s order.
fn check_rhs(op: &str, n: usize, b: &Tensor, left: bool) -> Result<()> {
    let (r, c) = (b.shape()[b.ndim() - 2], b.shape()[b.ndim() - 1]);
    match left {
        true if r != n => bail!(
            Runtime,
            "{op}: Incompatible shapes of A and B for the equation AX = B ({n}x{n} and {r}x{c})"
        ),
        false if c != n => bail!(
            Runtime,
            "{op}: Incompatible shapes of A and B for the equation XA = B ({n}x{n} and {r}x{c})"
        ),
        _ => Ok(()),
    }
}

/// `X` of `AX = B` (left) or `XA = B` (right) for each pair of matrices,
/// through an LU factorization of `A`.
fn solve_kernel<T: LinalgField>(a: &Tensor, b: &Tensor, left: bool) -> Result<Vec<Mat<T>>> {
    let (am, bm) = (Matrices::<T>::of(a), Matrices::<T>::of(b));
    per_matrix(am.count, a.ndim() > 2, "torch.linalg.solve", |k| {
        let lu = am.get(k).partial_piv_lu();
        if zero_pivot(lu.U()).is_some() {
            return Err("The solver failed because the input matrix is singular.".into());
        }
        Ok(match left {
            true => lu.solve(bm.get(k)),
            // XA = B is A^T X^T = B^T.
            false => lu
                .solve_transpose(bm.get(k).transpose())
                .transpose()
                .to_owned(),
        })
    })
}

/// The gradient of `A` in `AX = B` (left) or `XA = B`, given `B`'s:
/// `-gB X^H` or `-X^H gB`.
fn solved_matrix_grad(gb: &Tensor, x: &Tensor, left: bool) -> Result<Tensor> {
    neg(&match left {
        true => matmul(gb, &mh(x)?)?,
        false => matmul(&mh(x)?, gb)?,
    })
}

/// `linalg.solve(A, B, left=...)` (`LinalgSolveExBackward0`): `X` with
/// `AX = B` (or `XA = B`), broadcasting batches. gB = solve(A^H, G) and
/// gA = -gB X^H (left), gA = -X^H gB (right).
pub fn solve(a: &Tensor, b: &Tensor, left: bool) -> Result<Tensor> {
    const OP: &str = "linalg.solve";
    let n = check_square(a, OP)?;
    check_same_dtype(a, b, OP)?;
    let vector = is_vector_rhs(a, b);
    // A vector is a column (left) or a row (right).
    let vector_dim = if left { -1 } else { -2 };
    let b_matrix = match vector {
        true => unsqueeze(&b.detach(), vector_dim)?,
        false => b.detach(),
    };
    check_rhs(OP, n, &b_matrix, left)?;
    let (a_full, b_full, batch) = broadcast_batches(a, &b_matrix)?;
    let x_shape = with_matrix(
        &batch,
        b_matrix.shape()[b_matrix.ndim() - 2],
        b_matrix.shape()[b_matrix.ndim() - 1],
    );
    let mut out_shape = x_shape.clone();
    if vector {
        out_shape.remove((out_shape.len() as i64 + vector_dim) as usize);
    }
    let out = with_linalg_field!(a.dtype(), "linalg_solve", T => {
        stack_matrices(&solve_kernel::<T>(&a_full, &b_full, left)?, &out_shape)?
    });
    let (a_shape, b_shape) = (a.shape().to_vec(), b.shape().to_vec());
    record(
        "LinalgSolveExBackward0",
        &[a, b],
        &out,
        || (SavedTensor::input(a), SavedTensor::output(&out, 0)),
        move |ctx, (a, x), g| {
            let (a, x) = (a.unpack(ctx)?, x.unpack(ctx)?);
            let as_matrix = |t: &Tensor| match vector {
                true => unsqueeze(t, vector_dim),
                false => Ok(t.clone()),
            };
            let (g, x) = (as_matrix(g)?, as_matrix(&x)?);
            let gb = solve(&mh(&a)?, &g, left)?;
            let ga = ctx
                .needs_grad(0)
                .then(|| sum_to(&solved_matrix_grad(&gb, &x, left)?, &a_shape))
                .transpose()?;
            let gb = match vector {
                true => squeeze_dims(&gb, &[(gb.ndim() as i64 + vector_dim) as usize])?,
                false => gb,
            };
            Ok(grads![ga, Some(sum_to(&gb, &b_shape)?)])
        },
    );
    Ok(out)
}

/// `L` (lower, `A = L L^T`) of each matrix, or `U = L^T` with `upper`
/// (which reads `A`'s upper triangle).
fn cholesky_kernel<T: LinalgFloat>(a: &Tensor, upper: bool) -> Result<Tensor> {
    let m = Matrices::<T>::of(a);
    let side = if upper { Side::Upper } else { Side::Lower };
    let factors = per_matrix(m.count, a.ndim() > 2, "linalg.cholesky", |b| {
        match m.get(b).llt(side) {
            Ok(llt) => Ok(match upper {
                true => llt.L().transpose().to_owned(),
                false => llt.L().to_owned(),
            }),
            Err(LltError::NonPositivePivot { index }) => {
                Err(format!("The factorization could not be completed because the input is not positive-definite (the leading minor of order {} is not positive-definite).", index + 1))
            }
        }
    })?;
    stack_matrices(&factors, a.shape())
}

/// `linalg.cholesky(A, upper=...)` (`LinalgCholeskyExBackward0`). With
/// `P = Φ(L^T gL)` (the lower triangle, its diagonal halved, made
/// symmetric), gA = L^{-T} P L^{-1}.
pub fn cholesky(a: &Tensor, upper: bool) -> Result<Tensor> {
    check_square(a, "linalg.cholesky")?;
    let out =
        with_linalg_float!(a.dtype(), "linalg_cholesky", T => cholesky_kernel::<T>(a, upper)?);
    record(
        "LinalgCholeskyExBackward0",
        &[a],
        &out,
        || SavedTensor::output(&out, 0),
        move |ctx, factor, g| {
            let factor = factor.unpack(ctx)?;
            let (l, gl) = match upper {
                true => (mt(&factor)?, mt(g)?),
                false => (factor, g.clone()),
            };
            let lower = tril(&matmul(&mt(&l)?, &gl)?, 0)?;
            let half = Tensor::scalar(Scalar::Float(0.5), lower.dtype());
            let phi = mul(&add(&lower, &mt(&tril(&lower, -1)?)?)?, &half)?;
            let left = solve_triangular(&mt(&l)?, &phi, true, true, false)?;
            Ok(grads![Some(solve_triangular(
                &l, &left, false, false, false
            )?)])
        },
    );
    Ok(out)
}

/// `X` of `AX = B` (left) or `XA = B` for triangular `A`, by substitution.
fn triangular_kernel<T: LinalgFloat>(
    a: &Tensor,
    b: &Tensor,
    upper: bool,
    left: bool,
    unitriangular: bool,
) -> Vec<Mat<T>> {
    let (am, bm) = (Matrices::<T>::of(a), Matrices::<T>::of(b));
    (0..am.count)
        .into_par_iter()
        .map(|k| {
            // XA = B is A^T X^T = B^T, whose matrix is triangular the other way.
            let (tri, mut x, upper) = match left {
                true => (am.get(k), bm.get(k).to_owned(), upper),
                false => (
                    am.get(k).transpose(),
                    bm.get(k).transpose().to_owned(),
                    !upper,
                ),
            };
            let rhs = x.as_mut();
            match (upper, unitriangular) {
                (true, true) => {
                    triangular_solve::solve_unit_upper_triangular_in_place(tri, rhs, Par::Seq)
                }
                (true, false) => {
                    triangular_solve::solve_upper_triangular_in_place(tri, rhs, Par::Seq)
                }
                (false, true) => {
                    triangular_solve::solve_unit_lower_triangular_in_place(tri, rhs, Par::Seq)
                }
                (false, false) => {
                    triangular_solve::solve_lower_triangular_in_place(tri, rhs, Par::Seq)
                }
            }
            match left {
                true => x,
                false => x.transpose().to_owned(),
            }
        })
        .collect()
}

/// `linalg.solve_triangular(A, B, upper=..., left=..., unitriangular=...)`
/// (`LinalgSolveTriangularBackward0`): only `A`'s triangle (without its
/// diagonal when unitriangular) is read, and only it gets a gradient.
pub fn solve_triangular(
    a: &Tensor,
    b: &Tensor,
    upper: bool,
    left: bool,
    unitriangular: bool,
) -> Result<Tensor> {
    const OP: &str = "linalg.solve_triangular";
    let n = check_square(a, OP)?;
    check_matrix(b, OP, "B")?;
    check_same_dtype(a, b, OP)?;
    check_rhs(OP, n, b, left)?;
    let (a_full, b_full, batch) = broadcast_batches(a, b)?;
    let shape = with_matrix(&batch, b.shape()[b.ndim() - 2], b.shape()[b.ndim() - 1]);
    let out = with_linalg_float!(a.dtype(), "linalg_solve_triangular", T => {
        stack_matrices(&triangular_kernel::<T>(&a_full, &b_full, upper, left, unitriangular), &shape)?
    });
    let (a_shape, b_shape) = (a.shape().to_vec(), b.shape().to_vec());
    record(
        "LinalgSolveTriangularBackward0",
        &[a, b],
        &out,
        || (SavedTensor::input(a), SavedTensor::output(&out, 0)),
        move |ctx, (a, x), g| {
            let (a, x) = (a.unpack(ctx)?, x.unpack(ctx)?);
            let gb = solve_triangular(&mt(&a)?, g, !upper, left, unitriangular)?;
            let ga = ctx
                .needs_grad(0)
                .then(|| {
                    let ga = solved_matrix_grad(&gb, &x, left)?;
                    let skip = unitriangular as i64;
                    let ga = match upper {
                        true => triu(&ga, skip)?,
                        false => tril(&ga, -skip)?,
                    };
                    sum_to(&ga, &a_shape)
                })
                .transpose()?;
            Ok(grads![ga, Some(sum_to(&gb, &b_shape)?)])
        },
    );
    Ok(out)
}

/// Eigenvalues (ascending) and eigenvectors of each symmetric matrix,
/// reading the lower or upper triangle.
fn eigh_kernel<T: LinalgFloat>(a: &Tensor, upper: bool) -> Result<(Tensor, Tensor)> {
    let m = Matrices::<T>::of(a);
    let side = if upper { Side::Upper } else { Side::Lower };
    let parts = per_matrix(m.count, a.ndim() > 2, "linalg.eigh", |b| {
        let evd = m
            .get(b)
            .self_adjoint_eigen(side)
            .map_err(|_| "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated eigenvalues.".to_string())?;
        let values: Vec<T> = (0..m.rows).map(|k| evd.S().column_vector()[k]).collect();
        Ok((values, evd.U().to_owned()))
    })?;
    let values = parts.iter().flat_map(|p| p.0.iter().copied()).collect();
    let vectors: Vec<Mat<T>> = parts.into_iter().map(|p| p.1).collect();
    let s = a.shape();
    Ok((
        Tensor::from_vec(values, &s[..s.len() - 1])?,
        stack_matrices(&vectors, s)?,
    ))
}

/// Records a decomposition of `a` whose two outputs its backward rule
/// reads: `formula` gets them unpacked, with the outputs' gradients.
fn record_decomposition(
    name: &'static str,
    a: &Tensor,
    (first, second): (&Tensor, &Tensor),
    formula: impl Fn(Tensor, Tensor, &Grads) -> Result<Grads> + Send + Sync + 'static,
) {
    record_multi(
        name,
        &[a],
        &[first, second],
        || {
            (
                SavedTensor::output(first, 0),
                SavedTensor::output(second, 1),
            )
        },
        move |ctx, (first, second), grads| formula(first.unpack(ctx)?, second.unpack(ctx)?, grads),
    );
}

/// `linalg.eigh(A, UPLO)` as `(eigenvalues, eigenvectors)`
/// (`LinalgEighBackward0`): gA = V (F ∘ (V^T gV) + diag(gL)) V^T with
/// F_ij = 1/(λ_j - λ_i) off the diagonal.
pub fn eigh(a: &Tensor, upper: bool) -> Result<(Tensor, Tensor)> {
    let n = check_square(a, "linalg.eigh")?;
    let (values, vectors) =
        with_linalg_float!(a.dtype(), "linalg_eigh_cpu", T => eigh_kernel::<T>(a, upper)?);
    record_decomposition(
        "LinalgEighBackward0",
        a,
        (&values, &vectors),
        move |l, v, grads| {
            let inner = match (&grads[0], &grads[1]) {
                (gl, Some(gv)) => {
                    let identity = eye(n as i64, None, l.dtype())?;
                    // λ_j - λ_i, with ones on the diagonal (masked out below).
                    let gaps = add(&sub(&unsqueeze(&l, -2)?, &unsqueeze(&l, -1)?)?, &identity)?;
                    let off = sub(&Tensor::scalar(Scalar::Int(1), l.dtype()), &identity)?;
                    let rotation = mul(&super::binary::div(&matmul(&mt(&v)?, gv)?, &gaps)?, &off)?;
                    match gl {
                        Some(gl) => add(&rotation, &diag_of(gl)?)?,
                        None => rotation,
                    }
                }
                (Some(gl), None) => diag_of(gl)?,
                (None, None) => return Ok(grads![None]),
            };
            Ok(grads![Some(matmul(&matmul(&v, &inner)?, &mt(&v)?)?)])
        },
    );
    Ok((values, vectors))
}

/// Eigenvalues and eigenvectors of each real matrix, complex: each
/// eigenvector scaled to unit norm with its largest component real and
/// positive, a fixed choice among the `e^{iφ}` multiples that all qualify.
fn eig_kernel<T: LinalgFloat>(a: &Tensor) -> Result<(Tensor, Tensor)>
where
    num_complex::Complex<T>: Element,
{
    let m = Matrices::<T>::of(a);
    if !m.data.iter().all(|x| x.is_finite()) {
        bail!(
            Runtime,
            "torch.linalg.eig: input tensor should not contain infs or NaNs."
        );
    }
    let n = m.rows;
    let parts = per_matrix(m.count, a.ndim() > 2, "linalg.eig", |b| {
        let evd = m
            .get(b)
            .eigen()
            .map_err(|_| "The QR algorithm failed to converge.".to_string())?;
        let values: Vec<_> = (0..n).map(|k| evd.S().column_vector()[k]).collect();
        let mut vectors = evd.U().to_owned();
        let zero = <T as Arith>::zero();
        for j in 0..n {
            let (mut norm_sqr, mut largest) = (zero, num_complex::Complex::new(zero, zero));
            for i in 0..n {
                let z = vectors[(i, j)];
                norm_sqr = Arith::add(norm_sqr, z.norm_sqr());
                if z.norm_sqr() > largest.norm_sqr() {
                    largest = z;
                }
            }
            if norm_sqr > zero {
                // Divides by |v| and turns the largest component onto the positive real axis.
                let length = Float::sqrt(Arith::mul(largest.norm_sqr(), norm_sqr));
                let scale = largest.conj() / num_complex::Complex::new(length, zero);
                (0..n).for_each(|i| vectors[(i, j)] *= scale);
            }
        }
        Ok((values, vectors))
    })?;
    let values = parts.iter().flat_map(|p| p.0.iter().copied()).collect();
    let vectors: Vec<Mat<num_complex::Complex<T>>> = parts.into_iter().map(|p| p.1).collect();
    let s = a.shape();
    Ok((
        Tensor::from_vec(values, &s[..s.len() - 1])?,
        stack_matrices(&vectors, s)?,
    ))
}

/// `X` with `C X = Y` for complex `C`, as the real system
/// `[[Re C, -Im C], [Im C, Re C]] [Re X; Im X] = [Re Y; Im Y]`, so that it
/// is differentiable with the real solver's rule.
fn solve_complex(c: &Tensor, y: &Tensor) -> Result<Tensor> {
    let (cr, ci) = (real(c)?, imag(c)?);
    let system = cat(
        &[cat(&[cr.clone(), neg(&ci)?], -1)?, cat(&[ci, cr], -1)?],
        -2,
    )?;
    let x = solve(&system, &cat(&[real(y)?, imag(y)?], -2)?, true)?;
    let n = c.shape()[c.ndim() - 1] as i64;
    complex(&narrow(&x, -2, 0, n)?, &narrow(&x, -2, n, n)?)
}

/// `linalg.eig(A)` of real matrices as complex `(eigenvalues,
/// eigenvectors)` (`LinalgEigBackward0`). With `V^H gV` corrected for the
/// unit norm of `V`'s columns (`- V^H V Re(diag(V^H gV))`) and divided by
/// `conj(λ_j - λ_i)` off the diagonal, gA = V^{-H} (that + diag(gL)) V^H,
/// its real part for a real `A`. A loss that changes when an eigenvector is
/// multiplied by `e^{iφ}` has no gradient, and PyTorch's error says so.
pub fn eig(a: &Tensor) -> Result<(Tensor, Tensor)> {
    let n = check_square(a, "linalg.eig")?;
    let (values, vectors) = with_linalg_float!(a.dtype(), "linalg_eig", T => eig_kernel::<T>(a)?);
    record_decomposition(
        "LinalgEigBackward0",
        a,
        (&values, &vectors),
        move |l, v, grads| {
            let vh = conj(&mt(&v)?)?;
            let inner = match (&grads[0], &grads[1]) {
                (gl, Some(gv)) => {
                    let vhgv = matmul(&vh, gv)?;
                    let diagonal_of = diagonal(&vhgv, 0, -2, -1)?;
                    let phase_dependence =
                        super::copy::try_cast(&imag(&diagonal_of)?, DType::Float64)?;
                    if phase_dependence
                        .to_vec::<f64>()
                        .iter()
                        .any(|x| x.abs() > 1e-2)
                    {
                        bail!(Runtime, "linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by e^{{i phi}}. The specified loss function depends on this quantity, so it is ill-defined.");
                    }
                    let norm_re = real(&diagonal_of)?;
                    let norm_part = complex(&norm_re, &zeros_like(&norm_re)?)?;
                    let corrected =
                        sub(&vhgv, &matmul(&vh, &mul(&v, &unsqueeze(&norm_part, -2)?)?)?)?;
                    let identity = eye(n as i64, None, l.dtype())?;
                    let gaps = add(
                        &conj(&sub(&unsqueeze(&l, -2)?, &unsqueeze(&l, -1)?)?)?,
                        &identity,
                    )?;
                    let rotation = super::binary::div(&corrected, &gaps)?;
                    match gl {
                        Some(gl) => add(&rotation, &diag_of(gl)?)?,
                        None => rotation,
                    }
                }
                (Some(gl), None) => diag_of(gl)?,
                (None, None) => return Ok(grads![None]),
            };
            let ga = solve_complex(&vh, &matmul(&inner, &vh)?)?;
            Ok(grads![Some(real(&ga)?)])
        },
    );
    Ok((values, vectors))
}

/// `diag(x)` for the last dimension of `x`: `[..., k]` to `[..., k, k]`.
fn diag_of(x: &Tensor) -> Result<Tensor> {
    let k = x.shape()[x.ndim() - 1];
    mul(&unsqueeze(x, -1)?, &eye(k as i64, None, x.dtype())?)
}

/// `U`, `S` and `V^T` of each matrix (`U` and `V^T` square with
/// `full_matrices`, else of `min(m, n)` columns and rows).
fn svd_kernel<T: LinalgFloat>(a: &Tensor, full_matrices: bool) -> Result<(Tensor, Tensor, Tensor)> {
    let m = Matrices::<T>::of(a);
    let k = m.rows.min(m.cols);
    let parts = per_matrix(m.count, a.ndim() > 2, "linalg.svd", |b| {
        let svd = match full_matrices {
            true => m.get(b).svd(),
            false => m.get(b).thin_svd(),
        }
        .map_err(|_| "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated singular values.".to_string())?;
        let values: Vec<T> = (0..k).map(|i| svd.S().column_vector()[i]).collect();
        Ok((svd.U().to_owned(), values, svd.V().transpose().to_owned()))
    })?;
    let batch = batch_shape(a);
    let (u_cols, vh_rows) = match full_matrices {
        true => (m.rows, m.cols),
        false => (k, k),
    };
    let values = parts.iter().flat_map(|p| p.1.iter().copied()).collect();
    let mut values_shape = batch.to_vec();
    values_shape.push(k);
    let (us, vhs): (Vec<Mat<T>>, Vec<Mat<T>>) = parts.into_iter().map(|p| (p.0, p.2)).unzip();
    Ok((
        stack_matrices(&us, &with_matrix(batch, m.rows, u_cols))?,
        Tensor::from_vec(values, &values_shape)?,
        stack_matrices(&vhs, &with_matrix(batch, vh_rows, m.cols))?,
    ))
}

/// `linalg.svd(A, full_matrices)` as `(U, S, Vh)` (`LinalgSvdBackward0`).
/// The gradient reads only the first `min(m, n)` singular vectors, and
/// assumes distinct singular values, as PyTorch's does.
pub fn svd(a: &Tensor, full_matrices: bool) -> Result<(Tensor, Tensor, Tensor)> {
    let (m, n) = check_matrix(a, "linalg.svd", "A")?;
    let (u, s, vh) =
        with_linalg_float!(a.dtype(), "linalg_svd", T => svd_kernel::<T>(a, full_matrices)?);
    let k = m.min(n) as i64;
    record_multi(
        "LinalgSvdBackward0",
        &[a],
        &[&u, &s, &vh],
        || {
            (
                SavedTensor::output(&u, 0),
                SavedTensor::output(&s, 1),
                SavedTensor::output(&vh, 2),
            )
        },
        move |ctx, (u, s, vh), grads| {
            let thin = |t: &Tensor, dim: i64| match full_matrices {
                true => narrow(t, dim, 0, k),
                false => Ok(t.clone()),
            };
            let factors = SvdFactors {
                u: thin(&u.unpack(ctx)?, -1)?,
                s: s.unpack(ctx)?,
                vh: thin(&vh.unpack(ctx)?, -2)?,
            };
            let gu = grads[0].as_ref().map(|g| thin(g, -1)).transpose()?;
            let gvh = grads[2].as_ref().map(|g| thin(g, -2)).transpose()?;
            Ok(grads![factors.backward(
                gu,
                grads[1].as_ref(),
                gvh,
                m,
                n
            )?])
        },
    );
    Ok((u, s, vh))
}

/// A thin SVD `A = U diag(S) Vh`.
struct SvdFactors {
    u: Tensor,
    s: Tensor,
    vh: Tensor,
}

impl SvdFactors {
    /// gA = U [skew(U^T gU) S + S skew(Vh gVh^T)) / E + diag(gS)] Vh with
    /// E_ij = S_j^2 - S_i^2, plus the parts of gU (gVh) outside the span
    /// of U (V) for a tall (wide) matrix.
    fn backward(
        &self,
        gu: Option<Tensor>,
        gs: Option<&Tensor>,
        gvh: Option<Tensor>,
        m: usize,
        n: usize,
    ) -> Result<Option<Tensor>> {
        let (u, s, vh) = (&self.u, &self.s, &self.vh);
        if gu.is_none() && gvh.is_none() {
            return gs
                .map(|gs| matmul(&matmul(u, &diag_of(gs)?)?, vh))
                .transpose();
        }
        let skew = |x: Tensor| sub(&x, &mt(&x)?);
        let (s_row, s_col) = (unsqueeze(s, -2)?, unsqueeze(s, -1)?);
        let squares = mul(s, s)?;
        let identity = eye(s.shape()[s.ndim() - 1] as i64, None, s.dtype())?;
        // S_j^2 - S_i^2, with ones on the diagonal, where the numerators are zero.
        let gaps = add(
            &sub(&unsqueeze(&squares, -2)?, &unsqueeze(&squares, -1)?)?,
            &identity,
        )?;
        let from_u = gu
            .as_ref()
            .map(|gu| mul(&skew(matmul(&mt(u)?, gu)?)?, &s_row))
            .transpose()?;
        let from_v = gvh
            .as_ref()
            .map(|gvh| mul(&s_col, &skew(matmul(vh, &mt(gvh)?)?)?))
            .transpose()?;
        let numerators = match (from_u, from_v) {
            (Some(x), Some(y)) => add(&x, &y)?,
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => unreachable!("one of gU, gVh is given"),
        };
        let mut inner = super::binary::div(&numerators, &gaps)?;
        if let Some(gs) = gs {
            inner = add(&inner, &diag_of(gs)?)?;
        }
        let ga = match (&gu, &gvh) {
            (Some(gu), _) if m > n => {
                let scaled = super::binary::div(gu, &s_row)?;
                let outside = sub(&scaled, &matmul(u, &matmul(&mt(u)?, &scaled)?)?)?;
                matmul(&add(&matmul(u, &inner)?, &outside)?, vh)?
            }
            (_, Some(gvh)) if m < n => {
                let scaled = super::binary::div(gvh, &s_col)?;
                let outside = sub(&scaled, &matmul(&matmul(&scaled, &mt(vh)?)?, vh)?)?;
                matmul(u, &add(&matmul(&inner, vh)?, &outside)?)?
            }
            _ => matmul(&matmul(u, &inner)?, vh)?,
        };
        Ok(Some(ga))
    }
}

/// The singular values below which `pinv` and `matrix_rank` count a
/// value as zero: `max(atol, rtol * largest)`, with PyTorch's default
/// `rtol = eps * max(m, n)` when neither is given (or `atol` is 0).
fn singular_tolerance(
    s: &Tensor,
    m: usize,
    n: usize,
    atol: Option<f64>,
    rtol: Option<f64>,
) -> Result<Tensor> {
    let eps = match s.dtype() {
        DType::Float32 => f32::EPSILON as f64,
        _ => f64::EPSILON,
    };
    let rtol = rtol.unwrap_or(match atol {
        Some(a) if a > 0.0 => 0.0,
        _ => eps * m.max(n) as f64,
    });
    let largest = super::reduce::amax(&s.detach(), &[-1], true)?;
    let relative = mul(&largest, &Tensor::scalar(Scalar::Float(rtol), s.dtype()))?;
    super::binary::maximum(
        &relative,
        &Tensor::scalar(Scalar::Float(atol.unwrap_or(0.0)), s.dtype()),
    )
}

/// `linalg.pinv(A, atol=..., rtol=...)`: `V diag(1/S) U^T` over the
/// singular values above the tolerance, composed of differentiable ops.
pub fn pinv(a: &Tensor, atol: Option<f64>, rtol: Option<f64>) -> Result<Tensor> {
    let (m, n) = check_matrix(a, "linalg.pinv", "A")?;
    let (u, s, vh) = svd(a, false)?;
    if s.numel() == 0 {
        return Tensor::full(
            &with_matrix(batch_shape(a), n, m),
            Scalar::Int(0),
            a.dtype(),
        );
    }
    let kept = super::binary::gt(&s, &singular_tolerance(&s, m, n, atol, rtol)?)?;
    let inverse = where_(
        &kept,
        &super::binary::div(&Tensor::scalar(Scalar::Int(1), s.dtype()), &s)?,
        &Tensor::scalar(Scalar::Int(0), s.dtype()),
    )?;
    matmul(&mul(&mt(&vh)?, &unsqueeze(&inverse, -2)?)?, &mt(&u)?)
}

/// `linalg.matrix_rank(A, atol=..., rtol=...)`: how many singular values
/// exceed the tolerance (int64, no gradient).
pub fn matrix_rank(a: &Tensor, atol: Option<f64>, rtol: Option<f64>) -> Result<Tensor> {
    let (m, n) = check_matrix(a, "linalg.matrix_rank", "A")?;
    let (_, s, _) = svd(&a.detach(), false)?;
    if s.numel() == 0 {
        return Tensor::full(batch_shape(a), Scalar::Int(0), DType::Int64);
    }
    let kept = super::binary::gt(&s, &singular_tolerance(&s, m, n, atol, rtol)?)?;
    super::reduce::sum(&super::copy::try_cast(&kept, DType::Int64)?, &[-1], false)
}

/// What `linalg.qr` computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QrMode {
    /// `Q` of `min(m, n)` columns, `R` of as many rows.
    Reduced,
    /// Square `Q`, `R` of `m` rows.
    Complete,
    /// `R` only (`Q` empty).
    R,
}

impl QrMode {
    pub fn parse(mode: &str) -> Result<QrMode> {
        Ok(match mode {
            "reduced" => QrMode::Reduced,
            "complete" => QrMode::Complete,
            "r" => QrMode::R,
            _ => bail!(
                Runtime,
                "qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
            ),
        })
    }
}

fn qr_kernel<T: LinalgFloat>(a: &Tensor, mode: QrMode) -> Result<(Tensor, Tensor)> {
    let m = Matrices::<T>::of(a);
    let k = m.rows.min(m.cols);
    let parts: Vec<(Mat<T>, Mat<T>)> = (0..m.count)
        .into_par_iter()
        .map(|b| {
            let qr = m.get(b).qr();
            match mode {
                QrMode::Reduced => (qr.compute_thin_Q(), qr.thin_R().to_owned()),
                QrMode::Complete => {
                    // R of a tall matrix is its thin R over rows of zeros.
                    let mut r = Mat::zeros(m.rows, m.cols);
                    r.as_mut().get_mut(..k, ..).copy_from(qr.thin_R());
                    (qr.compute_Q(), r)
                }
                QrMode::R => (Mat::zeros(0, 0), qr.thin_R().to_owned()),
            }
        })
        .collect();
    let batch = batch_shape(a);
    let (q_shape, r_rows) = match mode {
        QrMode::Reduced => (with_matrix(batch, m.rows, k), k),
        QrMode::Complete => (with_matrix(batch, m.rows, m.rows), m.rows),
        QrMode::R => (vec![0], k),
    };
    let (qs, rs): (Vec<Mat<T>>, Vec<Mat<T>>) = parts.into_iter().unzip();
    Ok((
        stack_matrices(&qs, &q_shape)?,
        stack_matrices(&rs, &with_matrix(batch, r_rows, m.cols))?,
    ))
}

/// `linalg.qr(A, mode)` as `(Q, R)` (`LinalgQrBackward0`). For `m >= n`,
/// gA = (gQ + Q copyltu(M)) R^{-T} with M = R gR^T - gQ^T Q and copyltu
/// the symmetric matrix of M's lower triangle; a wide matrix splits as
/// `[X | Y]` with `X` square.
pub fn qr(a: &Tensor, mode: QrMode) -> Result<(Tensor, Tensor)> {
    let (m, n) = check_matrix(a, "linalg.qr", "A")?;
    let (q, r) = with_linalg_float!(a.dtype(), "linalg_qr", T => qr_kernel::<T>(a, mode)?);
    record_multi(
        "LinalgQrBackward0",
        &[a],
        &[&q, &r],
        || (SavedTensor::output(&q, 0), SavedTensor::output(&r, 1)),
        move |ctx, (q, r), grads| {
            match mode {
                QrMode::R => bail!(Runtime, "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."),
                QrMode::Complete if m > n => bail!(Runtime, "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."),
                _ => {}
            }
            let (q, r) = (q.unpack(ctx)?, r.unpack(ctx)?);
            let gq = grads[0].clone().map_or_else(|| zeros_like(&q), Ok)?;
            let gr = grads[1].clone().map_or_else(|| zeros_like(&r), Ok)?;
            if m >= n {
                return Ok(grads![Some(qr_backward_tall(&q, &r, &gq, &gr)?)]);
            }
            let (square, rest) = (
                narrow(&r, -1, 0, m as i64)?,
                narrow(&r, -1, m as i64, (n - m) as i64)?,
            );
            let (g_square, g_rest) = (
                narrow(&gr, -1, 0, m as i64)?,
                narrow(&gr, -1, m as i64, (n - m) as i64)?,
            );
            let y = matmul(&q, &rest)?;
            let gq = add(&gq, &matmul(&y, &mt(&g_rest)?)?)?;
            let gx = qr_backward_tall(&q, &square, &gq, &g_square)?;
            let gy = matmul(&q, &g_rest)?;
            Ok(grads![Some(super::index::cat(&[gx, gy], -1)?)])
        },
    );
    Ok((q, r))
}

fn qr_backward_tall(q: &Tensor, r: &Tensor, gq: &Tensor, gr: &Tensor) -> Result<Tensor> {
    let m = sub(&matmul(r, &mt(gr)?)?, &matmul(&mt(gq)?, q)?)?;
    let copyltu = add(&tril(&m, 0)?, &mt(&tril(&m, -1)?)?)?;
    let numerator = add(gq, &matmul(q, &copyltu)?)?;
    // X R^T = numerator, with R^T lower triangular.
    solve_triangular(&mt(r)?, &numerator, false, false, false)
}

/// `linalg.matrix_power(A, k)`: `A` multiplied by itself `k` times by
/// repeated squaring (the identity for `k = 0`, powers of `A^{-1}` for
/// negative `k`), composed of differentiable products.
pub fn matrix_power(a: &Tensor, k: i64) -> Result<Tensor> {
    let n = check_square(a, "linalg.matrix_power")?;
    if k == 0 {
        let identity = eye(n as i64, None, a.dtype())?;
        return super::copy::clone(&expand_to(&identity, a.shape())?);
    }
    let mut base = match k < 0 {
        true => inv(a)?,
        false => a.clone(),
    };
    let mut power: Option<Tensor> = None;
    let mut rest = k.unsigned_abs();
    while rest > 0 {
        if rest & 1 == 1 {
            power = Some(match power {
                Some(p) => matmul(&p, &base)?,
                None => base.clone(),
            });
        }
        rest >>= 1;
        if rest > 0 {
            base = matmul(&base, &base)?;
        }
    }
    Ok(power.expect("k is nonzero"))
}

/// `linalg.multi_dot(tensors)`: the chained product, in the order of
/// fewest multiply-adds; a 1-d first (last) operand is a row (column)
/// vector, dropped from the result.
pub fn multi_dot(tensors: &[Tensor]) -> Result<Tensor> {
    const OP: &str = "multi_dot()";
    let count = tensors.len();
    if count < 2 {
        bail!(Runtime, "{OP}: expected at least 2 tensors but got {count}");
    }
    let mut mats = Vec::with_capacity(count);
    for (i, t) in tensors.iter().enumerate() {
        let end = i == 0 || i == count - 1;
        let m = match (t.ndim(), i) {
            (2, _) => t.clone(),
            (1, 0) => unsqueeze(t, 0)?,
            (1, _) if end => unsqueeze(t, -1)?,
            (d, 0) => bail!(
                Runtime,
                "{OP}: the first tensor must be 1D or 2D but got {d}D"
            ),
            (d, _) if end => bail!(
                Runtime,
                "{OP}: the last tensor must be 1D or 2D but got {d}D"
            ),
            (d, _) => bail!(Runtime, "{OP}: tensor {i} must be 2D but got {d}D"),
        };
        if let Some(prev) = mats.last().map(|p: &Tensor| p.shape()[1]) {
            if prev != m.shape()[0] {
                bail!(
                    Runtime,
                    "{OP}: tensors {} and {i} with shapes {} and {} cannot be multiplied",
                    i - 1,
                    crate::tensor::layout::fmt_shape(tensors[i - 1].shape()),
                    crate::tensor::layout::fmt_shape(t.shape())
                );
            }
        }
        mats.push(m);
    }
    let dims: Vec<usize> = std::iter::once(mats[0].shape()[0])
        .chain(mats.iter().map(|m| m.shape()[1]))
        .collect();
    let order = chain_order(&dims);
    let mut out = chain_product(&mats, &order, 0, count - 1)?;
    if tensors[count - 1].ndim() == 1 {
        out = squeeze_dims(&out, &[1])?;
    }
    if tensors[0].ndim() == 1 {
        out = squeeze_dims(&out, &[0])?;
    }
    Ok(out)
}

/// For each chain `i..=j` of matrices with sizes `dims[i] x dims[i + 1]`,
/// the split that multiplies it in the fewest multiply-adds.
fn chain_order(dims: &[usize]) -> Vec<Vec<usize>> {
    let count = dims.len() - 1;
    let mut cost = vec![vec![0usize; count]; count];
    let mut split = vec![vec![0usize; count]; count];
    for length in 1..count {
        for i in 0..count - length {
            let j = i + length;
            cost[i][j] = usize::MAX;
            for s in i..j {
                let c = cost[i][s]
                    .saturating_add(cost[s + 1][j])
                    .saturating_add(dims[i] * dims[s + 1] * dims[j + 1]);
                if c < cost[i][j] {
                    cost[i][j] = c;
                    split[i][j] = s;
                }
            }
        }
    }
    split
}

fn chain_product(mats: &[Tensor], split: &[Vec<usize>], i: usize, j: usize) -> Result<Tensor> {
    if i == j {
        return Ok(mats[i].clone());
    }
    let s = split[i][j];
    matmul(
        &chain_product(mats, split, i, s)?,
        &chain_product(mats, split, s + 1, j)?,
    )
}
