//! Releasing and retaking the GIL around engine and kernel work.
//!
//! Parallel kernels wait for ferrograd's pool, and pool workers may run
//! Python code (custom Function backwards, hooks) that needs the GIL. A
//! thread must therefore never wait for the pool while holding the GIL.
//! The bindings release it for large work up front; for the rest, the core
//! calls [`release_while_waiting`] before it blocks. A thread-local flag
//! tells whether this thread already released the GIL through [`detach`],
//! because the limited C API cannot ask the interpreter cheaply.

use pyo3::prelude::*;
use std::cell::Cell;

thread_local! {
    static DETACHED: Cell<bool> = const { Cell::new(false) };
}

/// Sets the flag for the duration of a call and restores it afterwards.
struct FlagGuard(bool);

impl FlagGuard {
    fn set(detached: bool) -> Self {
        FlagGuard(DETACHED.replace(detached))
    }
}

impl Drop for FlagGuard {
    fn drop(&mut self) {
        DETACHED.set(self.0);
    }
}

/// `py.detach(f)`, recording that this thread does not hold the GIL.
pub fn detach<R: Send>(py: Python<'_>, f: impl FnOnce() -> R + Send) -> R {
    py.detach(|| {
        let _flag = FlagGuard::set(true);
        f()
    })
}

/// `Python::attach(f)` for Python code run from inside the engine.
pub fn attach<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> R {
    Python::attach(|py| {
        let _flag = FlagGuard::set(false);
        f(py)
    })
}

/// The core's blocking-wait hook: runs `wait` with the GIL released.
pub fn release_while_waiting(wait: &mut dyn FnMut()) {
    if DETACHED.get() {
        return wait();
    }
    // Only reached from inside a binding call, so the GIL is held and
    // attaching is a counter increment.
    struct OnThisThread<'a>(&'a mut dyn FnMut());
    // SAFETY: `Python::detach` runs its closure on the calling thread, so
    // the borrowed closure never crosses threads.
    unsafe impl Send for OnThisThread<'_> {}
    impl OnThisThread<'_> {
        fn run(self) {
            (self.0)()
        }
    }
    let wait = OnThisThread(wait);
    Python::attach(|py| detach(py, move || wait.run()));
}
