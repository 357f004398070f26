//! Reading a socket that polls for a while before it sleeps.
//!
//! On a VM a thread that sleeps in `recv` costs whoever wakes it tens of
//! microseconds (the writer's `send` pays for the wake-up), and a process
//! that slept comes back with cold caches. A reader that keeps polling for a
//! short time after its last frame avoids both when the next frame follows
//! soon, and still sleeps when the instance is idle.

use std::{
    io::{self, Read},
    os::unix::net::UnixStream,
    time::{Duration, Instant},
};

use rustix::net::{RecvFlags, recv};

/// A socket read that polls for up to `spin` (yielding the CPU between
/// polls) before it blocks.
pub(crate) struct PollingReader {
    socket: UnixStream,
    spin: Duration,
}

impl PollingReader {
    pub fn new(socket: UnixStream, spin: Duration) -> Self {
        Self { socket, spin }
    }
}

impl Read for PollingReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.spin.is_zero() && !buf.is_empty() {
            let start = Instant::now();
            loop {
                match recv(&self.socket, &mut *buf, RecvFlags::DONTWAIT) {
                    Ok((n, _)) => return Ok(n),
                    Err(e) if e == rustix::io::Errno::AGAIN => {}
                    Err(e) if e == rustix::io::Errno::INTR => continue,
                    Err(e) => return Err(e.into()),
                }
                if start.elapsed() >= self.spin {
                    break;
                }
                std::thread::yield_now();
            }
        }
        self.socket.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn reads_what_arrives_while_polling_and_after_sleeping() {
        let (mut writer, reader) = UnixStream::pair().unwrap();
        let mut reader = PollingReader::new(reader, Duration::from_millis(20));
        writer.write_all(b"now").unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(reader.read(&mut buf).unwrap(), 3);
        assert_eq!(&buf[..3], b"now");
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(60));
            writer.write_all(b"later").unwrap();
        });
        // Polls for 20 ms, then sleeps in recv until the write comes.
        assert_eq!(reader.read(&mut buf).unwrap(), 5);
        assert_eq!(&buf[..5], b"later");
        late.join().unwrap();
        assert_eq!(reader.read(&mut buf).unwrap(), 0, "closed socket reads 0");
    }
}
