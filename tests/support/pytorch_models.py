"""TorchScript test models, traced or scripted with Python torch, and their
Triton folders.

A `TorchModel` is a module saved as `<repo>/<name>/1/model.pt` with its
inputs and outputs listed as (name, datatype, dims): datatype is the
protocol's ("FP32", "INT64", ...), dims exclude the batch dimension when
`max_batch_size` > 0. `reference()` runs the saved module with Python torch
on numpy inputs given in config order, the results the server must give back.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List

import warnings

import numpy as np
import torch

# torch 2.13 deprecates TorchScript, which is what Triton serves.
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch\.jit")

# Protocol datatype -> torch dtype (BF16 travels as float32 numpy arrays).
TORCH_DTYPES = {
    "BOOL": torch.bool,
    "UINT8": torch.uint8,
    "INT8": torch.int8,
    "INT16": torch.int16,
    "INT32": torch.int32,
    "INT64": torch.int64,
    "FP16": torch.float16,
    "BF16": torch.bfloat16,
    "FP32": torch.float32,
    "FP64": torch.float64,
}


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Sequential(
            torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))

    def forward(self, x):
        return self.net(x)


class TinyBert(torch.nn.Module):
    """Seed 001's shape: int64 token ids and attention mask in, a pooled
    embedding out."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.embed = torch.nn.Embedding(100, 8)
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, input_ids, attention_mask):
        hidden = self.proj(self.embed(input_ids))
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)


class TwoOutputs(torch.nn.Module):
    def forward(self, x):
        return x * 2.0, x.sum(dim=1, keepdim=True)


class Branch(torch.nn.Module):
    """A data-dependent branch, which tracing would freeze: scripted."""

    def forward(self, x):
        if bool(x.sum() > 0):
            return x * 2.0
        return x - 1.0


class PlusOne(torch.nn.Module):
    def forward(self, x):
        if x.dtype == torch.bool:
            return torch.logical_not(x)
        return x + 1


class Upper(torch.nn.Module):
    def forward(self, texts: List[str]) -> List[str]:
        return [t.upper() for t in texts]


class DictIn(torch.nn.Module):
    def forward(self, inputs: Dict[str, torch.Tensor]) -> torch.Tensor:
        return inputs["a"] - inputs["b"]


