"""--http-restricted-api=<apis>:<header>=<value>, as Triton 2.51 answers it:
requests to a restricted API group without the header (or with another
value) get 403 and "This API is restricted, expecting header '<header>'";
other groups answer as usual."""

import pytest

from helpers import Http, expect_error, int32_body
from models import identity, write_repository
from servers import TARGET, Server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = write_repository(
        tmp_path_factory.mktemp("restricted"), [identity("id_int32", "INT32")], TARGET
    )
    flags = [
        "--http-restricted-api=model-repository,health:admin-key=admin-value",
        "--http-restricted-api=inference:infer-key=infer-value",
    ]
    with Server(repo, flags) as server:
        yield server


@pytest.fixture
def http(server):
    with Http(server.url) as http:
        yield http


ADMIN = {"admin-key": "admin-value"}


def test_restricted_groups_need_their_header(http):
    for resp in [
        http.get("/v2/health/live"),
        http.get("/v2/health/ready"),
        http.get("/v2/models/id_int32/ready"),
        http.post("/v2/repository/index"),
        http.get("/v2/health/live", headers={"admin-key": "wrong"}),
    ]:
        expect_error(resp, 403, "This API is restricted, expecting header 'admin-key'")
    expect_error(http.infer("id_int32", int32_body()), 403,
                 "This API is restricted, expecting header 'infer-key'")
    expect_error(http.infer("id_int32", int32_body(), version=1), 403,
                 "This API is restricted, expecting header 'infer-key'")


def test_the_header_opens_its_group_only(http):
    assert http.get("/v2/health/live", headers=ADMIN).status_code == 200
    assert http.get("/v2/health/live", headers={"Admin-Key": "admin-value"}).status_code == 200
    assert http.post("/v2/repository/index", headers=ADMIN).status_code == 200
    expect_error(http.infer("id_int32", int32_body(), headers=ADMIN), 403, "'infer-key'")
    resp = http.infer("id_int32", int32_body(), headers={"infer-key": "infer-value"})
    assert resp.status_code == 200, resp.text


def test_unrestricted_groups_answer_as_usual(http):
    assert http.get("/v2").status_code == 200
    assert http.get("/v2/models/id_int32").status_code == 200
    assert http.get("/v2/models/id_int32/config").status_code == 200
    assert http.get("/v2/models/stats").status_code == 200
