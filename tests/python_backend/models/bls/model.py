import asyncio
import json
import multiprocessing

import numpy as np
import triton_python_backend_utils as pb_utils


def add_sub_request(a, b):
    return pb_utils.InferenceRequest(
        model_name="add_sub",
        inputs=[
            pb_utils.Tensor("INPUT0", np.array([a], dtype=np.float32)),
            pb_utils.Tensor("INPUT1", np.array([b], dtype=np.float32)),
        ],
        requested_output_names=["OUTPUT0", "OUTPUT1"],
    )


def outputs(response):
    if response.has_error():
        e = response.error()
        return {"error": e.message(), "code": int(e.code())}
    return {t.name(): t.as_numpy().tolist() for t in response.output_tensors()}


def pool_add_sub(i):
    """Run in a worker process the model forked (multiprocessing.Pool)."""
    return outputs(add_sub_request([i] * 4, [1] * 4).exec())


def repeat_request(values, **params):
    return pb_utils.InferenceRequest(
        model_name="repeat",
        inputs=[pb_utils.Tensor("IN", np.array(values, dtype=np.int32))],
        requested_output_names=["OUT", "IDX"],
        parameters=params,
    )


class TritonPythonModel:
    def initialize(self, args):
        try:
            add_sub_request([1, 2, 3, 4], [1, 1, 1, 1]).exec()
            self.init_bls = "no error"
        except Exception as e:
            self.init_bls = f"{type(e).__name__}: {e}"

    async def execute(self, requests):
        responses = []
        for request in requests:
            mode = pb_utils.get_input_tensor_by_name(request, "MODE").as_numpy()[0].decode()
            result = await self.run(mode)
            out = np.array([json.dumps(result)], dtype=object)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("RESULT", out)]))
        return responses

    async def run(self, mode):
        if mode == "add_sub":
            return outputs(add_sub_request([1, 2, 3, 4], [10, 20, 30, 40]).exec())
        if mode == "identity":
            request = pb_utils.InferenceRequest(
                model_name="identity",
                inputs=[pb_utils.Tensor("INPUT0", np.array([[5, 6, 7]], dtype=np.int32))],
                requested_output_names=["OUTPUT0"],
            )
            return outputs(request.exec())
        if mode == "missing":
            request = pb_utils.InferenceRequest(
                model_name="no_such_model",
                inputs=[pb_utils.Tensor("INPUT0", np.array([1], dtype=np.int32))],
                requested_output_names=["OUTPUT0"],
            )
            return outputs(request.exec())
        if mode == "decoupled":
            return [outputs(r) for r in repeat_request([4, 5, 6]).exec(decoupled=True)]
        if mode == "decoupled_without_flag":
            try:
                return outputs(repeat_request([4, 5, 6]).exec())
            except Exception as e:
                return {"raised": f"{type(e).__name__}: {e}"}
        if mode == "gather":
            pending = [add_sub_request([i] * 4, [1] * 4).async_exec() for i in range(4)]
            return [outputs(r) for r in await asyncio.gather(*pending)]
        if mode == "timeout":
            busy = pb_utils.InferenceRequest(
                model_name="slow",
                inputs=[pb_utils.Tensor("INPUT0", np.array([[1]], dtype=np.int32))],
                requested_output_names=["OUTPUT0"],
            ).async_exec()
            await asyncio.sleep(0.3)
            late = pb_utils.InferenceRequest(
                model_name="slow",
                inputs=[pb_utils.Tensor("INPUT0", np.array([[2]], dtype=np.int32))],
                requested_output_names=["OUTPUT0"],
                timeout=100000,
            )
            first = outputs(late.exec())
            return {"late": first, "busy": outputs(await busy)}
        if mode == "cancel":
            iterator = repeat_request(list(range(50)), delay_ms=100).exec(decoupled=True)
            got = [outputs(next(iterator))]
            iterator.cancel()
            rest = [outputs(r) for r in iterator]
            return {"first": got, "rest_count": len(rest),
                    "rest_errors": [r for r in rest if "error" in r]}
        if mode == "multiprocess":
            with multiprocessing.Pool(4) as pool:
                return pool.map(pool_add_sub, range(8))
        if mode == "init_bls":
            return {"init_bls": self.init_bls}
        raise KeyError(mode)
