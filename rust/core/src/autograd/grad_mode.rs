//! Per-thread grad mode, as PyTorch keeps it: `no_grad` in one thread does
//! not affect another, and engine workers set it per node.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    static GRAD_ENABLED: Cell<bool> = const { Cell::new(true) };
    static INFERENCE_MODE: Cell<bool> = const { Cell::new(false) };
}

pub fn is_grad_enabled() -> bool {
    GRAD_ENABLED.with(|g| g.get())
}

pub fn set_grad_enabled(enabled: bool) {
    GRAD_ENABLED.with(|g| g.set(enabled));
}

/// How many threads are in inference mode: while none is, every tensor
/// made skips the look at its thread's flag.
static INFERENCE_THREADS: AtomicUsize = AtomicUsize::new(0);

pub fn is_inference_mode_enabled() -> bool {
    INFERENCE_THREADS.load(Ordering::Relaxed) != 0 && INFERENCE_MODE.with(|g| g.get())
}

pub fn set_inference_mode(enabled: bool) {
    match (INFERENCE_MODE.replace(enabled), enabled) {
        (false, true) => INFERENCE_THREADS.fetch_add(1, Ordering::Relaxed),
        (true, false) => INFERENCE_THREADS.fetch_sub(1, Ordering::Relaxed),
        _ => 0,
    };
}

/// Sets grad mode for a scope and restores the previous mode on drop.
pub struct GradModeGuard {
    previous: bool,
}

impl GradModeGuard {
    pub fn new(enabled: bool) -> GradModeGuard {
        GradModeGuard {
            previous: GRAD_ENABLED.replace(enabled),
        }
    }
}

impl Drop for GradModeGuard {
    fn drop(&mut self) {
        set_grad_enabled(self.previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grad_mode_is_per_thread_and_restored() {
        {
            let _g = GradModeGuard::new(false);
            assert!(!is_grad_enabled());
            std::thread::spawn(|| assert!(is_grad_enabled()))
                .join()
                .unwrap();
        }
        assert!(is_grad_enabled());
    }

    #[test]
    fn inference_mode_is_per_thread_while_another_thread_is_in_it() {
        set_inference_mode(true);
        set_inference_mode(true);
        assert!(is_inference_mode_enabled());
        std::thread::spawn(|| {
            assert!(!is_inference_mode_enabled());
            set_inference_mode(true);
            assert!(is_inference_mode_enabled());
            set_inference_mode(false);
        })
        .join()
        .unwrap();
        assert!(is_inference_mode_enabled());
        set_inference_mode(false);
        assert!(!is_inference_mode_enabled());
    }
}
