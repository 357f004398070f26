//! Asks the example repository's models (`scripts/serve-example.sh`) for
//! answers over HTTP and gRPC: `add_sub` with FP32 arrays, `text_echo` with
//! strings.
//!
//! ```sh
//! cargo run -p oxiserve-client --example infer -- [HTTP host:port] [gRPC host:port]
//! ```

use ndarray::{Array2, arr2};
use oxiserve_client::{Client, InferInput, InferRequest, InferRequestedOutput, Protocol, Result};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let http = args.next().unwrap_or_else(|| "localhost:8000".into());
    let grpc = args.next().unwrap_or_else(|| "localhost:8001".into());
    for (url, protocol) in [(http, Protocol::Http), (grpc, Protocol::Grpc)] {
        let client = Client::connect(&url, protocol).await?;
        let server = client.server_metadata().await?;
        println!("{protocol:?} {url}: {} {}", server.name, server.version);
        add_sub(&client).await?;
        text_echo(&client).await?;
    }
    Ok(())
}

/// `add_sub`: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1.
async fn add_sub(client: &Client) -> Result<()> {
    let a: Array2<f32> = arr2(&[[1.0, 2.0, 3.0, 4.0]]);
    let b = &a * 0.5;
    let request = InferRequest::new("add_sub")
        .input(InferInput::from_array("INPUT0", &a))
        .input(InferInput::from_array("INPUT1", &b))
        .output(InferRequestedOutput::new("OUTPUT0"))
        .output(InferRequestedOutput::new("OUTPUT1"));
    let result = client.infer(&request).await?;
    println!("  add_sub: sum {}", result.as_array::<f32>("OUTPUT0")?);
    println!(
        "  add_sub: difference {}",
        result.as_array::<f32>("OUTPUT1")?
    );
    Ok(())
}

/// `text_echo`: a batch of two strings back.
async fn text_echo(client: &Client) -> Result<()> {
    let text = arr2(&[["hello"], ["wörld"]]);
    let request =
        InferRequest::new("text_echo").input(InferInput::from_strings("input_text", &text));
    let result = client.infer(&request).await?;
    println!("  text_echo: {}", result.as_strings("output__0")?);
    Ok(())
}
