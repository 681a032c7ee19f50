//! Reference-counted element buffers shared by every view of a tensor.
//!
//! A buffer is either owned (a `Vec` of the element type, or one element
//! held in the storage itself) or borrowed from a foreign owner such as a
//! NumPy array, which `from_numpy` shares. A foreign
//! buffer may be read-only (a non-writable array, a read-only `mmap`):
//! writing to it is then an error rather than a fault. Access goes
//! through a `RwLock`, so concurrent readers never race with an in-place
//! writer; raw pointers handed to NumPy (`Tensor.numpy()`) share the memory
//! without the lock, exactly as PyTorch's do.
//!
//! A storage may also reinterpret another's buffer as a related element type
//! (a complex buffer as its real and imaginary parts, for `Tensor.real` and
//! `view_as_real`): it then shares that buffer and its lock.

use super::dtype::{DType, Element};
use crate::{Error, Result};
use parking_lot::{
    MappedRwLockReadGuard, MappedRwLockWriteGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};
use std::any::Any;
use std::cell::UnsafeCell;
use std::ptr::NonNull;

/// An empty `Vec` with room for `len` elements, or PyTorch's out-of-memory
/// `RuntimeError`. Kernels allocate the buffers that a tensor's shape sizes
/// through here: the global allocator aborts the process on failure, while
/// `try_reserve_exact` gets the null back and reports it. On an empty `Vec`
/// it costs what `with_capacity` does.
pub fn try_buffer<T>(len: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| out_of_memory::<T>(len))?;
    Ok(v)
}

/// `items`, `len` of them, collected into a buffer allocated as
/// [`try_buffer`] does.
pub fn try_collect<T>(len: usize, items: impl IntoIterator<Item = T>) -> Result<Vec<T>> {
    let mut v = try_buffer(len)?;
    v.extend(items);
    Ok(v)
}

