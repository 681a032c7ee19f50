//! Shape, strides and offset: how a tensor's elements sit in its storage.

use crate::{bail, Result};
use smallvec::SmallVec;

pub type Shape = SmallVec<[usize; 4]>;
pub type Strides = SmallVec<[isize; 4]>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub shape: Shape,
    pub strides: Strides,
    pub offset: usize,
}

pub fn numel(shape: &[usize]) -> usize {
    // Shapes are checked (`check_numel`) to fit unless a dim is 0, where
    // the others may be huge: the wrapped partial product is then
    // multiplied by 0 all the same.
    shape.iter().fold(1usize, |n, &d| n.wrapping_mul(d))
}

/// Most elements a tensor may hold: its bytes (at most 16 per element)
/// must fit in `isize`, as every buffer's do.
const MAX_NUMEL: usize = isize::MAX as usize / 16;

/// Checks that a tensor of `shape` has an element count that fits in
/// memory's address range, with PyTorch's message when not. A shape from
/// user input is checked before anything is allocated or indexed for it:
/// the unchecked product would wrap around.
pub fn check_numel(shape: &[usize]) -> Result<()> {
    let fits = shape.contains(&0)
        || shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .is_some_and(|n| n <= MAX_NUMEL);
    if !fits {
        bail!(
            Runtime,
            "Storage size calculation overflowed with sizes={}",
            fmt_shape(shape)
        );
    }
    Ok(())
}

/// Row-major strides for `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Strides {
    let mut strides: Strides = smallvec::smallvec![0; shape.len()];
    let mut acc = 1isize;
    for i in (0..shape.len()).rev() {
        strides[i] = acc;
        // Wraps only for shapes with a 0 dim among huge ones (see
        // `numel`), whose strides address nothing.
        acc = acc.wrapping_mul(shape[i].max(1) as isize);
    }
    strides
}

/// Formats a shape the way PyTorch's messages do: `[2, 3]`.
pub fn fmt_shape(shape: &[usize]) -> String {
    let parts: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// The broadcast shape of two shapes, or PyTorch's error, which names the
/// last mismatched dimension: dimensions are matched from the right.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Shape> {
    let n = a.len().max(b.len());
    let mut out: Shape = smallvec::smallvec![0; n];
    for i in (0..n).rev() {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => bail!(
                Runtime,
                "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {}",
                da,
                db,
                i
            ),
        };
    }
    Ok(out)
}

/// Wraps a possibly negative dimension index into `0..ndim`.
pub fn wrap_dim(dim: i64, ndim: usize) -> Result<usize> {
    let n = ndim.max(1) as i64;
    if dim < -n || dim >= n {
        bail!(
            Index,
            "Dimension out of range (expected to be in range of [{}, {}], but got {})",
            -n,
            n - 1,
            dim
        );
    }
    Ok(if dim < 0 {
        (dim + n) as usize
    } else {
        dim as usize
    })
}

/// `dim` of a tensor of at least one dim, for the ops that treat a 0-d
/// tensor as having no dim at all (where others see one of size 1).
pub fn wrap_dim_of_array(dim: i64, ndim: usize) -> Result<usize> {
    if ndim == 0 {
        bail!(
            Index,
            "Dimension specified as {} but tensor has no dimensions",
            dim
        );
    }
    wrap_dim(dim, ndim)
}

/// How a dense tensor's dims are ordered in memory (`torch.memory_format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryFormat {
    /// Row-major: the last dim innermost (the default).
    Contiguous,
    /// A 4-d N, C, H, W tensor stored as N, H, W, C.
    ChannelsLast,
    /// A 5-d N, C, D, H, W tensor stored as N, D, H, W, C.
    ChannelsLast3d,
    /// A copy keeps its source's order.
    Preserve,
}

