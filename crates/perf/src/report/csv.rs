//! perf_analyzer's CSV layout (`-f FILE`), so scripts written for it read ours.

use super::Report;
use crate::report::console::format_load;

/// The CSV text: header, then one row per load level (in microseconds).
pub fn render(report: &Report) -> String {
    let first = if report.load_kind == "request_rate" {
        "Request Rate"
    } else {
        "Concurrency"
    };
    let mut out = format!(
        "{first},Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,\
         Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,\
         p50 latency,p90 latency,p95 latency,p99 latency,Avg latency,request/response,response wait\n"
    );
    for p in &report.points {
        let (queue, input, infer, output) = p.server.as_ref().map_or((0.0, 0.0, 0.0, 0.0), |s| {
            (
                s.queue_us,
                s.compute_input_us,
                s.compute_infer_us,
                s.compute_output_us,
            )
        });
        let avg = p.latency_us.avg;
        let network =
            (avg - p.client_send_us - p.client_recv_us - queue - input - infer - output).max(0.0);
        let send_recv = p.client_send_us + p.client_recv_us;
        let l = &p.latency_us;
        out.push_str(&format!(
            "{},{:.2},{:.0},{:.0},{:.0},{:.0},{:.0},{:.0},{:.0},{},{},{},{},{:.0},{:.0},{:.0}\n",
            format_load(p.load),
            p.throughput,
            p.client_send_us,
            network,
            queue,
            input,
            infer,
            output,
            p.client_recv_us,
            l.p50,
            l.p90,
            l.p95,
            l.p99,
            avg,
            send_recv,
            (avg - send_recv).max(0.0)
        ));
    }
    out
}
