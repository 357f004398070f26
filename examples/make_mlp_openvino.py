"""Writes examples/framework_repository/mlp_openvino/1/model.xml and model.bin: the
`mlp_onnx` classifier converted to OpenVINO's own format with the `openvino`
package (scripts/python-env.sh installs it into .venv), batch dimension left
dynamic:

    .venv/bin/python examples/make_mlp_openvino.py
"""

from pathlib import Path

import openvino as ov

here = Path(__file__).parent
model = ov.convert_model(here / "model_repository" / "mlp_onnx" / "1" / "model.onnx")
out = here / "framework_repository" / "mlp_openvino" / "1"
out.mkdir(parents=True, exist_ok=True)
ov.save_model(model, out / "model.xml", compress_to_fp16=False)
print(f"wrote {out / 'model.xml'} and model.bin")