class DictOut(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> Dict[str, torch.Tensor]:
        return {"doubled": x * 2.0, "negated": -x}


class ListOut(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> List[torch.Tensor]:
        return [x + 1.0, x + 2.0]


@dataclass
class TorchModel:
    name: str
    module: torch.jit.ScriptModule
    inputs: list  # [(name, datatype, dims)]
    outputs: list
    max_batch_size: int = 8
    extra: str = ""
    parameters: dict = field(default_factory=dict)
    # forward() takes one Dict[str, Tensor] of every input.
    dict_input: bool = False

    def config(self):
        def tensors(kind, items):
            body = ",\n".join(
                f'  {{ name: "{n}" data_type: TYPE_{"STRING" if d == "BYTES" else d} '
                f"dims: [ {', '.join(str(x) for x in dims)} ] }}"
                for n, d, dims in items)
            return f"{kind} [\n{body}\n]\n"

        params = "".join(
            f'parameters {{ key: "{k}" value {{ string_value: "{v}" }} }}\n'
            for k, v in self.parameters.items())
        return (f'name: "{self.name}"\nbackend: "pytorch"\n'
                f"max_batch_size: {self.max_batch_size}\n"
                + tensors("input", self.inputs) + tensors("output", self.outputs)
                + params + self.extra + "\n")

    def write(self, repo, config=None):
        folder = Path(repo) / self.name
        (folder / "1").mkdir(parents=True)
        self.module.save(str(folder / "1" / "model.pt"))
        (folder / "config.pbtxt").write_text(config or self.config())
        return folder

    def reference(self, feeds):
        """Python torch's outputs (numpy, by output name) for `feeds`, numpy
        arrays by input name."""
        args = {n: to_torch(feeds[n], d) for n, d, _ in self.inputs}
        with torch.no_grad():
            if self.dict_input:
                result = self.module(args)
            elif set(args) <= set(argument_names(self.module)):
                result = self.module(**args)
            else:
                result = self.module(*[args[n] for n in sorted(args, key=index)])
        if isinstance(result, dict):
            return {n: to_numpy(result[n]) for n, _, _ in self.outputs}
        if not isinstance(result, (tuple, list)) or (result and isinstance(result[0], str)):
            result = [result]
        names = [n for n, _, _ in self.outputs]
        if all("__" in n for n in names):
            names.sort(key=index)
        return {n: to_numpy(r) for n, r in zip(names, result)}


def argument_names(module):
    """forward()'s argument names, as Python torch reports them."""
    return [a.name for a in module.forward.schema.arguments[1:]]


def index(name):
    """The index of an `INPUT__<i>` or `OUTPUT__<i>` name."""
    return int(name.rsplit("__", 1)[1])


def to_torch(array, datatype):
    if datatype == "BYTES":
        return [bytes(x).decode() for x in array.reshape(-1)]
    return torch.from_numpy(np.ascontiguousarray(array)).to(TORCH_DTYPES[datatype])


def to_numpy(value):
    if isinstance(value, list):
        return np.array([s.encode() for s in value], dtype=np.object_)
    if value.dtype == torch.bfloat16:
        return value.float().numpy()
    return value.numpy()


def traced(module, *examples):
    return torch.jit.trace(module.eval(), examples)


def mlp(name="mlp", **kw):
    return TorchModel(name, traced(Mlp(), torch.zeros(2, 4)),
                      [("INPUT__0", "FP32", [4])], [("OUTPUT__0", "FP32", [3])], **kw)


def tiny_bert(name="bert", inputs=("input__0", "input__1"), **kw):
    ids = torch.zeros(2, 5, dtype=torch.int64)
    module = traced(TinyBert(), ids, torch.ones(2, 5, dtype=torch.int64))
    return TorchModel(name, module, [(n, "INT64", [-1]) for n in inputs],
                      [("output__0", "FP32", [8])], **kw)


def two_outputs(name="two_outputs", **kw):
    return TorchModel(name, traced(TwoOutputs(), torch.zeros(2, 3)),
                      [("INPUT__0", "FP32", [3])],
                      [("OUTPUT__1", "FP32", [1]), ("OUTPUT__0", "FP32", [3])], **kw)


def branch(name="branch", **kw):
    return TorchModel(name, torch.jit.script(Branch()),
                      [("INPUT__0", "FP32", [-1])], [("OUTPUT__0", "FP32", [-1])],
                      max_batch_size=0, **kw)


def plus_one(datatype):
    module = torch.jit.script(PlusOne())
    return TorchModel(f"plus_one_{datatype.lower()}", module,
                      [("INPUT__0", datatype, [3])], [("OUTPUT__0", datatype, [3])])


def upper():
    return TorchModel("upper", torch.jit.script(Upper()),
                      [("INPUT__0", "BYTES", [-1])], [("OUTPUT__0", "BYTES", [-1])],
                      max_batch_size=0)


def dict_in():
    return TorchModel("dict_in", torch.jit.script(DictIn()),
                      [("a", "FP32", [2]), ("b", "FP32", [2])], [("OUTPUT__0", "FP32", [2])],
                      dict_input=True)


def dict_out():
    return TorchModel("dict_out", torch.jit.script(DictOut()),
                      [("INPUT__0", "FP32", [2])],
                      [("negated", "FP32", [2]), ("doubled", "FP32", [2])])


def list_out():
    return TorchModel("list_out", torch.jit.script(ListOut()),
                      [("INPUT__0", "FP32", [2])],
                      [("OUTPUT__0", "FP32", [2]), ("OUTPUT__1", "FP32", [2])])

