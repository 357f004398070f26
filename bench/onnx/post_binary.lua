-- wrk script of bench/onnx_throughput.sh: POSTs a KServe v2 request with the binary tensor
-- extension, the bytes of the file named by $BODY_FILE (the JSON header, then the raw tensor
-- bytes), with `Inference-Header-Content-Length: $HEADER_LEN` (the JSON header's length), and
-- prints one machine-readable line at the end:
--   RESULT requests=N duration_s=S rps=R p50_us=.. p90_us=.. p99_us=.. errors=N non2xx=N
-- Latencies are in microseconds (wrk's resolution). Errors count connect/read/write/timeout
-- failures; non2xx counts HTTP statuses > 399.

local path = assert(os.getenv("BODY_FILE"), "set BODY_FILE")
local hlen = assert(os.getenv("HEADER_LEN"), "set HEADER_LEN")
local file = assert(io.open(path, "rb"), "cannot open body file " .. path)
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/octet-stream"
wrk.headers["Inference-Header-Content-Length"] = hlen

function done(summary, latency, requests)
  local e = summary.errors
  local seconds = summary.duration / 1e6
  io.write(string.format(
    "RESULT requests=%d duration_s=%.3f rps=%.1f p50_us=%d p90_us=%d p99_us=%d errors=%d non2xx=%d\n",
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status))
end
