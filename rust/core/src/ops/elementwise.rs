//! Elementwise kernels over strided, broadcast operands.
//!
//! Contiguous operands run as plain slice loops that the compiler
//! vectorises; large ones are split across the rayon pool. Anything else
//! walks storage offsets.

use crate::tensor::layout::{broadcast_shapes, Layout};
use crate::tensor::{Element, Tensor};
use crate::Result;
use parking_lot::{MappedRwLockReadGuard, MappedRwLockWriteGuard};
use rayon::prelude::*;

/// Element counts below this run on the calling thread: spawning costs more.
pub const PARALLEL_MIN_ELEMENTS: usize = 1 << 16;
const CHUNK: usize = 1 << 14;

/// The contiguous slice a tensor covers, if it is contiguous.
/// Empty views may carry any offset (even past the end of the storage).
fn contiguous_range(l: &Layout) -> Option<std::ops::Range<usize>> {
    match l.numel() {
        0 => Some(0..0),
        n => l.is_contiguous().then(|| l.offset..l.offset + n),
    }
}

/// Whether every element of `l` is the same storage element (a number or
/// a tensor expanded from one), so kernels can treat it as a constant.
fn is_single_element(l: &Layout) -> bool {
    l.shape
        .iter()
        .zip(&l.strides)
        .all(|(&d, &s)| d <= 1 || s == 0)
}

/// A layout as rows: the layout of the row starts (all dims but the last)
/// and the length and stride of the innermost dimension. Strided kernels
/// walk row starts with an offset iterator and run plain loops along rows.
fn rows(l: &Layout) -> (Layout, usize, isize) {
    match l.ndim() {
        0 => (l.clone(), 1, 1),
        n => (
            Layout {
                shape: l.shape[..n - 1].into(),
                strides: l.strides[..n - 1].into(),
                offset: l.offset,
            },
            l.shape[n - 1],
            l.strides[n - 1],
        ),
    }
}

/// Offsets of one row: `len` elements from `start`, `stride` apart.
#[inline(always)]
fn row(start: usize, len: usize, stride: isize) -> impl Iterator<Item = usize> {
    (0..len).map(move |k| (start as isize + k as isize * stride) as usize)
}

/// `f` applied to every element, as a new contiguous tensor.
pub fn map<A: Element, O: Element>(a: &Tensor, f: impl Fn(A) -> O + Sync + Send) -> Tensor {
    let data = a.storage().read::<A>();
    let l = a.layout();
    let n = l.numel();
    let out: Vec<O> = match contiguous_range(l) {
        Some(r) if n >= PARALLEL_MIN_ELEMENTS => {
            let (src, mut out) = (&data[r], Vec::with_capacity(n));
            crate::parallel::install(|| {
                src.par_iter()
                    .with_min_len(CHUNK)
                    .map(|&x| f(x))
                    .collect_into_vec(&mut out)
            });
            out
        }
        Some(r) => data[r].iter().map(|&x| f(x)).collect(),
        None => {
            let (outer, len, stride) = rows(l);
            let mut out = Vec::with_capacity(n);
            for start in outer.offsets() {
                out.extend(row(start, len, stride).map(|o| f(data[o])));
            }
            out
        }
    };
    drop(data);
    Tensor::from_vec(out, &l.shape).expect("shape matches")
}

/// `f` applied pairwise over the broadcast of `a` and `b`.
pub fn zip_map<A: Element, B: Element, O: Element>(
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(A, B) -> O + Sync + Send,
) -> Result<Tensor> {
    let shape = broadcast_shapes(a.shape(), b.shape())?;
    let n = crate::tensor::layout::numel(&shape);
    let da = a.storage().read::<A>();
    let db = b.storage().read::<B>();
    let (la, lb) = (a.layout(), b.layout());
    let par = n >= PARALLEL_MIN_ELEMENTS;
    let out: Vec<O> = match (contiguous_range(la), contiguous_range(lb)) {
        (Some(ra), Some(rb)) if la.shape == shape && lb.shape == shape => {
            let (sa, sb) = (&da[ra], &db[rb]);
            if par {
                let mut out = Vec::with_capacity(n);
                crate::parallel::install(|| {
                    sa.par_iter()
                        .zip(sb.par_iter())
                        .with_min_len(CHUNK)
                        .map(|(&x, &y)| f(x, y))
                        .collect_into_vec(&mut out)
                });
                out
            } else {
                sa.iter().zip(sb).map(|(&x, &y)| f(x, y)).collect()
            }
        }
        (Some(ra), _) if la.shape == shape && is_single_element(lb) && lb.numel() > 0 => {
            let y = db[lb.offset];
            let sa = &da[ra];
            if par {
                let mut out = Vec::with_capacity(n);
                crate::parallel::install(|| {
                    sa.par_iter()
                        .with_min_len(CHUNK)
                        .map(|&x| f(x, y))
                        .collect_into_vec(&mut out)
                });
                out
            } else {
                sa.iter().map(|&x| f(x, y)).collect()
            }
        }
        (_, Some(rb)) if lb.shape == shape && is_single_element(la) && la.numel() > 0 => {
            let x = da[la.offset];
            let sb = &db[rb];
            if par {
                let mut out = Vec::with_capacity(n);
                crate::parallel::install(|| {
                    sb.par_iter()
                        .with_min_len(CHUNK)
                        .map(|&y| f(x, y))
                        .collect_into_vec(&mut out)
                });
                out
            } else {
                sb.iter().map(|&y| f(x, y)).collect()
            }
        }
        _ => {
            let (ba, bb) = (la.broadcast_to(&shape)?, lb.broadcast_to(&shape)?);
            let ((oa, len, sa), (ob, _, sb)) = (rows(&ba), rows(&bb));
            let mut out = Vec::with_capacity(n);
            let outer = if n == 0 {
                Vec::new()
            } else {
                oa.offsets().zip(ob.offsets()).collect()
            };
            for (ra, rb) in outer {
                match (sa, sb) {
                    // The common broadcasts: a row against a row or a number.
                    (1, 1) => out.extend(
                        da[ra..ra + len]
                            .iter()
                            .zip(&db[rb..rb + len])
                            .map(|(&x, &y)| f(x, y)),
                    ),
                    (1, 0) => out.extend(da[ra..ra + len].iter().map(|&x| f(x, db[rb]))),
                    (0, 1) => out.extend(db[rb..rb + len].iter().map(|&y| f(da[ra], y))),
                    _ => out.extend(
                        row(ra, len, sa)
                            .zip(row(rb, len, sb))
                            .map(|(i, j)| f(da[i], db[j])),
                    ),
                }
            }
            out
        }
    };
    drop((da, db));
    Tensor::from_vec(out, &shape)
}

