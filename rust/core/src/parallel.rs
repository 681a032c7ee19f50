//! The thread pool behind parallel kernels and the backward engine, its
//! size, and whether results may depend on scheduling.
//!
//! ferrograd owns its rayon pool instead of using rayon's global one, so
//! `set_num_threads` can resize it and a forked child (a data-loading
//! worker) can start a fresh one: the parent's worker threads do not exist
//! in the child, and a pool that waits for them would hang.

use crate::{bail, Result};
use parking_lot::{Mutex, RwLock};
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Environment variable read when the pool is first needed.
pub const NUM_THREADS_ENV: &str = "FERROGRAD_NUM_THREADS";

/// Workers run nested engine calls (custom Function backwards that call
/// `backward()` themselves) on their own stack, so give them room.
const WORKER_STACK_BYTES: usize = 64 << 20;

struct Pool {
    /// The process that built the pool: a forked child builds its own.
    pid: u32,
    pool: Arc<ThreadPool>,
}

static POOL: RwLock<Option<Pool>> = RwLock::new(None);

/// Set by the bindings: runs its argument with the GIL released when the
/// calling thread holds it. Blocking on the pool while holding the GIL
/// could deadlock with a worker that runs Python code.
static BLOCKING_WAIT: OnceLock<fn(&mut dyn FnMut())> = OnceLock::new();

static DETERMINISTIC: AtomicBool = AtomicBool::new(false);

/// Workers currently kept warm (see [`claim_warm_worker`]).
static WARM_WORKERS: AtomicUsize = AtomicUsize::new(0);

/// How long a worker kept warm goes on looking for work after its last
/// job. A sleeping worker takes tens to hundreds of microseconds to wake
/// (longer on a virtual machine whose idle core has halted), and rayon puts
/// an idle worker to sleep after a few dozen yields; between two kernels of
/// one training step the caller spends about that long in Python, so
/// without this most kernels began with their helper asleep.
const WARM_FOR: Duration = Duration::from_micros(1000);

fn default_num_threads() -> usize {
    std::env::var(NUM_THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn build(threads: usize) -> Arc<ThreadPool> {
    let pool = ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(WORKER_STACK_BYTES)
        .thread_name(|i| format!("ferrograd-worker-{i}"))
        .build()
        .expect("failed to start ferrograd's worker threads");
    Arc::new(pool)
}

/// The pool of this process, built on first use.
pub fn pool() -> Arc<ThreadPool> {
    let pid = std::process::id();
    if let Some(p) = POOL.read().as_ref().filter(|p| p.pid == pid) {
        return p.pool.clone();
    }
    let mut slot = POOL.write();
    match slot.as_ref() {
        Some(p) if p.pid == pid => p.pool.clone(),
        stale => {
            let threads = stale.map_or_else(default_num_threads, |p| p.pool.current_num_threads());
            if let Some(inherited) = slot.take() {
                // Its threads died with the fork; dropping it would signal them.
                std::mem::forget(inherited);
            }
            let pool = build(threads);
            // The parent's warm workers did not survive a fork.
            WARM_WORKERS.store(0, Ordering::Relaxed);
            *slot = Some(Pool {
                pid,
                pool: pool.clone(),
            });
            pool
        }
    }
}

/// Threads that parallel kernels and the engine use.
pub fn num_threads() -> usize {
    match rayon::current_thread_index() {
        Some(_) => rayon::current_num_threads(),
        None => pool().current_num_threads(),
    }
}

/// Whether the calling thread has jobs of its own still queued, which the
/// pool's other threads can take: a worker's own queue, or the jobs counted
/// by [`track_queued_jobs`] on a thread outside the pool.
pub fn has_queued_jobs() -> bool {
    match rayon::current_thread_index() {
        Some(_) => pool().current_thread_has_pending_tasks() == Some(true),
        None => QUEUED_BY_CALLER.with(|q| {
            q.borrow()
                .as_ref()
                .is_some_and(|n| n.load(Ordering::Acquire) > 0)
        }),
    }
}

thread_local! {
    static QUEUED_BY_CALLER: RefCell<Option<Arc<AtomicUsize>>> = const { RefCell::new(None) };
}

/// Makes [`has_queued_jobs`] on this thread (one outside the pool that
/// queues jobs and works beside them) read `queued`, the count of its jobs
/// not yet started, until the returned guard drops.
pub fn track_queued_jobs(queued: Arc<AtomicUsize>) -> impl Drop {
    struct Untrack(Option<Arc<AtomicUsize>>);
    impl Drop for Untrack {
        fn drop(&mut self) {
            let previous = self.0.take();
            QUEUED_BY_CALLER.with(|q| *q.borrow_mut() = previous);
        }
    }
    Untrack(QUEUED_BY_CALLER.with(|q| q.borrow_mut().replace(queued)))
}

/// Replaces the pool with one of `threads` workers. Work already running
/// finishes on the old pool.
pub fn set_num_threads(threads: usize) -> Result<()> {
    if threads == 0 {
        bail!(Runtime, "set_num_threads expects a positive integer");
    }
    let pool = build(threads);
    *POOL.write() = Some(Pool {
        pid: std::process::id(),
        pool,
    });
    Ok(())
}

/// Registers how to release the caller's interpreter lock while it waits
/// for the pool (see [`BLOCKING_WAIT`]). Only the first call takes effect.
pub fn set_blocking_wait(release: fn(&mut dyn FnMut())) {
    let _ = BLOCKING_WAIT.set(release);
}

fn wait_for<R>(run: impl FnOnce() -> R) -> R {
    let Some(release) = BLOCKING_WAIT.get() else {
        return run();
    };
    let mut run = Some(run);
    let mut out = None;
    release(&mut || out = run.take().map(|r| r()));
    out.expect("the blocking-wait hook must call its argument")
}

/// Runs `f` on the pool so that the parallel iterators inside it use the
/// pool's workers. A worker runs it directly.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() {
        return f();
    }
    let pool = pool();
    wait_for(|| pool.install(f))
}

