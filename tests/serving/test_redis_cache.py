"""The Redis response cache (`--cache-config redis,host=H --cache-config
redis,port=P`, Triton's redis cache): replicas pointed at one real
`redis-server` answer each other's requests; Redis going down means misses
and a warning, never failed requests, and the cache comes back with Redis;
credentials (flags or TRITONCACHE_REDIS_* variables), database numbers and
TLS as Triton's redis cache takes them; a Redis that does not answer at
start-up stops the start.

oxiserve-only: the reference Triton build has no redis cache library (its
L0_response_cache test builds one), so these run against oxiserve alone."""

import time

import pytest
import tritonclient.http as httpclient

from cache_helpers import CACHE, grpc_infer, stats
from management_models import executions, infer, logging_model
from python_models import write_repo
from redis_server import RedisServer
from servers import Server, run_to_exit
from tls_certs import Authority

pytestmark = pytest.mark.oxiserve_only

PASSWORD = "redis123!"


def redis_flags(redis, *extra):
    return ["--cache-config", "redis,host=127.0.0.1", "--cache-config", f"redis,port={redis.port}",
            *(f"--cache-config=redis,{setting}" for setting in extra)]


@pytest.fixture
def redis(tmp_path):
    with RedisServer(tmp_path) as server:
        yield server


@pytest.fixture
def repo(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    repo = write_repo(tmp_path / "repo", [logging_model("cached", logs / "cached", warmup=CACHE)])
    return repo, logs / "cached"


def test_replicas_share_what_one_computed(redis, repo):
    repo, log = repo
    with Server(repo, redis_flags(redis)) as first, Server(repo, redis_flags(redis)) as second:
        a = httpclient.InferenceServerClient(first.url)
        b = httpclient.InferenceServerClient(second.url)
        assert infer(a, "cached", (1, 2, 3, 4)) == [1, 2, 3, 4]
        assert redis.keys() == 1
        # The second replica answers from what the first stored.
        assert infer(b, "cached", (1, 2, 3, 4)) == [1, 2, 3, 4]
        assert grpc_infer(second, "cached", (1, 2, 3, 4)) == [1, 2, 3, 4]
        assert executions(log) == [1]
        assert infer(b, "cached", (5, 6, 7, 8)) == [5, 6, 7, 8]
        assert infer(a, "cached", (5, 6, 7, 8)) == [5, 6, 7, 8]
        assert executions(log) == [1, 1]
        assert redis.keys() == 2

        first_stats = stats(a, "cached")["inference_stats"]
        second_stats = stats(b, "cached")["inference_stats"]
        assert (first_stats["cache_miss"]["count"], first_stats["cache_hit"]["count"]) == (1, 1)
        assert (second_stats["cache_miss"]["count"], second_stats["cache_hit"]["count"]) == (1, 2)
        assert stats(b, "cached")["inference_count"] == 1
        a.close()
        b.close()


def test_redis_down_means_misses_never_failures(redis, repo):
    repo, log = repo
    with Server(repo, redis_flags(redis)) as server:
        client = httpclient.InferenceServerClient(server.url)
        assert infer(client, "cached", (1, 1, 1, 1)) == [1, 1, 1, 1]
        redis.stop()
        for _ in range(5):
            assert infer(client, "cached", (2, 2, 2, 2)) == [2, 2, 2, 2]
        assert executions(log) == [1] * 6, "every request ran while Redis was down"
        warnings = [line for line in server.output().splitlines() if "is not answering" in line]
        assert len(warnings) == 1, server.output()

        redis.start()  # empty again, on the same port
        time.sleep(1.2)  # past the outage's retry interval, so the next request asks Redis
        assert infer(client, "cached", (3, 3, 3, 3)) == [3, 3, 3, 3]
        assert infer(client, "cached", (3, 3, 3, 3)) == [3, 3, 3, 3]
        assert executions(log) == [1] * 7, "the cache answers again"
        assert "is answering again" in server.output()
        assert client.is_server_live() and client.is_model_ready("cached")
        client.close()


def test_start_up_needs_redis_to_answer(tmp_path, repo):
    repo, _ = repo
    closed = RedisServer(tmp_path)
    closed.stop()
    status, out = run_to_exit(repo, redis_flags(closed))
    assert status not in (0, None), out
    assert "Failed to initialize RedisCache" in out and "refused" in out.lower(), out


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--cache-config=redis,port=6379"], "Must at a minimum specify 'host' and 'port'"),
        (["--cache-config=redis,host=localhost", "--cache-config=redis,port=nonexistent"],
         "--cache-config=redis,port=nonexistent: the port must be a number"),
        (["--cache-config=redis,host=localhost", "--cache-config=redis,colour=red"],
         "the redis cache has no setting 'colour'"),
        (["--cache-config=local,size=8192", "--cache-config=redis,key=value"],
         "found multiple cache configurations"),
    ],
)
def test_bad_redis_flags_stop_start_up(tmp_path, flags, message):
    repo = write_repo(tmp_path / "repo", [])
    status, out = run_to_exit(repo, flags)
    assert status not in (0, None), out
    assert message in out, out


