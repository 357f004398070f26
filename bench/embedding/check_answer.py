"""Correctness check of bench/embedding.sh: embeddings from a server against sentence-transformers'.

    check_answer.py PORT MODEL REFERENCE_JSON

Sends two KServe v2 JSON requests to /v2/models/MODEL/infer (input `input_text`, BYTES):
  seed  the two Korean news titles of seed 000's curl example, shape [2,1], as the seed sends it;
  all   every sentence of REFERENCE_JSON (tests/data/minilm_reference.json) in one request,
        shape [N,1] (short, empty, emoji, and the one longer than 256 tokens, all padded
        together).
Each output `output__0` must be FP32 [rows, 384] and every row's cosine similarity with the
reference embedding >= 0.9999. Prints one line: the smallest cosine of each request; exits
non-zero (with the reason on stderr) when a request fails or a row is off.
Standard library only.
"""

import http.client
import json
import math
import sys

MIN_COSINE = 0.9999
port, model, ref_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
cases = json.load(open(ref_path, encoding="utf-8"))["cases"]
want = {c["text"]: c["embedding"] for c in cases}
SEED = ["슈퍼 엔저 장기화에…한국 수출∙경상수지에 비상등", "엔저 기조 끝날까… 기나긴 하락 끝에 엔-원 환율 반등"]
assert all(t in want for t in SEED), "the seed's titles are not in the reference file"


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)) or 1.0)


def check(name, texts):
    req = {"name": model, "inputs": [{"name": "input_text", "shape": [len(texts), 1],
                                      "datatype": "BYTES", "data": [[t] for t in texts]}]}
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", f"/v2/models/{model}/infer", json.dumps(req, ensure_ascii=False).encode(),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    if r.status != 200:
        sys.exit(f"{name} request: HTTP {r.status}: {data[:300]!r}")
    outs = {o["name"]: o for o in json.loads(data)["outputs"]}
    o = outs.get("output__0")
    if o is None:
        sys.exit(f"{name} request: no output__0 in {list(outs)}")
    if o["datatype"] != "FP32" or o["shape"] != [len(texts), 384]:
        sys.exit(f"{name} request: output__0 is {o['datatype']} {o['shape']}, want FP32 [{len(texts)}, 384]")
    flat = [float(v) for v in o["data"]]
    cos = [cosine(flat[i * 384:(i + 1) * 384], want[t]) for i, t in enumerate(texts)]
    bad = [(texts[i][:40], round(x, 6)) for i, x in enumerate(cos) if not x >= MIN_COSINE]
    if bad:
        sys.exit(f"{name} request: cosine < {MIN_COSINE} for {bad}")
    return min(cos)


seed = check("seed [2,1]", SEED)
every = check(f"all [{len(cases)},1]", [c["text"] for c in cases])
print(f"seed [2,1] min cosine {seed:.6f}, all {len(cases)} reference sentences in one [{len(cases)},1] request min cosine {every:.6f}")
