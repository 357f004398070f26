//! The zygote: one warm Python process per interpreter that has numpy and
//! our modules imported and forks every instance process, so instances start
//! in milliseconds and share its memory pages. See `docs/design/python-wire.md`
//! for the control messages.
//!
//! Lifetimes: the zygote lives until its control socket reaches its end,
//! which the kernel brings about when the server exits, however it exits.
//! It gets no `PR_SET_PDEATHSIG`: Linux sends that signal when the *thread*
//! that forked the process ends, and a zygote starts on whichever thread
//! needs it first (a load's thread, an instance's thread restarting its
//! process), so it died with that thread, and every instance with it. An
//! instance process does get the signal, from the zygote's one thread, and
//! so never outlives its zygote. The server reaps a zygote as soon as its
//! socket closes, and signals instance processes only through their zygote
//! (see [`Zygote::kill`]), never by a pid that may have been reused.

use std::{
    collections::HashMap,
    fmt,
    io::IoSlice,
    mem::MaybeUninit,
    os::{
        fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd},
        unix::process::CommandExt,
    },
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{Arc, atomic::AtomicU64, atomic::Ordering},
    time::{Duration, Instant},
};

use parking_lot::{Condvar, Mutex};
use rustix::net::{
    AddressFamily, RecvFlags, SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketFlags,
    SocketType,
};
use serde_json::{Value, json};

use oxiserve_types::{Error, Result};

use crate::{arena::ArenaLayout, package::zygote_script};

/// How a forked process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExitReason {
    Code(i32),
    Signal(i32),
}

impl fmt::Display for ExitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Code(code) => write!(f, "exit code {code}"),
            Self::Signal(signal) => {
                let name = match signal {
                    6 => " (SIGABRT)",
                    9 => " (SIGKILL; out of memory?)",
                    11 => " (SIGSEGV)",
                    15 => " (SIGTERM)",
                    _ => "",
                };
                write!(f, "signal {signal}{name}")
            }
        }
    }
}

/// A running zygote.
#[derive(Debug)]
pub(crate) struct Zygote {
    python: PathBuf,
    control: Arc<OwnedFd>,
    shared: Arc<Shared>,
    process: Arc<Mutex<Child>>,
    next_token: AtomicU64,
    /// The interpreter's Python and numpy versions and how it codes frames
    /// (the compiled `_frames` module or Python), for log lines.
    pub versions: String,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// The zygote's first message: versions, or why it cannot serve.
    ready: Option<std::result::Result<String, String>>,
    spawned: HashMap<u64, i32>,
    exits: HashMap<i32, ExitReason>,
    /// The control socket reached its end: the zygote is gone.
    gone: bool,
}

impl Zygote {
    /// Starts a zygote running `python`, with our package in `package`, and
    /// waits until it has imported numpy.
    pub fn start(python: &Path, package: &Path, timeout: Duration) -> Result<Self> {
        let mut command = Command::new(python);
        command.arg("-I").arg(zygote_script(package));
        Self::launch(command, python, timeout)
    }