/// `rayon::in_place_scope` on the pool: `f` runs on the calling thread and
/// its spawned jobs on the workers.
pub fn in_place_scope<'scope, R>(f: impl FnOnce(&rayon::Scope<'scope>) -> R) -> R {
    if rayon::current_thread_index().is_some() {
        return rayon::in_place_scope(f);
    }
    let pool = pool();
    wait_for(|| pool.in_place_scope(f))
}

/// Calls `body(i)` once for every `i < count`. The calling thread takes
/// indices from the front and up to `num_threads() - 1` workers from the
/// back, so the caller works instead of sleeping until a worker wakes, and
/// a worker that wakes late simply takes fewer. Taking from opposite ends
/// gives each thread the same part of consecutive kernels' outputs (the
/// caller the first rows of a product and the first chunks of the
/// elementwise op that reads them), which stays in its core's cache: the
/// `tanh` of a 256x256 product's result took 26–28 µs on two threads,
/// 30–32 with the chunks handed out in turn from one end (the latter on a
/// build with LTO, the former without). The caller returns as soon as
/// every index has run: a helper that had not started by then never
/// touches the work, so a kernel never waits for a sleeping worker to wake.
/// What `body(i)` computes never depends on the thread that runs it, so
/// results are the same under any schedule.
pub fn for_each_index(count: usize, body: impl Fn(usize) + Sync) {
    let threads = num_threads();
    let helpers = threads.saturating_sub(1).min(count.saturating_sub(1));
    if helpers == 0 {
        (0..count).for_each(body);
        return;
    }
    let body: &(dyn Fn(usize) + Sync) = &body;
    // SAFETY: only the lifetime is erased. `Shared::help` calls `body`
    // only after joining, which `close` refuses once it has run, and this
    // function returns (ending the borrow) only after `close` has waited
    // for every helper that joined to leave.
    let body: &'static (dyn Fn(usize) + Sync) = unsafe { std::mem::transmute(body) };
    let shared = Arc::new(Shared {
        remaining: Mutex::new(0..count),
        helpers: AtomicUsize::new(0),
        body,
    });
    let spawn = |job: Arc<Shared>| move || job.help();
    let warm = claim_warm_worker(threads - 1);
    match rayon::current_thread_index() {
        Some(_) => {
            (0..helpers).for_each(|_| rayon::spawn(spawn(shared.clone())));
            if warm {
                rayon::spawn(stay_warm_then_release);
            }
        }
        None => {
            let pool = pool();
            (0..helpers).for_each(|_| pool.spawn(spawn(shared.clone())));
            if warm {
                pool.spawn(stay_warm_then_release);
            }
        }
    }
    /// Closes on drop, so that a panicking `body` on this thread cannot
    /// end the borrow while helpers still run it.
    struct CloseOnDrop<'a>(&'a Shared);
    impl Drop for CloseOnDrop<'_> {
        fn drop(&mut self) {
            self.0.close();
        }
    }
    let _close = CloseOnDrop(&shared);
    shared.work();
}

