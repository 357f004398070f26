import asyncio

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    """Decoupled, `async def execute` (after Triton's async_execute_decouple_bls):
    each request awaits a decoupled BLS stream of `async_wait_all` and forwards
    its responses."""

    async def one(self, request):
        expected = pb_utils.get_input_tensor_by_name(request, "EXPECTED").as_numpy()
        call = pb_utils.InferenceRequest(
            model_name="async_wait_all",
            inputs=[pb_utils.Tensor("EXPECTED", expected)],
            requested_output_names=["IN_FLIGHT"],
        )
        sender = request.get_response_sender()
        for response in await call.async_exec(decoupled=True):
            out = pb_utils.get_output_tensor_by_name(response, "IN_FLIGHT")
            if response.has_error():
                sender.send(pb_utils.InferenceResponse(error=response.error()))
            elif out is not None:
                sender.send(pb_utils.InferenceResponse(
                    [pb_utils.Tensor("IN_FLIGHT", out.as_numpy())]))
        sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)

    async def execute(self, requests):
        await asyncio.gather(*(self.one(r) for r in requests))
        return None
