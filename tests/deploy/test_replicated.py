"""A replicated set-up with real parts: two oxiserve replicas serving one model
repository from a local S3 server (moto's server mode, checking credentials),
behind nginx (Debian's) as the load balancer, scraped by a real Prometheus
server (Debian's `prometheus`). Traffic goes through nginx from
several threads; one replica is killed with SIGKILL mid-traffic. Only the
requests in flight at the kill may fail; every request sent after it succeeds
on the other replica, and Prometheus holds one series per replica.

scripts/tools.sh installs nginx and Prometheus (as root, as in CI).
"""

import os
import shutil
import signal
import subprocess
import threading
import time

import numpy as np
import pytest
import requests
import tritonclient.http as httpclient
import yaml

from helpers import wait_for
from models import identity, write_repository
from remote_server import RemoteServer
from s3_helpers import Moto
from servers import REPO_ROOT, TARGET, accepts, free_port, terminate

THREADS = 4
# Each execution takes this long, so requests are in flight when a replica dies.
DELAY_MS = 20
MODEL = "echo"
ADAPTER_RULES = REPO_ROOT / "deploy/kubernetes/prometheus-adapter/rules.yaml"


def _tool(name):
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")
    if path is None:
        pytest.skip(f"{name} is not installed: run scripts/tools.sh as root")
    return path


class Child:
    """A tool run in the foreground as the test's child, its output kept in a file."""

    def __init__(self, args, log):
        self.log = log
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def check_running(self):
        if self.proc.poll() is not None:
            pytest.fail(f"{self.proc.args[0]} exited ({self.proc.returncode}):\n"
                        f"{self.log.read_text()}", pytrace=False)

    def stop(self):
        terminate(self.proc)


def _nginx(tmp, replicas):
    """nginx in the foreground on a free port, balancing over the replicas' HTTP
    ports: keep-alive upstream connections, and a request that cannot reach a
    replica (connection refused) goes to the next one."""
    port = free_port()
    servers = "\n".join(
        f"    server 127.0.0.1:{r.port} max_fails=1 fail_timeout=30s;" for r in replicas
    )
    # Running as root, workers would switch to `nobody`, who cannot write here.
    user = "user root;" if os.geteuid() == 0 else ""
    conf = tmp / "nginx.conf"
    conf.write_text(f"""\
{user}
daemon off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log stderr warn;
events {{ worker_connections 256; }}
http {{
  access_log off;
  client_body_temp_path {tmp}/body;
  proxy_temp_path {tmp}/proxy;
  upstream oxiserve {{
{servers}
    keepalive 16;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://oxiserve;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream error timeout;
    }}
  }}
}}
""")
    child = Child([_tool("nginx"), "-p", str(tmp), "-c", str(conf), "-e", "stderr"],
                  tmp / "nginx.log")
    wait_for(lambda: child.check_running() or accepts(port), what="nginx to listen")
    return child, f"127.0.0.1:{port}"


def _prometheus(tmp, replicas):
    """Prometheus scraping both replicas' metrics ports every second."""
    port = free_port()
    targets = [f"127.0.0.1:{r.metrics_port}" for r in replicas]
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
        "scrape_configs": [{"job_name": "oxiserve", "static_configs": [{"targets": targets}]}],
    }
    conf = tmp / "prometheus.yml"
    conf.write_text(yaml.safe_dump(config))
    child = Child([
        _tool("prometheus"), f"--config.file={conf}", f"--storage.tsdb.path={tmp}/tsdb",
        f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn",
    ], tmp / "prometheus.log")
    url = f"http://127.0.0.1:{port}"

    def ready():
        child.check_running()
        try:
            return requests.get(f"{url}/-/ready", timeout=1).status_code == 200
        except requests.ConnectionError:
            return False

    wait_for(ready, what="Prometheus to be ready")
    return child, url


def query(prometheus, promql):
    """An instant query: {instance: value} of the vector it returns."""
    resp = requests.get(f"{prometheus}/api/v1/query", params={"query": promql}, timeout=5)
    resp.raise_for_status()
    body = resp.json()
    assert body["status"] == "success", body
    return {s["metric"].get("instance"): float(s["value"][1]) for s in body["data"]["result"]}


def query_until(prometheus, promql, accept, what):
    """Repeats the query until `accept(result)`; returns that result."""
    def accepted():
        result = query(prometheus, promql)
        return result if accept(result) else None
    return wait_for(accepted, what=what)


class Traffic:
    """Threads sending inference requests through the load balancer, each with
    its own client, until stopped. Every request is recorded as
    (sent at, answered at, error or None), on the monotonic clock."""

    def __init__(self, url):
        self.url = url
        self.records = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(k,)) for k in range(THREADS)]
        for t in self._threads:
            t.start()

    def _run(self, k):
        client = httpclient.InferenceServerClient(self.url, network_timeout=30)
        data = np.full((1, 4), k, dtype=np.float32)
        inp = httpclient.InferInput("INPUT0", [1, 4], "FP32")
        inp.set_data_from_numpy(data)
        try:
            while not self._stop.is_set():
                sent = time.monotonic()
                try:
                    result = client.infer(MODEL, [inp])
                    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), data)
                    error = None
                except Exception as e:  # a failed request is a record, not a crash
                    error = f"{type(e).__name__}: {e}"
                with self._lock:
                    self.records.append((sent, time.monotonic(), error))
        finally:
            client.close()

    def succeeded_since(self, t):
        with self._lock:
            return sum(1 for sent, _, error in self.records if sent > t and error is None)

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join(60)
        return self.records


