"""Checks the exported all-MiniLM-L6-v2 ONNX model against sentence-transformers.

Runs in the project venv (onnxruntime, tokenizers; no torch):

    .venv/bin/python examples/embeddings/check_export.py [--model M] [--tokenizer T] [--reference R]

Tokenizes the sentences of tests/data/minilm_reference.json with the `tokenizers`
library the way sentence-transformers does (truncation at max_seq_length, no padding),
checks the ids against the recorded ones, runs the model with onnxruntime (all sentences
in one padded batch, and each alone) and compares with the recorded embeddings.
Exits non-zero if a cosine similarity is below 0.9999 or the token ids differ.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parents[2]
MIN_COSINE = 0.9999


def run(session, batch):
    """Pads a list of id lists with 0 (mask 0) to the longest and runs the model."""
    seq = max(len(ids) for ids in batch)
    input_ids = np.zeros((len(batch), seq), np.int64)
    mask = np.zeros((len(batch), seq), np.int64)
    for i, ids in enumerate(batch):
        input_ids[i, : len(ids)] = ids
        mask[i, : len(ids)] = 1
    feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
    return session.run(["embeddings"], feeds)[0]


def main():
    repo = ROOT / "examples/model_repository"
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=repo / "minilm_encoder/1/model.onnx")
    parser.add_argument("--tokenizer", type=Path, default=repo / "minilm_tokenizer/1/tokenizer.json")
    parser.add_argument("--reference", type=Path, default=ROOT / "tests/data/minilm_reference.json")
    args = parser.parse_args()

    ref = json.loads(args.reference.read_text())
    tok = Tokenizer.from_file(str(args.tokenizer))
    tok.enable_truncation(max_length=ref["max_seq_length"])
    tok.no_padding()
    cases = ref["cases"]
    batch = [enc.ids for enc in tok.encode_batch([c["text"] for c in cases])]
    ok = True
    for case, ids in zip(cases, batch):
        if ids != case["input_ids"]:
            print(f"token ids differ for {case['text'][:40]!r}: {ids[:12]} vs {case['input_ids'][:12]}")
            ok = False

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session = ort.InferenceSession(str(args.model), opts, providers=["CPUExecutionProvider"])
    expected = np.array([c["embedding"] for c in cases], np.float64)
    results = {"batched": run(session, batch), "one by one": np.vstack([run(session, [ids]) for ids in batch])}

    for how, got in results.items():
        got = got.astype(np.float64)
        assert got.shape == expected.shape, got.shape
        diff = np.abs(got - expected).max(axis=1)
        cos = (got * expected).sum(axis=1) / np.linalg.norm(got, axis=1) / np.linalg.norm(expected, axis=1)
        worst = int(cos.argmin())
        print(f"{how:>10}: {len(cases)} sentences, max |diff| {diff.max():.3g}, "
              f"min cosine {cos.min():.9f} (1 - cos = {1 - cos.min():.2g}; {cases[worst]['text'][:30]!r}, {len(batch[worst])} tokens)")
        ok &= bool(cos.min() >= MIN_COSINE)
    print("OK" if ok else "FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
