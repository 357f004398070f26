//! Starts the server under test on free ports: target/debug/oxiserve (or
//! OXISERVE_BIN), or real Triton when OXI_TARGET=triton (REAL_TRITON, by
//! default /work/shared/tools/real-triton.sh), as tests/support/servers.py
//! does for the Python suite. Triton's ports come from OXI_TRITON_PORTS
//! (`LOW-HIGH`, default 20200-20280); oxiserve binds port 0 and says which.

use std::{
    io::{BufRead, BufReader, Read},
    net::{TcpListener, TcpStream},
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{
        atomic::{AtomicU16, Ordering},
        mpsc,
    },
    time::{Duration, Instant},
};

use oxiserve_client::{Client, Protocol};
use rustix::process::{Pid, Signal, kill_process_group};
use tempfile::TempDir;

use super::models::Model;

/// Whether the tests run against real Triton.
pub fn triton() -> bool {
    std::env::var("OXI_TARGET").is_ok_and(|t| t == "triton")
}

/// A running server and the repository it serves; killed on drop.
pub struct Server {
    child: Child,
    lines: mpsc::Receiver<String>,
    /// The repository, removed when the server goes.
    _repo: TempDir,
    pub http: String,
    pub grpc: String,
}

impl Server {
    /// Serves `models` with extra `flags`.
    pub fn start(models: &[Model], flags: &[&str]) -> Server {
        let repo = tempfile::tempdir().expect("a temporary folder");
        for model in models {
            model.write(repo.path());
        }
        let mut command = command(repo.path());
        command
            .args(flags)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = command.spawn().expect("the server starts");
        let (tx, lines) = mpsc::channel();
        forward(child.stdout.take().expect("piped"), tx.clone());
        forward(child.stderr.take().expect("piped"), tx);
        let mut server = Server {
            child,
            lines,
            _repo: repo,
            http: String::new(),
            grpc: String::new(),
        };
        server.await_ports();
        server
    }

    /// A client of this server over `protocol`.
    pub async fn client(&self, protocol: Protocol) -> Client {
        let url = match protocol {
            Protocol::Http => &self.http,
            Protocol::Grpc => &self.grpc,
        };
        Client::connect(url, protocol).await.expect("connects")
    }

    /// Reads the output until both Started lines came and the ports accept.
    fn await_ports(&mut self) {
        let limit = Duration::from_secs(if triton() { 180 } else { 30 });
        let deadline = Instant::now() + limit;
        let mut seen = Vec::new();
        while self.http.is_empty() || self.grpc.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(port) = port_after(&line, "Started HTTPService at ") {
                        self.http = format!("127.0.0.1:{port}");
                    }
                    if let Some(port) = port_after(&line, "Started GRPCInferenceService at ") {
                        self.grpc = format!("127.0.0.1:{port}");
                    }
                    seen.push(line);
                }
                Err(_) => panic!(
                    "the server did not start in {limit:?}; its output:\n{}",
                    seen.join("\n")
                ),
            }
        }
        // Triton prints the lines a moment before its sockets accept.
        while [&self.http, &self.grpc]
            .iter()
            .any(|a| TcpStream::connect(a.as_str()).is_err())
        {
            assert!(Instant::now() < deadline, "the ports never accepted");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The server and what it started (Python backend stubs).
        if let Some(pid) = Pid::from_raw(self.child.id() as i32) {
            let _ = kill_process_group(pid, Signal::KILL);
        }
        let _ = self.child.wait();
    }
}

/// The command serving `repo` on the target.
fn command(repo: &Path) -> Command {
    let repo = format!("--model-repository={}", repo.display());
    if triton() {
        let script = std::env::var("REAL_TRITON")
            .unwrap_or_else(|_| "/work/shared/tools/real-triton.sh".into());
        let base = triton_ports();
        let mut command = Command::new("bash");
        command.args([
            script,
            repo,
            format!("--http-port={base}"),
            format!("--grpc-port={}", base + 1),
            format!("--metrics-port={}", base + 2),
        ]);
        return command;
    }
    let binary = std::env::var("OXISERVE_BIN").map_or_else(
        |_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/debug/oxiserve"),
        PathBuf::from,
    );
    assert!(
        binary.is_file(),
        "{} not found: build it with `cargo build --bins`, set OXISERVE_BIN, or set OXI_TARGET=triton",
        binary.display()
    );
    let mut command = Command::new(binary);
    command.args([
        repo.as_str(),
        "--http-port=0",
        "--grpc-port=0",
        "--metrics-port=0",
    ]);
    command
}

/// Three consecutive free ports (HTTP, gRPC, metrics) for Triton.
fn triton_ports() -> u16 {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let range = std::env::var("OXI_TRITON_PORTS").unwrap_or_else(|_| "20200-20280".into());
    let (low, high) = range.split_once('-').expect("OXI_TRITON_PORTS is LOW-HIGH");
    let (low, high): (u16, u16) = (low.parse().unwrap(), high.parse().unwrap());
    loop {
        let base = low + NEXT.fetch_add(3, Ordering::Relaxed);
        assert!(base + 2 < high, "no three free ports left in {range}");
        if (0..3).all(|i| TcpListener::bind(("0.0.0.0", base + i)).is_ok()) {
            return base;
        }
    }
}

/// The port in `... {prefix}ADDRESS:PORT` (Triton quotes the message).
fn port_after(line: &str, prefix: &str) -> Option<u16> {
    let rest = &line[line.find(prefix)? + prefix.len()..];
    let address = rest.split(|c: char| c.is_whitespace() || c == '"').next()?;
    address.rsplit_once(':')?.1.parse().ok()
}

/// Sends each line of `from` to `to`, on a thread of its own.
fn forward(from: impl Read + Send + 'static, to: mpsc::Sender<String>) {
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            let _ = to.send(line);
        }
    });
}