/// Claims one of `limit` places for a worker kept warm: up to `limit`
/// workers at a time look for work for [`WARM_FOR`] after their last job
/// ([`stay_warm_then_release`]), as OpenMP runtimes spin before they
/// sleep, so that the next kernel's helpers start at once.
fn claim_warm_worker(limit: usize) -> bool {
    WARM_WORKERS
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < limit).then_some(n + 1)
        })
        .is_ok()
}

/// The job of a worker kept warm: it runs any job of the pool, and yields
/// its core to the OS scheduler between looks, so a runnable thread
/// (another Python thread) is not kept waiting by it.
fn stay_warm_then_release() {
    stay_warm(WARM_FOR);
    WARM_WORKERS.fetch_sub(1, Ordering::AcqRel);
}

/// Runs the pool's pending jobs on this worker until it has found none for
/// `window`.
fn stay_warm(window: Duration) {
    let mut until = Instant::now() + window;
    loop {
        match rayon::yield_now() {
            Some(rayon::Yield::Executed) => until = Instant::now() + window,
            Some(rayon::Yield::Idle) if Instant::now() < until => std::thread::yield_now(),
            _ => return,
        }
    }
}

/// The state [`for_each_index`] shares with its helper jobs.
struct Shared {
    /// Indices not yet taken: the caller takes the first, helpers the last.
    remaining: Mutex<std::ops::Range<usize>>,
    /// Helpers inside `body`, plus [`CLOSED`] once no more may join.
    helpers: AtomicUsize,
    body: &'static (dyn Fn(usize) + Sync),
}

const CLOSED: usize = 1 << (usize::BITS - 1);

impl Shared {
    /// The caller's loop.
    fn work(&self) {
        loop {
            // A statement of its own, so the lock is not held while `body` runs.
            let Some(i) = self.remaining.lock().next() else {
                return;
            };
            (self.body)(i);
        }
    }

    /// Run by a helper job: joins unless the caller has closed the work.
    fn help(&self) {
        let mut n = self.helpers.load(Ordering::Acquire);
        loop {
            if n & CLOSED != 0 {
                return;
            }
            match self
                .helpers
                .compare_exchange_weak(n, n + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(now) => n = now,
            }
        }
        /// Leaves on drop, so that even a panicking `body` releases the caller.
        struct Leave<'a>(&'a AtomicUsize);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::Release);
            }
        }
        let _leave = Leave(&self.helpers);
        loop {
            let Some(i) = self.remaining.lock().next_back() else {
                return;
            };
            (self.body)(i);
        }
    }

    /// Stops helpers from joining and waits for those inside to finish
    /// their last index (at most one each, as the counter is exhausted).
    fn close(&self) {
        let mut n = self.helpers.fetch_or(CLOSED, Ordering::AcqRel);
        let mut spins = 0u32;
        while n & !CLOSED != 0 {
            // A helper descheduled mid-chunk would make pure spinning burn
            // its time slice: spin briefly, then yield the core.
            if spins < 64 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
            n = self.helpers.load(Ordering::Acquire);
        }
    }
}

/// Calls `body(start, chunk)` for consecutive chunks of `xs` of `chunk_len`
/// elements (the last may be shorter), `start` being the index of the
/// chunk's first element, spread over threads as [`for_each_index`] does.
pub fn for_each_chunk_mut<T: Send>(
    xs: &mut [T],
    chunk_len: usize,
    body: impl Fn(usize, &mut [T]) + Sync,
) {
    // An empty output (a batch of zero images) has nothing to split, and
    // its chunk length may be zero.
    if xs.is_empty() {
        return;
    }
    for_each_item_mut(xs.chunks_mut(chunk_len), |i, chunk| {
        body(i * chunk_len, chunk)
    });
}

