"""Request bodies of bench/embedding.sh, one KServe v2 JSON body per line.

    make_bodies.py REFERENCE_JSON OUT [--max-chars N]

One body per sentence of REFERENCE_JSON (`cases[].text`), one sentence per request:
  {"inputs":[{"name":"input_text","shape":[1,1],"datatype":"BYTES","data":[["<text>"]]}]}
Sentences longer than N characters (default 1000: only the 3030-character paragraph, which
truncates at 256 tokens) are left out; --max-chars 0 keeps all. The text stays UTF-8 (no
\\u escapes). Prints, on stdout, how many bodies were written and which sentences were left out.
"""

import json
import sys

ref, out = sys.argv[1], sys.argv[2]
max_chars = int(sys.argv[sys.argv.index("--max-chars") + 1]) if "--max-chars" in sys.argv else 1000
texts = [c["text"] for c in json.load(open(ref, encoding="utf-8"))["cases"]]
keep = [t for t in texts if max_chars <= 0 or len(t) <= max_chars]
left = [t for t in texts if t not in keep]
with open(out, "w", encoding="utf-8") as f:
    for t in keep:
        body = {"inputs": [{"name": "input_text", "shape": [1, 1], "datatype": "BYTES", "data": [[t]]}]}
        f.write(json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n")
print(f"{len(keep)} bodies; left out: "
      + (", ".join(f"{len(t)}-character sentence ({t[:30]!r}...)" for t in left) if left else "none"))