def test_unknown_host_stops_start_up(repo):
    repo, _ = repo
    status, out = run_to_exit(repo, ["--cache-config=redis,host=no-such-host.invalid",
                                     "--cache-config=redis,port=6379"])
    assert status not in (0, None), out
    assert "Failed to initialize RedisCache" in out, out


@pytest.fixture
def locked_redis(tmp_path):
    with RedisServer(tmp_path, ["--requirepass", PASSWORD], cli=["-a", PASSWORD, "--no-auth-warning"]) as server:
        yield server


@pytest.mark.parametrize(
    "flags, env",
    [
        ([f"password={PASSWORD}"], {}),
        ([], {"TRITONCACHE_REDIS_PASSWORD": PASSWORD}),
        ([], {"TRITONCACHE_REDIS_USERNAME": "default", "TRITONCACHE_REDIS_PASSWORD": PASSWORD}),
        ([f"password={PASSWORD}"], {"TRITONCACHE_REDIS_PASSWORD": "wrong"}),
    ],
    ids=["flag", "env", "env-user", "flag-wins"],
)
def test_credentials(locked_redis, repo, monkeypatch, flags, env):
    repo, log = repo
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with Server(repo, redis_flags(locked_redis, *flags)) as server:
        client = httpclient.InferenceServerClient(server.url)
        infer(client, "cached")
        infer(client, "cached")
        assert executions(log) == [1]
        assert locked_redis.keys() == 1
        client.close()


@pytest.mark.parametrize(
    "flags, env, message",
    [
        (["password=wrong"], {}, "WRONGPASS"),
        ([], {"TRITONCACHE_REDIS_PASSWORD": "wrong"}, "WRONGPASS"),
        ([], {}, "NOAUTH"),
    ],
    ids=["flag", "env", "none"],
)
def test_wrong_credentials_stop_start_up(locked_redis, repo, monkeypatch, flags, env, message):
    repo, _ = repo
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    status, out = run_to_exit(repo, redis_flags(locked_redis, *flags))
    assert status not in (0, None), out
    assert "Failed to initialize RedisCache" in out and message in out, out


def test_entries_go_to_the_database_named(redis, repo):
    repo, _ = repo
    with Server(repo, redis_flags(redis, "db=3")) as server:
        client = httpclient.InferenceServerClient(server.url)
        infer(client, "cached")
        assert (redis.keys(db=0), redis.keys(db=3)) == (0, 1)
        client.close()


def test_tls_with_client_certificates(tmp_path, repo):
    repo, log = repo
    authority = Authority("redis test CA")
    ca = authority.write(tmp_path / "ca.pem")
    server_cert, server_key = authority.issue(tmp_path / "redis.pem", tmp_path / "redis.key")
    client_cert, client_key = authority.issue(tmp_path / "client.pem", tmp_path / "client.key", client=True)
    tls_files = ["--tls-cert-file", str(server_cert), "--tls-key-file", str(server_key),
                 "--tls-ca-cert-file", str(ca), "--tls-auth-clients", "yes"]
    cli = ["--tls", "--cacert", str(ca), "--cert", str(client_cert), "--key", str(client_key)]
    with RedisServer(tmp_path, tls_files, cli=cli, tls=True) as redis:
        tls = ["tls_enabled=true", f"cert={client_cert}", f"key={client_key}", f"cacert={ca}"]
        # Redis's certificate names localhost, the host TLS checks.
        flags = ["--cache-config", "redis,host=localhost", "--cache-config", f"redis,port={redis.port}",
                 *(f"--cache-config=redis,{s}" for s in tls)]
        with Server(repo, flags) as server:
            client = httpclient.InferenceServerClient(server.url)
            infer(client, "cached")
            infer(client, "cached")
            assert executions(log) == [1]
            assert redis.keys() == 1
            client.close()
        # Without the client certificate Redis refuses the handshake.
        status, out = run_to_exit(repo, flags[:4] + [f"--cache-config=redis,{s}" for s in tls[::3]])
        assert status not in (0, None), out
        assert "Failed to initialize RedisCache" in out, out