/// `len` copies of `value`, allocated as [`try_buffer`] does. A value of
/// all-zero bytes takes zeroed memory, as `vec![value; len]` does: fresh
/// pages come zeroed, so large zero buffers are never written twice.
pub fn try_filled<T: Element>(value: T, len: usize) -> Result<Vec<T>> {
    // SAFETY: every element type is plain data without padding (bool,
    // integers, floats, pairs of floats), so its bytes may be read.
    let bytes = unsafe {
        std::slice::from_raw_parts((&value as *const T).cast::<u8>(), std::mem::size_of::<T>())
    };
    if len == 0 || bytes.iter().any(|&b| b != 0) {
        let mut v = try_buffer(len)?;
        v.resize(len, value);
        return Ok(v);
    }
    let layout = std::alloc::Layout::array::<T>(len).map_err(|_| out_of_memory::<T>(len))?;
    // SAFETY: `layout` has a non-zero size (len > 0 and no element type is
    // zero-sized).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return Err(out_of_memory::<T>(len));
    }
    // SAFETY: `ptr` comes from the global allocator with the layout `Vec`
    // uses for `len` elements of `T`, and all-zero bytes are `value`, a
    // valid `T`, in every one of them.
    Ok(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

fn out_of_memory<T>(len: usize) -> Error {
    // A byte count past `usize` is reported saturated, as it cannot be
    // allocated either way.
    let bytes = len.saturating_mul(std::mem::size_of::<T>());
    Error::Runtime(format!(
        "DefaultCPUAllocator: not enough memory: you tried to allocate {bytes} bytes."
    ))
}

/// What keeps a buffer's memory alive: a `Vec` of the element type (held
/// unboxed, saving an allocation per tensor), one element held in place
/// (saving the `Vec`'s allocation for a number), or a foreign owner.
pub enum Owner {
    Bool(Vec<bool>),
    UInt8(Vec<u8>),
    Int8(Vec<i8>),
    Int16(Vec<i16>),
    Int32(Vec<i32>),
    Int64(Vec<i64>),
    Float32(Vec<f32>),
    Float64(Vec<f64>),
    Complex64(Vec<num_complex::Complex32>),
    Complex128(Vec<num_complex::Complex64>),
    Foreign(Box<dyn Any + Send + Sync>),
    Element(OneElement),
}

/// Room for one element of any dtype (a `complex128` is the largest),
/// aligned for each (8 bytes: more would take the allocator's slower path
/// for over-aligned blocks). The cell lets a pointer handed out (to NumPy)
/// write it.
#[repr(C, align(8))]
pub struct OneElement(UnsafeCell<[u8; 16]>);

struct Buffer {
    /// The memory, but for `Owner::Element`, whose address moves with the
    /// storage and is read from the owner itself (see `Buffer::base`).
    ptr: NonNull<u8>,
    /// Size in bytes, so that storages of different element types can share it.
    bytes: usize,
    _owner: Owner,
}

impl Buffer {
    fn base(&self) -> *mut u8 {
        match &self._owner {
            Owner::Element(cell) => cell.0.get().cast(),
            _ => self.ptr.as_ptr(),
        }
    }
}

// SAFETY: the buffer is plain memory owned by `_owner`, which is Send + Sync
// but for the cell of `Owner::Element`, plain bytes; every access is
// serialised by the RwLock in `Storage`.
unsafe impl Send for Buffer {}
// SAFETY: as above; shared access only hands out `&[T]` under a read lock.
unsafe impl Sync for Buffer {}

pub struct Storage {
    buf: BufferRef,
    dtype: DType,
    /// False for foreign memory that its owner marks read-only. Fixed at
    /// creation, so it is read without the lock.
    writable: bool,
}

/// The buffer itself, or the storage whose buffer is reinterpreted.
enum BufferRef {
    Own(RwLock<Buffer>),
    Shared(std::sync::Arc<Storage>),
}

impl Storage {
    pub fn from_vec<T: Element>(mut v: Vec<T>) -> Storage {
        let bytes = std::mem::size_of_val(v.as_slice());
        let ptr = NonNull::new(v.as_mut_ptr() as *mut u8).expect("Vec pointer is never null");
        Storage {
            buf: BufferRef::Own(RwLock::new(Buffer {
                ptr,
                bytes,
                _owner: T::into_owner(v),
            })),
            dtype: T::DTYPE,
            writable: true,
        }
    }

    /// A storage of the one element `value`, held in the storage itself: a
    /// number's result costs no allocation but its tensor's. Its address is
    /// fixed once the storage is in its `Arc`, as every tensor's is.
    pub fn from_element<T: Element>(value: T) -> Storage {
        const {
            assert!(std::mem::size_of::<T>() <= 16 && std::mem::align_of::<T>() <= 8);
        }
        let cell = OneElement(UnsafeCell::new([0; 16]));
        // SAFETY: the cell is 16 bytes aligned to 8, room for any `T`
        // (checked above), and nothing else refers to it yet.
        unsafe { cell.0.get().cast::<T>().write(value) };
        Storage {
            buf: BufferRef::Own(RwLock::new(Buffer {
                ptr: NonNull::dangling(),
                bytes: std::mem::size_of::<T>(),
                _owner: Owner::Element(cell),
            })),
            dtype: T::DTYPE,
            writable: true,
        }
    }

    /// Wraps memory owned by `owner` (e.g. a NumPy array) without copying.
    /// A storage that is not `writable` refuses every `write`.
    ///
    /// # Safety
    /// `ptr` must point to `len` initialised, aligned elements of `dtype` that
    /// stay valid and unmoved for as long as `owner` is alive, and, when
    /// `writable`, may be written.
    pub unsafe fn from_foreign(
        ptr: *mut u8,
        len: usize,
        dtype: DType,
        owner: Box<dyn Any + Send + Sync>,
        writable: bool,
    ) -> Storage {
        let ptr = NonNull::new(ptr).unwrap_or(NonNull::dangling());
        Storage {
            buf: BufferRef::Own(RwLock::new(Buffer {
                ptr,
                bytes: len * dtype.itemsize(),
                _owner: Owner::Foreign(owner),
            })),
            dtype,
            writable,
        }
    }

    /// `storage`'s buffer seen as elements of `dtype`, sharing its memory and
    /// lock. The buffer must be aligned for `dtype`, and bool buffers are
    /// seen only as bool: a bool holds 0 or 1, and another type could read
    /// or write any other byte.
    pub fn reinterpret(storage: &std::sync::Arc<Storage>, dtype: DType) -> Storage {
        assert!(
            storage.may_reinterpret_as(dtype),
            "storage reinterpreted as an element type it cannot hold"
        );
        Storage {
            buf: BufferRef::Shared(storage.clone()),
            dtype,
            writable: storage.writable,
        }
    }

    /// Whether [`Storage::reinterpret`] may see this buffer as `dtype`.
    pub fn may_reinterpret_as(&self, dtype: DType) -> bool {
        dtype == self.dtype
            || (dtype != DType::Bool
                && self.dtype != DType::Bool
                && self.data_ptr() % dtype.alignment() == 0)
    }

    fn lock(&self) -> &RwLock<Buffer> {
        match &self.buf {
            BufferRef::Own(b) => b,
            BufferRef::Shared(s) => s.lock(),
        }
    }

    /// Whether two storages share one buffer (the same or reinterpreted).
    pub fn same_buffer(&self, other: &Storage) -> bool {
        self.buffer_id() == other.buffer_id()
    }

    /// Identifies the buffer (and its lock) across reinterpretations: locks
    /// on several storages are taken in this order.
    pub fn buffer_id(&self) -> usize {
        self.lock() as *const RwLock<Buffer> as usize
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn len(&self) -> usize {
        self.lock().read().bytes / self.dtype.itemsize()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the memory is this storage's own allocation, neither another
    /// storage's buffer reinterpreted nor memory lent by a foreign owner:
    /// whoever holds the only handle to it may write it unseen.
    pub fn owns_memory(&self) -> bool {
        match &self.buf {
            BufferRef::Own(b) => !matches!(b.read()._owner, Owner::Foreign(_)),
            BufferRef::Shared(_) => false,
        }
    }

    /// Whether the memory may be written: false for a read-only foreign buffer.
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// Address of the first element, for `data_ptr` and zero-copy NumPy views.
    pub fn data_ptr(&self) -> usize {
        self.lock().read().base() as usize
    }

    pub fn read<T: Element>(&self) -> MappedRwLockReadGuard<'_, [T]> {
        assert_eq!(
            T::DTYPE,
            self.dtype,
            "storage read with the wrong element type"
        );
        // Recursive: one op may read the same storage twice (`x * x`).
        RwLockReadGuard::map(self.lock().read_recursive(), |b| {
            // SAFETY: the dtype check above guarantees `ptr` holds
            // `bytes / size_of::<T>()` aligned elements of `T` (see
            // `from_vec`/`from_foreign`/`reinterpret`); the read lock excludes
            // writers for the guard's lifetime.
            unsafe {
                std::slice::from_raw_parts(b.base() as *const T, b.bytes / std::mem::size_of::<T>())
            }
        })
    }

    /// Exclusive access to the elements, or an error for read-only memory.
    pub fn write<T: Element>(&self) -> Result<MappedRwLockWriteGuard<'_, [T]>> {
        assert_eq!(
            T::DTYPE,
            self.dtype,
            "storage write with the wrong element type"
        );
        if !self.writable {
            return Err(Error::Runtime(
                "this tensor's memory is read-only (it shares a non-writable NumPy array or buffer), so it cannot be written in place; write to a copy (`x.clone()`), or make the array writable before converting it".into(),
            ));
        }
        Ok(RwLockWriteGuard::map(self.lock().write(), |b| {
            // SAFETY: as in `read`; the write lock makes this the only access.
            unsafe {
                std::slice::from_raw_parts_mut(
                    b.base() as *mut T,
                    b.bytes / std::mem::size_of::<T>(),
                )
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_storage_reads_back_and_writes() {
        let s = Storage::from_vec(vec![1.0f32, 2.0, 3.0]);
        assert_eq!(&*s.read::<f32>(), &[1.0, 2.0, 3.0]);
        s.write::<f32>().unwrap()[1] = 5.0;
        assert_eq!(s.read::<f32>()[1], 5.0);
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn foreign_storage_shares_memory() {
        let mut backing = vec![1i64, 2, 3];
        let ptr = backing.as_mut_ptr() as *mut u8;
        // SAFETY: `backing` is moved into the owner box, which keeps the heap
        // allocation alive and unmoved.
        let s = unsafe { Storage::from_foreign(ptr, 3, DType::Int64, Box::new(backing), true) };
        s.write::<i64>().unwrap()[0] = 7;
        assert_eq!(&*s.read::<i64>(), &[7, 2, 3]);
        assert!(s.is_writable());
    }

    #[test]
    fn read_only_foreign_storage_refuses_writes() {
        let backing = vec![1.0f64, 2.0];
        let ptr = backing.as_ptr() as *mut u8;
        // SAFETY: `backing` is moved into the owner box, which keeps the heap
        // allocation alive and unmoved; the storage is read-only, so the
        // pointer is never written through.
        let s = unsafe { Storage::from_foreign(ptr, 2, DType::Float64, Box::new(backing), false) };
        let err = s
            .write::<f64>()
            .expect_err("read-only memory must refuse writes");
        assert!(err.to_string().contains("read-only"));
        assert_eq!(&*s.read::<f64>(), &[1.0, 2.0]);
        // A reinterpretation shares the buffer and so its read-only flag.
        let real = Storage::reinterpret(&std::sync::Arc::new(s), DType::Float64);
        assert!(!real.is_writable() && real.write::<f64>().is_err());
    }

    #[test]
    fn reinterpreted_storage_shares_the_buffer() {
        let c = std::sync::Arc::new(Storage::from_vec(vec![
            num_complex::Complex64::new(1.0, 2.0),
            num_complex::Complex64::new(3.0, 4.0),
        ]));
        let r = Storage::reinterpret(&c, DType::Float64);
        assert_eq!(r.len(), 4);
        assert_eq!(&*r.read::<f64>(), &[1.0, 2.0, 3.0, 4.0]);
        r.write::<f64>().unwrap()[3] = -4.0;
        assert_eq!(c.read::<num_complex::Complex64>()[1].im, -4.0);
        assert!(r.same_buffer(&c));
        assert_eq!(r.data_ptr(), c.data_ptr());
    }

    #[test]
    fn impossible_buffers_are_errors_not_aborts() {
        let msg = |r: Result<Vec<f64>>| r.expect_err("must fail").to_string();
        // Too many bytes for the address space, and a byte count that overflows.
        assert_eq!(
            msg(try_buffer(usize::MAX / 16)),
            format!(
                "DefaultCPUAllocator: not enough memory: you tried to allocate {} bytes.",
                usize::MAX / 16 * 8
            )
        );
        assert!(msg(try_filled(0.0, usize::MAX / 4)).contains("not enough memory"));
        // Just below `isize::MAX`, where a cached size class would round past it.
        assert!(msg(try_filled(0.0, isize::MAX as usize / 8)).contains("not enough memory"));
        assert!(try_buffer::<u8>(isize::MAX as usize).is_err());
        assert_eq!(try_collect(3, 0..3).unwrap(), [0, 1, 2]);
        let v = try_filled(2.5f32, 5).unwrap();
        assert_eq!(v, [2.5; 5]);
        assert!(try_buffer::<u8>(7).unwrap().capacity() >= 7);
    }

    #[test]
    fn one_element_is_held_in_place_for_every_dtype() {
        fn check<T: Element>(value: T, other: T) {
            let s = std::sync::Arc::new(Storage::from_element(value));
            assert_eq!((s.dtype(), s.len()), (T::DTYPE, 1));
            assert_eq!(&*s.read::<T>(), &[value]);
            assert_eq!(s.data_ptr() % std::mem::align_of::<T>(), 0);
            let address = s.data_ptr();
            s.write::<T>().unwrap()[0] = other;
            assert_eq!(s.read::<T>()[0], other);
            assert_eq!(s.data_ptr(), address);
            assert!(s.owns_memory() && s.is_writable());
        }
        check(true, false);
        check(7u8, 9);
        check(-3i8, 4);
        check(-300i16, 5);
        check(1 << 20i32, -1);
        check(i64::MIN, i64::MAX);
        check(1.5f32, -0.25);
        check(f64::MAX, f64::MIN_POSITIVE);
        check(num_complex::Complex32::new(1.0, -2.0), Default::default());
        check(
            num_complex::Complex64::new(f64::EPSILON, -3.0),
            num_complex::Complex64::new(4.0, 5.0),
        );
        // Its parts, reinterpreted, share its memory.
        let c = std::sync::Arc::new(Storage::from_element(num_complex::Complex64::new(1.0, 2.0)));
        let r = Storage::reinterpret(&c, DType::Float64);
        r.write::<f64>().unwrap()[1] = 8.0;
        assert_eq!(c.read::<num_complex::Complex64>()[0].im, 8.0);
        assert!(!r.owns_memory());
    }

    #[test]
    #[should_panic(expected = "wrong element type")]
    fn wrong_type_is_caught() {
        let s = Storage::from_vec(vec![1.0f32]);
        let _ = s.read::<f64>();
    }
}
