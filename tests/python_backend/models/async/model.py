import asyncio
import time

import numpy as np
import triton_python_backend_utils as pb_utils

DECOUPLED = __DECOUPLED__
SLEEP_S = __SLEEP__


class TritonPythonModel:
    async def execute(self, requests):
        responses = []
        for request in requests:
            start = time.time()
            await asyncio.sleep(SLEEP_S)
            end = time.time()
            response = pb_utils.InferenceResponse(
                [pb_utils.Tensor("TIMES", np.array([start, end], dtype=np.float64))]
            )
            if DECOUPLED:
                request.get_response_sender().send(
                    response, flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
                )
            else:
                responses.append(response)
        return None if DECOUPLED else responses
