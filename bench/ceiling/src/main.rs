//! Benchmark ceiling of bench/http_identity.sh: the least work a KServe v2 server does to
//! answer the identity model, in each protocol measured. One process serves HTTP (axum; JSON
//! tensors in `http_json`, the binary tensor extension in `http_binary`) on `--port` and gRPC
//! (tonic, `grpc`) on `--grpc-port` (default: the HTTP port + 1). Inference echoes the inputs
//! back as outputs, for any model name; metadata and configuration exist for `identity` only
//! (`model`).
//! Usage: `ceiling --port N [--grpc-port M]`.

mod grpc;
mod http;
mod http_answer;
mod http_binary;
mod http_json;
mod model;

use tokio::net::TcpListener;

fn usage(problem: &str) -> ! {
    eprintln!("ceiling: {problem}\nusage: ceiling --port N [--grpc-port M]");
    std::process::exit(2);
}

/// The HTTP and gRPC ports from `--port N [--grpc-port M]` (also `--flag=N`).
fn ports_from_args() -> (u16, u16) {
    let (mut http, mut grpc) = (None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (flag, value) = match arg.split_once('=') {
            Some((flag, value)) => (flag.to_string(), Some(value.to_string())),
            None => (arg, None),
        };
        let slot = match flag.as_str() {
            "--port" => &mut http,
            "--grpc-port" => &mut grpc,
            _ => usage(&format!("unknown argument '{flag}'")),
        };
        let value = value
            .or_else(|| args.next())
            .unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        *slot = Some(
            value
                .parse::<u16>()
                .unwrap_or_else(|_| usage(&format!("bad {flag} '{value}'"))),
        );
    }
    let http = http.unwrap_or_else(|| usage("--port is required"));
    let grpc = grpc.unwrap_or_else(|| {
        http.checked_add(1)
            .unwrap_or_else(|| usage("no port after --port for gRPC"))
    });
    (http, grpc)
}

#[tokio::main]
async fn main() {
    let (http_port, grpc_port) = ports_from_args();
    let bind = |port| TcpListener::bind(("0.0.0.0", port));
    let http_listener = bind(http_port)
        .await
        .unwrap_or_else(|e| usage(&format!("cannot bind HTTP port {http_port}: {e}")));
    let grpc_listener = bind(grpc_port)
        .await
        .unwrap_or_else(|e| usage(&format!("cannot bind gRPC port {grpc_port}: {e}")));
    eprintln!("ceiling: HTTP on 0.0.0.0:{http_port}, gRPC on 0.0.0.0:{grpc_port}");
    let grpc = tokio::spawn(grpc::serve(grpc_listener));
    tokio::select! {
        served = axum::serve(http_listener, http::router()) => served.expect("serve HTTP"),
        served = grpc => served.expect("gRPC task").expect("serve gRPC"),
    }
}
