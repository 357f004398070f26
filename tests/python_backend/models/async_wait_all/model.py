import asyncio

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    """Decoupled, `async def execute`: each request waits (up to WAIT_S) until
    EXPECTED requests are in flight at once, then answers IN_FLIGHT = how many
    it saw, with FINAL. Requests that reach it one at a time each see 1."""

    async def execute(self, requests):
        if not hasattr(self, "arrived"):
            self.arrived = 0
            self.all_in = asyncio.Event()
        for request in requests:
            expected, wait_s = pb_utils.get_input_tensor_by_name(
                request, "EXPECTED").as_numpy().reshape(-1)[:2].tolist()
            self.arrived += 1
            if self.arrived >= expected:
                self.all_in.set()
            try:
                await asyncio.wait_for(self.all_in.wait(), wait_s)
            except asyncio.TimeoutError:
                pass
            seen = np.array([self.arrived], dtype=np.int32)
            request.get_response_sender().send(
                pb_utils.InferenceResponse([pb_utils.Tensor("IN_FLIGHT", seen)]),
                flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL,
            )
        return None
