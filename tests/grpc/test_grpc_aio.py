"""The asyncio client (`tritonclient.grpc.aio`): unary calls and a stream,
several requests in flight at once."""

import asyncio

import numpy as np
import tritonclient.grpc.aio as aioclient

from grpc_helpers import infer_input


def _input(i):
    return [infer_input("INPUT0", np.array([[i, i + 1]], dtype=np.int32), "INT32")]


def test_concurrent_unary_calls(main_server):
    async def run():
        async with aioclient.InferenceServerClient(main_server.grpc_url) as client:
            assert await client.is_server_ready()
            metadata = await client.get_model_metadata("id_int32", as_json=True)
            assert metadata["name"] == "id_int32"
            results = await asyncio.gather(
                *(client.infer("id_int32", _input(i), request_id=str(i)) for i in range(16))
            )
            return results

    for i, result in enumerate(asyncio.run(run())):
        assert result.get_response().id == str(i)
        assert result.as_numpy("OUTPUT0").tolist() == [[i, i + 1]]


def test_stream_of_requests(main_server):
    async def requests():
        for i in range(8):
            yield {"model_name": "id_int32", "inputs": _input(i), "request_id": str(i)}

    async def run():
        async with aioclient.InferenceServerClient(main_server.grpc_url) as client:
            out = []
            async for result, error in client.stream_infer(requests()):
                assert error is None, error
                out.append(result)
                if len(out) == 8:
                    break
            return out

    results = asyncio.run(run())
    assert sorted(int(r.get_response().id) for r in results) == list(range(8))
    for result in results:
        i = int(result.get_response().id)
        assert result.as_numpy("OUTPUT0").tolist() == [[i, i + 1]]


def test_errors_on_an_async_stream(main_server):
    async def requests():
        yield {"model_name": "no_such_model", "inputs": _input(0), "request_id": "bad"}
        yield {"model_name": "id_int32", "inputs": _input(1), "request_id": "good"}

    async def run():
        async with aioclient.InferenceServerClient(main_server.grpc_url) as client:
            out = []
            async for item in client.stream_infer(requests()):
                out.append(item)
                if len(out) == 2:
                    break
            return out

    (bad, bad_error), (good, good_error) = asyncio.run(run())
    assert bad is None and "no_such_model" in bad_error.message()
    assert good_error is None and good.get_response().id == "good"