impl MemoryFormat {
    /// The dims of an `ndim`-d tensor from outermost to innermost in memory
    /// (`Preserve` reads as `Contiguous`), or PyTorch's error for a rank the
    /// format does not take.
    pub fn dim_order(self, ndim: usize) -> Result<SmallVec<[usize; 6]>> {
        let channels_last = |rank: usize, name: &str| -> Result<SmallVec<[usize; 6]>> {
            if ndim != rank {
                bail!(Runtime, "required rank {rank} tensor to use {name} format");
            }
            Ok(std::iter::once(0).chain(2..rank).chain([1]).collect())
        };
        match self {
            MemoryFormat::ChannelsLast => channels_last(4, "channels_last"),
            MemoryFormat::ChannelsLast3d => channels_last(5, "channels_last_3d"),
            MemoryFormat::Contiguous | MemoryFormat::Preserve => Ok((0..ndim).collect()),
        }
    }
}

impl Layout {
    pub fn contiguous(shape: &[usize]) -> Layout {
        Layout {
            shape: Shape::from_slice(shape),
            strides: contiguous_strides(shape),
            offset: 0,
        }
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    pub fn numel(&self) -> usize {
        numel(&self.shape)
    }

    /// This layout with dims `a` and `b` swapped (a transpose's view).
    pub fn transposed(&self, a: usize, b: usize) -> Layout {
        let mut l = self.clone();
        l.shape.swap(a, b);
        l.strides.swap(a, b);
        l
    }

    /// Row-major dense, as PyTorch decides it: a dim of size 1 may have any
    /// stride, and a tensor without elements is always contiguous.
    pub fn is_contiguous(&self) -> bool {
        if self.numel() == 0 {
            return true;
        }
        let mut expected = 1isize;
        for i in (0..self.shape.len()).rev() {
            if self.shape[i] != 1 && self.strides[i] != expected {
                return false;
            }
            expected *= self.shape[i] as isize;
        }
        true
    }

    /// Whether the elements are dense with dims `order` from outermost to
    /// innermost; a dim of size 1 may have any stride.
    pub fn is_contiguous_in(&self, order: &[usize]) -> bool {
        let mut expected = 1isize;
        for &d in order.iter().rev() {
            if self.shape[d] != 1 && self.strides[d] != expected {
                return false;
            }
            expected *= self.shape[d] as isize;
        }
        true
    }

    /// `(stride, size)` of the dims of more than one element, smallest
    /// stride first.
    fn dims_by_stride(&self) -> SmallVec<[(isize, usize); 6]> {
        let mut dims: SmallVec<[(isize, usize); 6]> = self
            .strides
            .iter()
            .zip(&self.shape)
            .filter(|&(_, &n)| n > 1)
            .map(|(&s, &n)| (s, n))
            .collect();
        dims.sort_unstable();
        dims
    }

    /// Whether the elements fill `offset..offset + numel` exactly once,
    /// in some order of the dims: row-major, transposed, permuted or
    /// channels-last, but not sliced, broadcast or overlapping.
    pub fn is_non_overlapping_and_dense(&self) -> bool {
        let mut expected = 1isize;
        for (stride, n) in self.dims_by_stride() {
            if stride != expected {
                return false;
            }
            expected *= n as isize;
        }
        true
    }

    /// A dense layout of `shape` whose dims lie in memory from outermost
    /// to innermost in `order`.
    pub fn contiguous_in(shape: &[usize], order: &[usize]) -> Layout {
        let mut strides: Strides = shape.iter().map(|_| 0).collect();
        let mut stride = 1isize;
        for &d in order.iter().rev() {
            strides[d] = stride;
            stride *= shape[d].max(1) as isize;
        }
        Layout {
            shape: shape.into(),
            strides,
            offset: 0,
        }
    }

    /// Whether no two elements share a storage position: with the dims
    /// sorted by stride, each stride passes the furthest offset the
    /// smaller dims reach.
    pub fn is_non_overlapping(&self) -> bool {
        let mut reach = 0isize;
        for (stride, n) in self.dims_by_stride() {
            if stride <= reach {
                return false;
            }
            reach += stride * (n as isize - 1);
        }
        true
    }

    /// This layout seen with `shape`, broadcasting size-1 and missing
    /// leading dimensions with stride 0 (the core of `expand`).
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Layout> {
        check_numel(shape)?;
        let n = shape.len();
        if n < self.ndim() {
            bail!(
                Runtime,
                "expand: the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
                n,
                self.ndim()
            );
        }
        let lead = n - self.ndim();
        let mut strides: Strides = smallvec::smallvec![0; n];
        for i in 0..n {
            if i < lead {
                continue;
            }
            let (d, s) = (self.shape[i - lead], self.strides[i - lead]);
            if d == shape[i] {
                strides[i] = s;
            } else if d != 1 {
                bail!(
                    Runtime,
                    "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension {}.  Target sizes: {}.  Tensor sizes: {}",
                    shape[i],
                    d,
                    i,
                    fmt_shape(shape),
                    fmt_shape(&self.shape)
                );
            }
        }
        Ok(Layout {
            shape: shape.into(),
            strides,
            offset: self.offset,
        })
    }

    /// `layouts` (all of one shape) with their dims merged wherever every
    /// one of them steps through the pair as through one dim, and size-1
    /// dims dropped: the same elements in the same order, walked with fewer
    /// and longer rows (an image's height and width become one row of
    /// `h*w`, also against a per-channel operand broadcast over both).
    pub fn coalesced<const N: usize>(layouts: [&Layout; N]) -> [Layout; N] {
        let shape = &layouts[0].shape;
        let mut out: [Layout; N] = layouts.map(|l| Layout {
            shape: Shape::new(),
            strides: Strides::new(),
            offset: l.offset,
        });
        for d in 0..shape.len() {
            if shape[d] == 1 {
                continue;
            }
            let merges = !out[0].shape.is_empty()
                && out.iter().zip(&layouts).all(|(o, l)| {
                    let last = o.strides.len() - 1;
                    o.strides[last] == l.strides[d] * shape[d] as isize
                });
            for (o, l) in out.iter_mut().zip(&layouts) {
                if merges {
                    let last = o.shape.len() - 1;
                    o.shape[last] *= shape[d];
                    o.strides[last] = l.strides[d];
                } else {
                    o.shape.push(shape[d]);
                    o.strides.push(l.strides[d]);
                }
            }
        }
        out
    }

    /// Storage offsets of every element in row-major order.
    pub fn offsets(&self) -> OffsetIter<'_> {
        OffsetIter::new(self)
    }