    /// Runs `command` (which runs `python`) with the control socket as its
    /// fd 3, and waits up to `timeout` for its first message.
    fn launch(mut command: Command, python: &Path, timeout: Duration) -> Result<Self> {
        let (ours, theirs) = rustix::net::socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .map_err(|e| Error::internal(format!("python backend: socketpair: {e}")))?;
        let child_fd = theirs.as_raw_fd();
        command.stdin(Stdio::null());
        // SAFETY: only async-signal-safe calls (sched_setscheduler, fcntl,
        // dup2) between fork and exec; `child_fd` is a plain integer copied
        // into the closure.
        unsafe {
            command.pre_exec(move || {
                // The model processes run SCHED_OTHER even where the server's
                // threads run SCHED_BATCH (`--batch-scheduling`): their
                // wake-ups are the ones that should preempt. Where the policy
                // cannot be set, the process keeps the server's: not an error.
                let param = libc::sched_param { sched_priority: 0 };
                libc::sched_setscheduler(0, libc::SCHED_OTHER, &param);
                if child_fd == 3 {
                    libc::fcntl(3, libc::F_SETFD, 0);
                } else if libc::dup2(child_fd, 3) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let process = command.spawn().map_err(|e| {
            Error::unavailable(format!(
                "python backend: cannot start {}: {e}",
                python.display()
            ))
        })?;
        drop(theirs);
        let control = Arc::new(ours);
        let shared = Arc::new(Shared::default());
        let process = Arc::new(Mutex::new(process));
        watch(control.clone(), shared.clone(), process.clone())?;
        let mut zygote = Self {
            python: python.to_path_buf(),
            control,
            shared,
            process,
            next_token: AtomicU64::new(1),
            versions: String::new(),
        };
        let ready = zygote.wait(timeout, |s| {
            s.ready.clone().or(s.gone.then(|| Err(String::new())))
        });
        match ready {
            Some(Ok(versions)) => {
                zygote.versions = versions;
                Ok(zygote)
            }
            Some(Err(reason)) => Err(zygote.unusable(&reason)),
            None => Err(zygote.unusable(&format!(
                "it did not start within {} s (stub-timeout-seconds)",
                timeout.as_secs()
            ))),
        }
    }

    /// The interpreter it runs.
    pub fn python(&self) -> &Path {
        &self.python
    }

    /// Whether it still runs.
    pub fn is_alive(&self) -> bool {
        !self.shared.state.lock().gone
    }

    /// Forks a process that serves an instance socket and two arenas laid
    /// out as `layout` says (`fds`: the socket, arena_in, arena_out and, for
    /// an instance, the socket its forked processes attach through); returns
    /// its pid.
    pub fn spawn(
        &self,
        fds: &[BorrowedFd<'_>],
        layout: &ArenaLayout,
        timeout: Duration,
    ) -> Result<i32> {
        let token = self.next_token.fetch_add(1, Ordering::Relaxed);
        let message = json!({
            "op": "spawn",
            "token": token,
            "arena_size": layout.size,
            "pool_size": layout.pool,
            "growth_size": layout.growth,
        })
        .to_string();
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
        let mut ancillary = SendAncillaryBuffer::new(&mut space);
        ancillary.push(SendAncillaryMessage::ScmRights(fds));
        rustix::net::sendmsg(
            self.control.as_fd(),
            &[IoSlice::new(message.as_bytes())],
            &mut ancillary,
            SendFlags::NOSIGNAL,
        )
        .map_err(|e| Error::unavailable(format!("python backend: the zygote is gone ({e})")))?;
        let pid = self.wait(timeout, |s| {
            s.spawned
                .remove(&token)
                .map(Some)
                .or(s.gone.then_some(None))
        });
        match pid {
            Some(Some(pid)) => Ok(pid),
            Some(None) => Err(Error::unavailable(
                "python backend: the zygote process exited; it restarts with the next load",
            )),
            None => Err(Error::unavailable(format!(
                "python backend: the zygote did not fork within {} s",
                timeout.as_secs()
            ))),
        }
    }

    /// Asks the zygote to SIGKILL its child `pid`. The zygote kills only a
    /// child it has not reaped yet, so the signal never reaches a process
    /// that got the pid later. A zygote that is gone has no children left
    /// to kill: they got their parent-death signal.
    pub fn kill(&self, pid: i32) {
        let message = json!({"op": "kill", "pid": pid}).to_string();
        let _ = rustix::net::send(
            self.control.as_fd(),
            message.as_bytes(),
            SendFlags::NOSIGNAL,
        );
    }

    /// How the process `pid` ended, waiting up to `wait` for the news.
    pub fn exit_reason(&self, pid: i32, wait: Duration) -> Option<ExitReason> {
        self.wait(wait, |s| {
            s.exits.remove(&pid).map(Some).or(s.gone.then_some(None))
        })
        .flatten()
    }

    fn wait<T>(
        &self,
        timeout: Duration,
        mut found: impl FnMut(&mut State) -> Option<T>,
    ) -> Option<T> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.state.lock();
        loop {
            if let Some(value) = found(&mut state) {
                return Some(value);
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            self.shared.changed.wait_for(&mut state, left);
        }
    }

    fn unusable(&self, reason: &str) -> Error {
        let reason = if reason.is_empty() {
            let status = self.process.lock().wait().ok();
            format!(
                "it exited ({})",
                status.map(|s| s.to_string()).unwrap_or_default()
            )
        } else {
            reason.to_string()
        };
        Error::unavailable(format!(
            "python backend: {} cannot run Python models: {reason}. Point the model parameter \
             EXECUTION_ENV_PATH or --backend-config=python,python-interpreter=PATH at a Python \
             with numpy",
            self.python.display()
        ))
    }
}

impl Drop for Zygote {
    fn drop(&mut self) {
        reap(&self.process);
    }
}

/// Ends the zygote if it still runs and collects its exit status, so that it
/// is not left a zombie. `Child` skips the kill once it has the status, so
/// the pid is never signalled after it could have been reused.
fn reap(process: &Mutex<Child>) {
    let mut process = process.lock();
    let _ = process.kill();
    let _ = process.wait();
}

/// Starts the thread that reads the zygote's messages and, once its socket
/// closes, reaps it and marks it gone.
fn watch(control: Arc<OwnedFd>, shared: Arc<Shared>, process: Arc<Mutex<Child>>) -> Result<()> {
    std::thread::Builder::new()
        .name("py-zygote".into())
        .spawn(move || {
            read_control(&control, &shared);
            reap(&process);
            shared.state.lock().gone = true;
            shared.changed.notify_all();
        })
        .map(drop)
        .map_err(|e| Error::internal(format!("cannot start a thread: {e}")))
}

/// Reads the zygote's messages until its socket closes: the zygote exited.
fn read_control(control: &OwnedFd, shared: &Shared) {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = match rustix::net::recv(control, &mut buffer[..], RecvFlags::empty()) {
            Ok((n, _)) if n > 0 => n,
            Err(rustix::io::Errno::INTR) => continue,
            _ => break,
        };
        let Ok(message) = serde_json::from_slice::<Value>(&buffer[..n]) else {
            log::warn!("python backend: unreadable message from the zygote");
            continue;
        };
        apply(&message, &mut shared.state.lock());
        shared.changed.notify_all();
    }
}

fn apply(message: &Value, state: &mut State) {
    let int = |key: &str| message.get(key).and_then(Value::as_i64);
    let text = |key: &str| message.get(key).and_then(Value::as_str).unwrap_or("");
    match text("op") {
        "ready" => {
            state.ready = Some(Ok(format!(
                "Python {} ({}), numpy {}, frames coded in {}",
                text("python"),
                text("executable"),
                text("numpy"),
                text("frames")
            )))
        }
        "failed" => state.ready = Some(Err(text("error").to_string())),
        "spawned" => {
            if let (Some(token), Some(pid)) = (int("token"), int("pid")) {
                state.spawned.insert(token as u64, pid as i32);
            }
        }
        "exited" => {
            let reason = match (int("code"), int("signal")) {
                (_, Some(signal)) => ExitReason::Signal(signal as i32),
                (code, None) => ExitReason::Code(code.unwrap_or(-1) as i32),
            };
            if let Some(pid) = int("pid") {
                state.exits.insert(pid as i32, reason);
            }
        }
        other => log::warn!("python backend: unknown zygote message '{other}'"),
    }
}

#[cfg(test)]
mod tests {
    use rustix::process::{Pid, Signal, kill_process};

    use super::*;

    /// A stand-in zygote: says it is ready, then reads its control socket
    /// to the end.
    fn fake_zygote() -> Zygote {
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(r#"printf '{"op":"ready"}' >&3; exec cat <&3 >/dev/null"#);
        Zygote::launch(command, Path::new("/bin/sh"), Duration::from_secs(10)).unwrap()
    }

    fn pid_of(zygote: &Zygote) -> u32 {
        zygote.process.lock().id()
    }

    fn exists(pid: u32) -> bool {
        Path::new(&format!("/proc/{pid}")).exists()
    }

    fn gone_within(zygote: &Zygote, wait: Duration) -> bool {
        zygote.wait(wait, |s| s.gone.then_some(())).is_some()
    }

    #[test]
    fn a_zygote_outlives_the_thread_that_started_it() {
        let zygote = std::thread::spawn(fake_zygote).join().unwrap();
        // A parent-death signal would come as the thread ends.
        assert!(!gone_within(&zygote, Duration::from_millis(300)));
        assert!(zygote.is_alive() && exists(pid_of(&zygote)));
    }

    #[test]
    fn a_killed_zygote_is_reaped_while_instances_hold_it() {
        let zygote = fake_zygote();
        let pid = pid_of(&zygote);
        let raw = Pid::from_raw(pid as i32).unwrap();
        kill_process(raw, Signal::KILL).unwrap();
        assert!(gone_within(&zygote, Duration::from_secs(10)));
        assert!(!exists(pid), "the killed zygote {pid} is a zombie");
    }

    #[test]
    fn a_dropped_zygote_is_ended_and_reaped() {
        let zygote = fake_zygote();
        let pid = pid_of(&zygote);
        drop(zygote);
        assert!(!exists(pid), "the zygote {pid} outlived its handle");
    }

    #[test]
    fn exit_reasons_read_well() {
        assert_eq!(ExitReason::Code(3).to_string(), "exit code 3");
        assert_eq!(ExitReason::Signal(11).to_string(), "signal 11 (SIGSEGV)");
        assert_eq!(
            ExitReason::Signal(9).to_string(),
            "signal 9 (SIGKILL; out of memory?)"
        );
    }

    #[test]
    fn control_messages_update_the_state() {
        let mut state = State::default();
        apply(&json!({"op": "spawned", "token": 4, "pid": 99}), &mut state);
        apply(
            &json!({"op": "exited", "pid": 99, "signal": 11}),
            &mut state,
        );
        apply(&json!({"op": "exited", "pid": 98, "code": 0}), &mut state);
        assert_eq!(state.spawned[&4], 99);
        assert_eq!(state.exits[&99], ExitReason::Signal(11));
        assert_eq!(state.exits[&98], ExitReason::Code(0));
    }
}