@pytest.fixture
def cluster(tmp_path):
    """(replicas, nginx address, Prometheus URL) over one model repository in S3."""
    for tool in ("nginx", "prometheus"):
        _tool(tool)  # skips the test when one is missing
    repo = write_repository(tmp_path / "models",
                            [identity(MODEL, "FP32", dims=[4], execute_delay_ms=DELAY_MS)],
                            TARGET)
    started = []
    try:
        s3 = Moto(tmp_path / "moto.log")
        started.append(s3)
        s3.upload("models", repo)
        replicas = [RemoteServer(s3.url("models"), tmp_path, env=s3.env()) for _ in range(2)]
        started += replicas
        lb, lb_url = _nginx(tmp_path, replicas)
        started.append(lb)
        prom, prom_url = _prometheus(tmp_path, replicas)
        started.append(prom)
        yield replicas, lb_url, prom_url
    finally:
        for thing in reversed(started):
            thing.stop()


def test_traffic_survives_a_killed_replica(cluster):
    (victim, survivor), lb_url, prometheus = cluster
    victim_instance = f"127.0.0.1:{victim.metrics_port}"
    survivor_instance = f"127.0.0.1:{survivor.metrics_port}"
    success = f'nv_inference_request_success{{job="oxiserve",model="{MODEL}"}}'

    traffic = Traffic(lb_url)
    try:
        # Both replicas serve, and Prometheus has a series for each.
        before = query_until(prometheus, success,
                             lambda v: len(v) == 2 and min(v.values()) > 0,
                             "a growing success count from both replicas in Prometheus")
        assert set(before) == {victim_instance, survivor_instance}

        in_flight = THREADS  # each thread has at most one request outstanding
        os.killpg(victim.proc.pid, signal.SIGKILL)
        victim.proc.wait()
        killed_at = time.monotonic()

        # The survivor takes all traffic: requests keep succeeding, and its
        # count in Prometheus grows past what it had before the kill.
        wait_for(lambda: traffic.succeeded_since(killed_at) >= 50,
                 what="50 successful requests after the kill")
        wait_for(lambda: query(prometheus, success).get(survivor_instance, 0)
                 > before[survivor_instance] + 50,
                 what="the survivor's count in Prometheus to grow")
        # Prometheus sees the dead replica as down and the live one as up.
        wait_for(lambda: query(prometheus, 'up{job="oxiserve"}')
                 == {victim_instance: 0.0, survivor_instance: 1.0},
                 what="up == 0 for the killed replica and 1 for the other")
    finally:
        records = traffic.stop()

    failures = [(sent, error) for sent, _, error in records if error is not None]
    # Only requests sent before the kill failed, at most one per thread, each
    # with nginx's 502 (the replica died holding it).
    assert len(failures) <= in_flight, failures
    assert all(sent < killed_at and "[502]" in error for sent, error in failures), failures
    assert len(records) - len(failures) > 100

    # When traffic has stopped, Prometheus' value is the survivor's own count.
    def own_count():
        text = requests.get(f"http://127.0.0.1:{survivor.metrics_port}/metrics", timeout=5).text
        (sample,) = [line for line in text.splitlines()
                     if line.startswith(f'nv_inference_request_success{{model="{MODEL}"')]
        return float(sample.rsplit(" ", 1)[1])

    count = own_count()
    wait_for(lambda: query(prometheus, success).get(survivor_instance) == count,
             what="Prometheus to hold the survivor's final count")


def test_autoscaling_rules_on_real_series(cluster):
    """The prometheus-adapter rules behind the HorizontalPodAutoscaler
    (deploy/kubernetes/prometheus-adapter/rules.yaml), run by a real Prometheus
    over the replicas' real series: one value per replica. In Kubernetes the
    adapter groups by pod; here `instance` stands for it."""
    replicas, lb_url, prometheus = cluster
    instances = {f"127.0.0.1:{r.metrics_port}" for r in replicas}
    traffic = Traffic(lb_url)
    try:
        rules = yaml.safe_load(ADAPTER_RULES.read_text())["rules"]
        assert rules
        for rule in rules:
            series = rule["seriesQuery"].split("{")[0]
            promql = (rule["metricsQuery"]
                      .replace("<<.Series>>", series)
                      .replace("<<.LabelMatchers>>", 'job="oxiserve"')
                      .replace("<<.GroupBy>>", "instance"))
            values = query_until(prometheus, promql, lambda v: set(v) == instances,
                                 f"one value per replica of {promql}")
            assert all(v >= 0 for v in values.values()), values
    finally:
        traffic.stop()