/// Calls `body(i, &mut items[i])` for every item, spread over threads as
/// [`for_each_index`] does (items are usually disjoint pieces of outputs).
pub fn for_each_item_mut<I: Send>(
    items: impl IntoIterator<Item = I>,
    body: impl Fn(usize, &mut I) + Sync,
) {
    let items: Vec<Mutex<I>> = items.into_iter().map(Mutex::new).collect();
    for_each_index(items.len(), |i| body(i, &mut items[i].lock()));
}

/// [`for_each_chunk_mut`] for work whose results do not depend on where
/// chunks split (elementwise kernels): chunks of at least `min_len`, about
/// four per thread, so that each thread streams long contiguous runs.
pub fn for_each_span_mut<T: Send>(
    xs: &mut [T],
    min_len: usize,
    body: impl Fn(usize, &mut [T]) + Sync,
) {
    for_each_chunk_mut(xs, span_len(xs.len(), min_len), body);
}

/// The chunk length [`for_each_span_mut`] splits `len` elements into: about
/// four chunks per thread, each a multiple of `min_len` long.
pub fn span_len(len: usize, min_len: usize) -> usize {
    len.div_ceil(4 * num_threads())
        .next_multiple_of(min_len)
        .max(min_len)
}

/// `f(i)` for every `i < count`, in index order, computed as
/// [`for_each_span_mut`] does: threads take runs of indices, so that cheap
/// calls do not each pay for a shared counter.
pub fn map_indices<R: Send + Copy>(
    count: usize,
    f: impl Fn(usize) -> R + Sync,
) -> crate::Result<Vec<R>> {
    let mut out = crate::tensor::storage::try_buffer(count)?;
    for_each_span_mut(&mut out.spare_capacity_mut()[..count], 1, |start, span| {
        for (slot, i) in span.iter_mut().zip(start..) {
            slot.write(f(i));
        }
    });
    // SAFETY: the spans cover the first `count` slots, each written once.
    unsafe { out.set_len(count) };
    Ok(out)
}

/// `use_deterministic_algorithms`: when on, every backward gives bitwise
/// identical results whatever the thread count and scheduling.
pub fn set_deterministic(on: bool) {
    DETERMINISTIC.store(on, Ordering::Relaxed);
}