/// `f` applied over three broadcast operands (e.g. `where`).
pub fn zip3_map<A: Element, B: Element, C: Element, O: Element>(
    a: &Tensor,
    b: &Tensor,
    c: &Tensor,
    f: impl Fn(A, B, C) -> O,
) -> Result<Tensor> {
    let shape = broadcast_shapes(&broadcast_shapes(a.shape(), b.shape())?, c.shape())?;
    let (da, db, dc) = (
        a.storage().read::<A>(),
        b.storage().read::<B>(),
        c.storage().read::<C>(),
    );
    let la = a.layout().broadcast_to(&shape)?;
    let lb = b.layout().broadcast_to(&shape)?;
    let lc = c.layout().broadcast_to(&shape)?;
    let out: Vec<O> = la
        .offsets()
        .zip(lb.offsets())
        .zip(lc.offsets())
        .map(|((i, j), k)| f(da[i], db[j], dc[k]))
        .collect();
    drop((da, db, dc));
    Tensor::from_vec(out, &shape)
}

/// Read access to `src` and write access to `dst` (distinct storages),
/// taken in address order so that concurrent updates in opposite
/// directions (`a += b` beside `b += a`) cannot deadlock.
pub fn lock_pair<'a, S: Element, D: Element>(
    src: &'a Tensor,
    dst: &'a Tensor,
) -> (
    MappedRwLockReadGuard<'a, [S]>,
    MappedRwLockWriteGuard<'a, [D]>,
) {
    if src.storage().buffer_id() < dst.storage().buffer_id() {
        let ds = src.storage().read::<S>();
        (ds, dst.storage().write::<D>())
    } else {
        let dd = dst.storage().write::<D>();
        (src.storage().read::<S>(), dd)
    }
}

/// Writes `f(dst, src)` into `dst` in place, `src` broadcast to `dst`'s
/// shape. `src` is read into a buffer first when it shares `dst`'s storage,
/// so overlapping operands see the values from before the write.
pub fn update<D: Element, S: Element>(
    dst: &Tensor,
    src: &Tensor,
    f: impl Fn(D, S) -> D + Sync + Send,
) -> Result<()> {
    let lsrc = src.layout().broadcast_to(dst.shape())?;
    let ld = dst.layout();
    // Views of one buffer may hold different storages (`z.real`, `z.imag`).
    if src.storage().same_buffer(dst.storage()) {
        let copy = Tensor::from_vec(src.to_vec::<S>(), src.shape())?;
        return update(dst, &copy, f);
    }
    let (ds, mut dd) = lock_pair::<S, D>(src, dst);
    let par = ld.numel() >= PARALLEL_MIN_ELEMENTS;
    match (contiguous_range(ld), contiguous_range(&lsrc)) {
        (Some(r), _) if is_single_element(&lsrc) && lsrc.numel() > 0 => {
            let s = ds[lsrc.offset];
            if par {
                let dst = &mut dd[r];
                crate::parallel::install(|| {
                    dst.par_iter_mut()
                        .with_min_len(CHUNK)
                        .for_each(|d| *d = f(*d, s))
                });
            } else {
                dd[r].iter_mut().for_each(|d| *d = f(*d, s));
            }
        }
        (Some(r), Some(rs)) => {
            if par {
                let (dst, src) = (&mut dd[r], &ds[rs]);
                crate::parallel::install(|| {
                    dst.par_iter_mut()
                        .zip(src.par_iter())
                        .with_min_len(CHUNK)
                        .for_each(|(d, &s)| *d = f(*d, s))
                });
            } else {
                dd[r]
                    .iter_mut()
                    .zip(&ds[rs])
                    .for_each(|(d, &s)| *d = f(*d, s));
            }
        }
        _ => {
            let ((od, len, sd), (os, _, ss)) = (rows(ld), rows(&lsrc));
            for (rd, rs) in od.offsets().zip(os.offsets()) {
                for (o, so) in row(rd, len, sd).zip(row(rs, len, ss)) {
                    dd[o] = f(dd[o], ds[so]);
                }
            }
        }
    }
    drop((ds, dd));
    dst.bump_version();
    Ok(())
}