    /// This layout as rows: the layout of the row starts (all dims but the
    /// last) and the length and stride of the innermost dimension. Strided
    /// kernels walk row starts with an offset iterator and run plain loops
    /// along rows.
    pub fn rows(&self) -> (Layout, usize, isize) {
        match self.ndim() {
            0 => (self.clone(), 1, 1),
            n => (
                Layout {
                    shape: self.shape[..n - 1].into(),
                    strides: self.strides[..n - 1].into(),
                    offset: self.offset,
                },
                self.shape[n - 1],
                self.strides[n - 1],
            ),
        }
    }

    /// [`Layout::offsets`] collected, a whole innermost row at a time (a
    /// plain loop), which is several times faster for long lists.
    pub fn offset_vec(&self) -> crate::Result<Vec<usize>> {
        let (starts, len, stride) = self.rows();
        let mut out = super::storage::try_buffer(self.numel())?;
        if self.numel() > 0 {
            for start in starts.offsets() {
                let start = start as isize;
                out.extend((0..len as isize).map(|k| (start + k * stride) as usize));
            }
        }
        Ok(out)
    }

    /// Strides for viewing this layout as `shape` without copying, if
    /// possible (PyTorch's `computeStride`), else `None`.
    pub fn view_strides(&self, shape: &[usize]) -> Option<Strides> {
        if self.numel() == 0 || self.is_contiguous() {
            return Some(contiguous_strides(shape));
        }
        // Walk chunks of old dims that are mutually contiguous and split them
        // across the new dims.
        let mut new_strides: Strides = smallvec::smallvec![0; shape.len()];
        let mut view_d = shape.len() as isize - 1;
        let mut chunk_base_stride = *self.strides.last()?;
        let mut tensor_numel = 1usize;
        let mut view_numel = 1usize;
        for tensor_d in (0..self.ndim()).rev() {
            tensor_numel *= self.shape[tensor_d];
            let chunk_end = tensor_d == 0
                || (self.shape[tensor_d - 1] != 1
                    && self.strides[tensor_d - 1] != tensor_numel as isize * chunk_base_stride);
            if chunk_end {
                while view_d >= 0 && (view_numel < tensor_numel || shape[view_d as usize] == 1) {
                    new_strides[view_d as usize] = view_numel as isize * chunk_base_stride;
                    view_numel *= shape[view_d as usize];
                    view_d -= 1;
                }
                if view_numel != tensor_numel {
                    return None;
                }
                if tensor_d > 0 {
                    chunk_base_stride = self.strides[tensor_d - 1];
                    tensor_numel = 1;
                    view_numel = 1;
                }
            }
        }
        if view_d != -1 {
            return None;
        }
        Some(new_strides)
    }
}