pub fn deterministic() -> bool {
    DETERMINISTIC.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_runs_on_a_worker_of_the_pool() {
        let index = install(rayon::current_thread_index);
        assert!(index.is_some());
        let threads = install(rayon::current_num_threads);
        assert_eq!(threads, num_threads());
    }

    #[test]
    fn every_index_runs_once_from_any_thread() {
        for count in [0, 1, 2, 3, 1000] {
            let hits: Vec<AtomicUsize> = (0..count).map(|_| AtomicUsize::new(0)).collect();
            for_each_index(count, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
            // The same from inside a worker, as nested engine work does.
            install(|| {
                for_each_index(count, |i| {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                })
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 2));
        }
    }

    /// Occupies `count` workers until the returned guard is dropped.
    struct Blocked(Vec<std::sync::mpsc::Sender<()>>);

    impl Drop for Blocked {
        fn drop(&mut self) {
            for release in &self.0 {
                let _ = release.send(());
            }
        }
    }

    fn block_workers(count: usize) -> Blocked {
        let busy = Arc::new(AtomicUsize::new(0));
        let releases = (0..count)
            .map(|_| {
                let (release, blocked) = std::sync::mpsc::channel::<()>();
                let busy = busy.clone();
                pool().spawn(move || {
                    busy.fetch_add(1, Ordering::SeqCst);
                    let _ = blocked.recv();
                });
                release
            })
            .collect();
        while busy.load(Ordering::SeqCst) < count {
            std::thread::yield_now();
        }
        Blocked(releases)
    }

    #[test]
    fn the_caller_finishes_alone_while_every_worker_is_busy() {
        let _blocked = block_workers(num_threads());
        let sum = AtomicUsize::new(0);
        for_each_index(1000, |i| {
            sum.fetch_add(i, Ordering::Relaxed);
        });
        assert_eq!(sum.load(Ordering::Relaxed), 999 * 1000 / 2);
    }

    #[test]
    fn the_caller_takes_indices_from_the_front() {
        let _blocked = block_workers(num_threads());
        let order = Mutex::new(Vec::new());
        for_each_index(50, |i| order.lock().push(i));
        assert_eq!(order.into_inner(), (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn helpers_take_indices_from_the_back() {
        let count = 8;
        let caller = std::thread::current().id();
        let by_caller = Mutex::new(Vec::new());
        let by_helpers = Mutex::new(Vec::new());
        // The caller's first index waits for a helper to take one, and the
        // helper's first waits for the caller to take another, so that both
        // take indices while the other has some left (each wait is bounded).
        let wait_until = |done: &dyn Fn() -> bool| {
            let deadline = Instant::now() + Duration::from_secs(5);
            while !done() && Instant::now() < deadline {
                std::thread::yield_now();
            }
        };
        for_each_index(count, |i| {
            if std::thread::current().id() == caller {
                by_caller.lock().push(i);
                if i == 0 {
                    wait_until(&|| !by_helpers.lock().is_empty());
                }
            } else {
                let first = {
                    let mut taken = by_helpers.lock();
                    taken.push(i);
                    taken.len() == 1
                };
                if first {
                    wait_until(&|| by_caller.lock().len() >= 2);
                }
            }
        });
        let (mut by_caller, mut by_helpers) = (by_caller.into_inner(), by_helpers.into_inner());
        by_caller.sort_unstable();
        by_helpers.sort_unstable();
        let split = by_caller.len();
        assert_eq!(by_caller, (0..split).collect::<Vec<_>>());
        assert_eq!(by_helpers, (split..count).collect::<Vec<_>>());
    }

    #[test]
    fn chunks_cover_the_slice_in_order() {
        let mut xs = vec![0usize; 10_001];
        for_each_chunk_mut(&mut xs, 64, |start, chunk| {
            for (k, x) in chunk.iter_mut().enumerate() {
                *x = start + k;
            }
        });
        assert!(xs.iter().enumerate().all(|(i, &x)| i == x));
        xs.fill(0);
        for_each_span_mut(&mut xs, 64, |start, chunk| {
            assert!(chunk.len() >= 64 || start + chunk.len() == 10_001);
            for (k, x) in chunk.iter_mut().enumerate() {
                *x = start + k;
            }
        });
        assert!(xs.iter().enumerate().all(|(i, &x)| i == x));
        assert_eq!(map_indices(5, |i| i * i).unwrap(), vec![0, 1, 4, 9, 16]);
    }

    #[test]
    fn warm_workers_are_bounded_and_stand_down() {
        for _ in 0..100 {
            for_each_index(8, |_| {});
            assert!(WARM_WORKERS.load(Ordering::Acquire) < num_threads());
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        while WARM_WORKERS.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(WARM_WORKERS.load(Ordering::Acquire), 0);
    }

    #[test]
    fn a_warm_worker_runs_jobs_until_it_finds_none_for_its_window() {
        let ran = Arc::new(AtomicBool::new(false));
        let window = Duration::from_millis(30);
        let flag = ran.clone();
        let waited = install(move || {
            let start = Instant::now();
            rayon::spawn(move || flag.store(true, Ordering::Release));
            stay_warm(window);
            start.elapsed()
        });
        assert!(waited >= window);
        let deadline = Instant::now() + Duration::from_secs(20);
        while !ran.load(Ordering::Acquire) && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert!(ran.load(Ordering::Acquire));
        // Outside the pool there is nothing to keep warm.
        let start = Instant::now();
        stay_warm(Duration::from_secs(5));
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_caller_sees_the_jobs_it_tracks() {
        assert!(!has_queued_jobs());
        let queued = Arc::new(AtomicUsize::new(1));
        {
            let _tracking = track_queued_jobs(queued.clone());
            assert!(has_queued_jobs());
            queued.store(0, Ordering::Release);
            assert!(!has_queued_jobs());
            queued.store(2, Ordering::Release);
        }
        assert!(!has_queued_jobs());
    }

    #[test]
    fn a_worker_sees_its_own_queued_jobs() {
        assert!(!has_queued_jobs());
        // With every other worker blocked, nothing steals the job queued
        // below.
        let blocked = block_workers(num_threads() - 1);
        let (queued, drained) = install(|| {
            rayon::spawn(|| {});
            let queued = has_queued_jobs();
            while rayon::yield_local() == Some(rayon::Yield::Executed) {}
            (queued, !has_queued_jobs())
        });
        drop(blocked);
        assert!(queued && drained);
    }

    #[test]
    fn zero_threads_is_an_error() {
        let err = set_num_threads(0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "set_num_threads expects a positive integer"
        );
    }
}
