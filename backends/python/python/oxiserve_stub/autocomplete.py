"""The AutoComplete frame: run TritonPythonModel.auto_complete_config on the config."""

import json

from .errors import format_exception
from .modelfile import load_model_module


def auto_complete(model_file, config_json):
    """Returns (error text or None, resulting config JSON)."""
    import triton_python_backend_utils as pb_utils
    try:
        module = load_model_module(model_file)
        cls = module.TritonPythonModel
        if not hasattr(cls, "auto_complete_config"):
            return None, config_json
        config = pb_utils.ModelConfig(config_json)
        result = cls.auto_complete_config(config)
        if not isinstance(result, pb_utils.ModelConfig):
            name = config._model_config.get("name", "") if isinstance(
                config._model_config, dict) else ""
            return ("auto_complete_config function in model '%s' must return a valid "
                    "pb.ModelConfig object." % name), config_json
        return None, json.dumps(result._model_config)
    except BaseException as e:
        return format_exception(e), config_json