/// Iterates storage offsets of a strided layout in row-major order.
pub struct OffsetIter<'a> {
    layout: &'a Layout,
    index: Shape,
    next: Option<isize>,
}

impl<'a> OffsetIter<'a> {
    fn new(layout: &'a Layout) -> Self {
        let next = if layout.numel() == 0 {
            None
        } else {
            Some(layout.offset as isize)
        };
        OffsetIter {
            layout,
            index: smallvec::smallvec![0; layout.ndim()],
            next,
        }
    }
}

impl Iterator for OffsetIter<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let cur = self.next?;
        let l = self.layout;
        let mut pos = cur;
        let mut d = l.ndim();
        loop {
            if d == 0 {
                self.next = None;
                break;
            }
            d -= 1;
            self.index[d] += 1;
            pos += l.strides[d];
            if self.index[d] < l.shape[d] {
                self.next = Some(pos);
                break;
            }
            pos -= l.strides[d] * l.shape[d] as isize;
            self.index[d] = 0;
        }
        Some(cur as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_and_errors() {
        assert_eq!(broadcast_shapes(&[3, 1], &[4]).unwrap().as_slice(), &[3, 4]);
        assert_eq!(broadcast_shapes(&[], &[2, 2]).unwrap().as_slice(), &[2, 2]);
        let e = broadcast_shapes(&[3], &[4]).unwrap_err().to_string();
        assert!(e.contains("The size of tensor a (3) must match the size of tensor b (4)"));
        let e = broadcast_shapes(&[3, 4], &[4, 3]).unwrap_err().to_string();
        assert!(e.ends_with(
            "tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1"
        ));
    }

    #[test]
    fn empty_shapes_with_huge_dims_have_strides() {
        // Debug builds check overflow: the stride past a 0 dim among huge
        // ones must not panic.
        let big = 1usize << 40;
        let strides = contiguous_strides(&[big, big, 0]);
        assert_eq!(&strides[1..], &[1, 1]);
        assert_eq!(numel(&[big, big, 0]), 0);
    }

    #[test]
    fn offset_vec_lists_the_offsets_in_order() {
        let layouts = [
            Layout::contiguous(&[2, 3]),
            Layout {
                shape: smallvec::smallvec![3, 2, 2],
                strides: smallvec::smallvec![1, 0, -3],
                offset: 9,
            },
            Layout {
                shape: smallvec::smallvec![4, 0],
                strides: smallvec::smallvec![1, 4],
                offset: 0,
            },
            Layout {
                shape: Shape::new(),
                strides: Strides::new(),
                offset: 7,
            },
        ];
        for l in &layouts {
            assert_eq!(l.offset_vec().unwrap(), l.offsets().collect::<Vec<_>>());
        }
    }

    #[test]
    fn non_overlapping_layouts_have_distinct_offsets() {
        // The test is the usual sufficient one: interleaved dims whose
        // offsets happen to differ ([4, 2, 3]) count as overlapping.
        let layouts: [(&[usize], &[isize], bool); 8] = [
            (&[2, 3], &[3, 1], true),
            (&[2, 3], &[1, 2], true),
            (&[3, 2], &[1, 1], false),
            (&[4, 3], &[0, 1], false),
            (&[2, 2, 2], &[8, 1, 3], true),
            (&[2, 2, 2], &[4, 2, 3], false),
            (&[2, 2], &[2, 2], false),
            (&[5, 1], &[1, 0], true),
        ];
        for (shape, strides, expected) in layouts {
            let l = Layout {
                shape: Shape::from_slice(shape),
                strides: Strides::from_slice(strides),
                offset: 0,
            };
            assert_eq!(l.is_non_overlapping(), expected, "{shape:?} {strides:?}");
            let mut offsets: Vec<usize> = l.offsets().collect();
            offsets.sort_unstable();
            offsets.dedup();
            if expected {
                assert_eq!(offsets.len(), l.numel(), "{shape:?} {strides:?}");
            }
        }
    }

    #[test]
    fn offsets_follow_strides() {
        let l = Layout {
            shape: Shape::from_slice(&[2, 3]),
            strides: Strides::from_slice(&[1, 2]),
            offset: 1,
        };
        assert_eq!(l.offsets().collect::<Vec<_>>(), vec![1, 3, 5, 2, 4, 6]);
        assert!(!l.is_contiguous());
        assert!(Layout::contiguous(&[2, 3]).is_contiguous());
        let empty = Layout::contiguous(&[0, 3]);
        assert_eq!(empty.offsets().count(), 0);
        let scalar = Layout::contiguous(&[]);
        assert_eq!(scalar.offsets().collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn coalescing_merges_dims_every_layout_walks_as_one() {
        let image = Layout::contiguous(&[8, 64, 16, 16]);
        let per_channel = Layout::contiguous(&[1, 64, 1, 1])
            .broadcast_to(&[8, 64, 16, 16])
            .unwrap();
        let [a, b] = Layout::coalesced([&image, &per_channel]);
        assert_eq!(
            (a.shape.as_slice(), a.strides.as_slice()),
            (&[8, 64, 256][..], &[16384, 256, 1][..])
        );
        assert_eq!(
            (b.shape.as_slice(), b.strides.as_slice()),
            (&[8, 64, 256][..], &[0, 1, 0][..])
        );
        // The same elements in the same order, for every layout.
        assert!(a.offsets().eq(image.offsets()));
        assert!(b.offsets().eq(per_channel.offsets()));
        // A permutation splits where the dims stop following each other;
        // size-1 dims vanish and a layout of one element has no dims left.
        let permuted = Layout::contiguous(&[8, 64, 1, 16, 16]).transposed(0, 1);
        let [p] = Layout::coalesced([&permuted]);
        assert_eq!(
            (p.shape.as_slice(), p.strides.as_slice()),
            (&[64, 8, 256][..], &[256, 16384, 1][..])
        );
        assert!(p.offsets().eq(permuted.offsets()));
        let [one] = Layout::coalesced([&Layout::contiguous(&[1, 1])]);
        assert_eq!(one.ndim(), 0);
        assert_eq!(one.offsets().collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn view_strides_split_and_merge() {
        let l = Layout::contiguous(&[2, 3, 4]);
        assert_eq!(l.view_strides(&[6, 4]).unwrap().as_slice(), &[4, 1]);
        // A transposed layout cannot be flattened without a copy.
        let t = Layout {
            shape: Shape::from_slice(&[3, 2]),
            strides: Strides::from_slice(&[1, 3]),
            offset: 0,
        };
        assert!(t.view_strides(&[6]).is_none());
        // but can have a unit dim inserted.
        assert_eq!(t.view_strides(&[3, 1, 2]).unwrap().as_slice(), &[1, 6, 3]);
    }

    #[test]
    fn dims_wrap() {
        assert_eq!(wrap_dim(-1, 3).unwrap(), 2);
        assert!(wrap_dim(3, 3).is_err());
        assert_eq!(wrap_dim(0, 0).unwrap(), 0);
    }
}
