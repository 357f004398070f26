//! Reading a socket that polls for a while before it sleeps.
//!
//! On a VM a thread that sleeps in `recv` costs whoever wakes it tens of
//! microseconds (the writer's `send` pays for the wake-up), and a process
//! that slept comes back with cold caches. A reader that keeps polling for a
//! short time after its last frame avoids both when the next frame follows
//! soon, and still sleeps when the instance is idle. It polls only while
//! frames keep coming: after a wait longer than [`SOON`] times the polling
//! time it sleeps at once until frames come that often again, so a slow
//! trickle of requests costs no polling CPU. (With a limit of one polling
//! time, both sides of a lone client's requests could settle into sleeping:
//! each waits longer because the other woke slowly.) Its owner can also
//! forbid polling for a while ([`PollingReader::set_polling`]): the pump does
//! under load, when polling would only take turns from threads with work.

use std::{
    io::{self, Read},
    os::unix::net::UnixStream,
    time::{Duration, Instant},
};

use rustix::net::{RecvFlags, recv};

/// A wait up to this many polling times long still counts as frames coming.
const SOON: u32 = 4;

/// A socket read that polls for up to `spin` (yielding the CPU between
/// polls) before it blocks, while the previous wait was shorter than
/// [`SOON`] times `spin`.
pub(crate) struct PollingReader {
    socket: UnixStream,
    spin: Duration,
    /// Whether the last read found data within [`SOON`] times `spin`.
    soon: bool,
    /// Whether the next read may poll at all (see [`Self::set_polling`]).
    polling: bool,
}

impl PollingReader {
    pub fn new(socket: UnixStream, spin: Duration) -> Self {
        Self {
            socket,
            spin,
            soon: true,
            polling: true,
        }
    }

    /// Allows or forbids polling in the reads that follow.
    pub fn set_polling(&mut self, polling: bool) {
        self.polling = polling;
    }

    /// The data if some arrives within `spin`.
    fn poll(&mut self, buf: &mut [u8], start: Instant) -> io::Result<Option<usize>> {
        loop {
            match recv(&self.socket, &mut *buf, RecvFlags::DONTWAIT) {
                Ok((n, _)) => return Ok(Some(n)),
                Err(e) if e == rustix::io::Errno::AGAIN => {}
                Err(e) if e == rustix::io::Errno::INTR => continue,
                Err(e) => return Err(e.into()),
            }
            if start.elapsed() >= self.spin {
                return Ok(None);
            }
            std::thread::yield_now();
        }
    }
}

impl Read for PollingReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.spin.is_zero() || buf.is_empty() {
            return self.socket.read(buf);
        }
        let start = Instant::now();
        if self.soon
            && self.polling
            && let Some(n) = self.poll(buf, start)?
        {
            return Ok(n);
        }
        let n = self.socket.read(buf)?;
        self.soon = start.elapsed() < self.spin * SOON;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn reads_what_arrives_while_polling_and_after_sleeping() {
        let (mut writer, reader) = UnixStream::pair().unwrap();
        let mut reader = PollingReader::new(reader, Duration::from_millis(10));
        writer.write_all(b"now").unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(reader.read(&mut buf).unwrap(), 3);
        assert_eq!(&buf[..3], b"now");
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(60));
            writer.write_all(b"later").unwrap();
        });
        // Polls for 10 ms, then sleeps in recv until the write comes.
        assert_eq!(reader.read(&mut buf).unwrap(), 5);
        assert_eq!(&buf[..5], b"later");
        late.join().unwrap();
        assert!(
            !reader.soon,
            "a wait longer than SOON polling times stops the polling"
        );
        assert_eq!(reader.read(&mut buf).unwrap(), 0, "closed socket reads 0");
        assert!(reader.soon, "data (here: the end) at once resumes it");
    }

    /// CPU time this thread has used.
    fn thread_cpu() -> Duration {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid timespec for the call to fill in.
        assert_eq!(
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) },
            0
        );
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }

    /// The CPU a read uses while its data comes 200 ms late.
    fn cpu_of_a_late_read(reader: &mut PollingReader, writer: &mut UnixStream) -> Duration {
        let mut late = writer.try_clone().unwrap();
        let writing = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            late.write_all(b"x").unwrap();
        });
        let before = thread_cpu();
        let mut buf = [0u8; 8];
        assert_eq!(reader.read(&mut buf).unwrap(), 1);
        let used = thread_cpu() - before;
        writing.join().unwrap();
        used
    }

    #[test]
    fn a_reader_told_not_to_poll_sleeps_at_once() {
        let (mut writer, reader) = UnixStream::pair().unwrap();
        let mut reader = PollingReader::new(reader, Duration::from_secs(10));
        let polled = cpu_of_a_late_read(&mut reader, &mut writer);
        assert!(
            polled > Duration::from_millis(5),
            "polling spins: {polled:?}"
        );
        reader.set_polling(false);
        let slept = cpu_of_a_late_read(&mut reader, &mut writer);
        assert!(slept < Duration::from_millis(5), "no polling: {slept:?}");
        reader.set_polling(true);
        assert!(cpu_of_a_late_read(&mut reader, &mut writer) > Duration::from_millis(5));
    }
}
