//! Reference-counted element buffers shared by every view of a tensor.
//!
//! A buffer is either owned (a `Vec` of the element type) or borrowed from a
//! foreign owner such as a NumPy array, which `from_numpy` shares. Access goes
//! through a `RwLock`, so concurrent readers never race with an in-place
//! writer; raw pointers handed to NumPy (`Tensor.numpy()`) share the memory
//! without the lock, exactly as PyTorch's do.

use super::dtype::{DType, Element};
use parking_lot::{
    MappedRwLockReadGuard, MappedRwLockWriteGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};
use std::any::Any;
use std::ptr::NonNull;

/// What keeps a buffer's memory alive: a `Vec` of the element type (held
/// unboxed, saving an allocation per tensor) or a foreign owner.
pub enum Owner {
    Bool(Vec<bool>),
    Int64(Vec<i64>),
    Float32(Vec<f32>),
    Float64(Vec<f64>),
    Complex64(Vec<num_complex::Complex32>),
    Complex128(Vec<num_complex::Complex64>),
    Foreign(Box<dyn Any + Send + Sync>),
}

struct Buffer {
    ptr: NonNull<u8>,
    len: usize,
    _owner: Owner,
}

// SAFETY: the buffer is plain memory owned by `_owner`, which is Send + Sync;
// every access is serialised by the RwLock in `Storage`.
unsafe impl Send for Buffer {}
// SAFETY: as above; shared access only hands out `&[T]` under a read lock.
unsafe impl Sync for Buffer {}

pub struct Storage {
    buf: RwLock<Buffer>,
    dtype: DType,
}

impl Storage {
    pub fn from_vec<T: Element>(mut v: Vec<T>) -> Storage {
        let len = v.len();
        let ptr = NonNull::new(v.as_mut_ptr() as *mut u8).expect("Vec pointer is never null");
        Storage {
            buf: RwLock::new(Buffer {
                ptr,
                len,
                _owner: T::into_owner(v),
            }),
            dtype: T::DTYPE,
        }
    }

    /// Wraps memory owned by `owner` (e.g. a NumPy array) without copying.
    ///
    /// # Safety
    /// `ptr` must point to `len` initialised, aligned elements of `dtype` that
    /// stay valid and unmoved for as long as `owner` is alive.
    pub unsafe fn from_foreign(
        ptr: *mut u8,
        len: usize,
        dtype: DType,
        owner: Box<dyn Any + Send + Sync>,
    ) -> Storage {
        let ptr = NonNull::new(ptr).unwrap_or(NonNull::dangling());
        Storage {
            buf: RwLock::new(Buffer {
                ptr,
                len,
                _owner: Owner::Foreign(owner),
            }),
            dtype,
        }
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn len(&self) -> usize {
        self.buf.read().len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Address of the first element, for `data_ptr` and zero-copy NumPy views.
    pub fn data_ptr(&self) -> usize {
        self.buf.read().ptr.as_ptr() as usize
    }

    pub fn read<T: Element>(&self) -> MappedRwLockReadGuard<'_, [T]> {
        assert_eq!(
            T::DTYPE,
            self.dtype,
            "storage read with the wrong element type"
        );
        // Recursive: one op may read the same storage twice (`x * x`).
        RwLockReadGuard::map(self.buf.read_recursive(), |b| {
            // SAFETY: the dtype check above guarantees `ptr` holds `len`
            // elements of `T` (see `from_vec`/`from_foreign`); the read lock
            // excludes writers for the guard's lifetime.
            unsafe { std::slice::from_raw_parts(b.ptr.as_ptr() as *const T, b.len) }
        })
    }

    pub fn write<T: Element>(&self) -> MappedRwLockWriteGuard<'_, [T]> {
        assert_eq!(
            T::DTYPE,
            self.dtype,
            "storage write with the wrong element type"
        );
        RwLockWriteGuard::map(self.buf.write(), |b| {
            // SAFETY: as in `read`; the write lock makes this the only access.
            unsafe { std::slice::from_raw_parts_mut(b.ptr.as_ptr() as *mut T, b.len) }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_storage_reads_back_and_writes() {
        let s = Storage::from_vec(vec![1.0f32, 2.0, 3.0]);
        assert_eq!(&*s.read::<f32>(), &[1.0, 2.0, 3.0]);
        s.write::<f32>()[1] = 5.0;
        assert_eq!(s.read::<f32>()[1], 5.0);
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn foreign_storage_shares_memory() {
        let mut backing = vec![1i64, 2, 3];
        let ptr = backing.as_mut_ptr() as *mut u8;
        // SAFETY: `backing` is moved into the owner box, which keeps the heap
        // allocation alive and unmoved.
        let s = unsafe { Storage::from_foreign(ptr, 3, DType::Int64, Box::new(backing)) };
        s.write::<i64>()[0] = 7;
        assert_eq!(&*s.read::<i64>(), &[7, 2, 3]);
    }

    #[test]
    #[should_panic(expected = "wrong element type")]
    fn wrong_type_is_caught() {
        let s = Storage::from_vec(vec![1.0f32]);
        let _ = s.read::<f64>();
    }
}
