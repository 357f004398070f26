//! The scheduling policy of the server's own threads (`--batch-scheduling`).
//!
//! Python models run in processes of their own, and a request to one passes
//! between them and the server's threads (HTTP worker, instance thread,
//! pump). On a busy machine each wake-up of a server thread used to preempt
//! whichever model process ran on that CPU, and a model process is what
//! bounds a Python model's throughput. Under Linux's `SCHED_BATCH` policy a
//! thread still gets its fair share of the CPUs, but its wake-ups do not
//! preempt the running thread: it runs when a CPU frees up or the running
//! thread's slice ends. The model processes keep `SCHED_OTHER` (the Python
//! backend starts them so). Measured in `docs/design/python-backend.md` §7.3.

use std::io;

/// Puts the calling thread, and every thread it starts from now on, under
/// `SCHED_BATCH` (the threads started before keep their policy).
pub fn use_batch_policy() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 names the calling thread; `param` is a valid sched_param.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calling thread's scheduling policy.
    fn policy() -> libc::c_int {
        // SAFETY: a plain query; pid 0 names the calling thread.
        unsafe { libc::sched_getscheduler(0) }
    }

    #[test]
    fn threads_started_after_it_inherit_the_policy() {
        let inherited = std::thread::spawn(|| {
            use_batch_policy().unwrap();
            std::thread::spawn(policy).join().unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(inherited, libc::SCHED_BATCH);
        assert_eq!(policy(), libc::SCHED_OTHER, "other threads keep theirs");
    }
}
