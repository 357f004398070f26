-- wrk script of bench/embedding.sh: POSTs KServe v2 JSON bodies read from the file named by
-- $BODIES_FILE (one body per line), rotating over them, one per request (each wrk thread
-- starts at a different line), and prints one machine-readable line at the end:
--   RESULT requests=N duration_s=S rps=R p50_us=.. p90_us=.. p99_us=.. errors=N non2xx=N
-- Latencies are in microseconds. Errors count connect/read/write/timeout failures; non2xx
-- counts HTTP statuses > 399.

local path = os.getenv("BODIES_FILE") or "bodies.jsonl"
local threads = 0

function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

local requests = {}
local n, i = 0, 0

function init(args)
  local file = assert(io.open(path, "rb"), "cannot open bodies file " .. path)
  local headers = { ["Content-Type"] = "application/json" }
  for line in file:lines() do
    if #line > 0 then
      requests[#requests + 1] = wrk.format("POST", nil, headers, line)
    end
  end
  file:close()
  n = #requests
  assert(n > 0, "no bodies in " .. path)
  i = ((tid or 0) * 3) % n
end

function request()
  i = i % n + 1
  return requests[i]
end

function done(summary, latency, requests)
  local e = summary.errors
  local seconds = summary.duration / 1e6
  io.write(string.format(
    "RESULT requests=%d duration_s=%.3f rps=%.1f p50_us=%d p90_us=%d p99_us=%d errors=%d non2xx=%d\n",
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status))
end
