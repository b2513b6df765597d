"""Kubernetes manifests: validated offline against the bundled OpenAPI schemas, plus our rules."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ascend_audit.policy import parse_policy

kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is not installed")

K8S = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"
MANIFESTS = sorted(K8S.glob("*.yaml"))
VERSIONS = ("1.28", "1.30", "1.37")
NPU_RESOURCES = (
    "huawei.com/Ascend910",
    "huawei.com/Ascend310P",
    "huawei.com/Ascend310",
    "huawei.com/npu",
)
DEVICE_PLUGIN_LABELS = {
    "accelerator",
    "accelerator-type",
    "servertype",
    "workerselector",
    "ascend",
    "node.kubernetes.io/npu.chip.name",
    "kubernetes.io/hostname",
}
WRITABLE_HOST_PATHS = {"/var/lib/ascend-audit", "/var/lib/prometheus/node-exporter"}


def _docs() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in MANIFESTS:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                out.append((path.name, doc))
    return out


DOCS = _docs()


def _pod_spec(doc: dict[str, Any]) -> dict[str, Any] | None:
    if doc["kind"] == "Pod":
        return doc["spec"]
    if doc["kind"] in ("Job", "DaemonSet"):
        return doc["spec"]["template"]["spec"]
    return None


PODS = [(name, doc["kind"], spec) for name, doc in DOCS if (spec := _pod_spec(doc))]


def test_the_expected_manifests_exist():
    kinds = {(name, doc["kind"]) for name, doc in DOCS}
    assert ("daemonset.yaml", "DaemonSet") in kinds
    assert ("job.yaml", "Job") in kinds
    assert ("job-framework-probe.yaml", "Job") in kinds
    assert ("namespace-policy.yaml", "ConfigMap") in kinds


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name,doc", DOCS, ids=[f"{n}:{d['kind']}" for n, d in DOCS])
def test_manifest_validates_strictly_against_the_openapi_schema(name, doc, version):
    assert kv.validate(doc, version, strict=True)


def test_validator_catches_a_wrong_type():
    """The validator is not a no-op: a string where a bool belongs is refused."""
    ds = next(doc for _, doc in DOCS if doc["kind"] == "DaemonSet")
    bad = yaml.safe_load(yaml.safe_dump(ds))
    bad["spec"]["template"]["spec"]["containers"][0]["securityContext"]["privileged"] = "yes"
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, "1.30", strict=True)
    bad["spec"]["template"]["spec"]["containers"][0]["securityContext"]["privileged"] = True
    bad["spec"]["template"]["spec"]["containers"][0]["unknownField"] = 1
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, "1.30", strict=True)


@pytest.mark.skipif(shutil.which("unshare") is None, reason="no unshare(1) to cut the network")
def test_cli_validates_offline_without_any_network():
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("cannot create a network namespace here (needs root or user namespaces)")
    out = subprocess.run(
        [
            "unshare",
            "-n",
            sys.executable,
            "-m",
            "kubernetes_validate",
            "--strict",
            "-k",
            "1.30",
            *map(str, MANIFESTS),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ERROR" not in out.stdout and "FATAL" not in out.stdout


@pytest.mark.parametrize("name,kind,spec", PODS, ids=[f"{n}:{k}" for n, k, _ in PODS])
def test_pod_security_and_mounts(name, kind, spec):
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    assert spec.get("automountServiceAccountToken") is False
    for c in spec["containers"]:
        sc = c.get("securityContext", {})
        assert sc.get("readOnlyRootFilesystem") is True, (name, c["name"])
        # the API server refuses this pair; the schema alone would not
        assert not (sc.get("privileged") and sc.get("allowPrivilegeEscalation") is False)
        if not sc.get("privileged"):
            assert sc.get("allowPrivilegeEscalation") is False, (name, c["name"])
        assert "limits" in c.get("resources", {}), (name, c["name"])
        for m in c.get("volumeMounts", []):
            host = volumes[m["name"]].get("hostPath")
            if host and host["path"] not in WRITABLE_HOST_PATHS:
                assert m.get("readOnly") is True, f"{name}: {m['mountPath']} must be read-only"
            if host:
                # nothing is ever created on the node except the output directories
                created = host.get("type") in ("DirectoryOrCreate", "FileOrCreate")
                assert not created or host["path"] in WRITABLE_HOST_PATHS, host
        # the NPU resource only where the framework probe needs the chips
        requested = {
            **c.get("resources", {}).get("requests", {}),
            **c.get("resources", {}).get("limits", {}),
        }
        npu = [r for r in requested if r in NPU_RESOURCES]
        assert bool(npu) == (name == "job-framework-probe.yaml"), (name, npu)


@pytest.mark.parametrize("name", ["daemonset.yaml", "job.yaml"])
def test_node_audits_read_the_host_under_sysroot(name):
    ((_, _, spec),) = [p for p in PODS if p[0] == name]
    (c,) = spec["containers"]
    script = " ".join(c["args"])
    assert "--sysroot /host" in script and "--policy /etc/ascend-audit/policy.toml" in script
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    for host_path in ("/sys", "/proc", "/dev", "/usr/local/Ascend", "/etc/ascend_install.info"):
        m = mounts[f"/host{host_path}"]
        assert volumes[m["name"]]["hostPath"]["path"] == host_path
        assert m["readOnly"] is True
    assert volumes[mounts["/var/lib/ascend-audit"]["name"]]["hostPath"]["path"] == (
        "/var/lib/ascend-audit"
    )
    assert volumes[mounts["/etc/ascend-audit"]["name"]]["configMap"]["name"] == (
        "ascend-audit-policy"
    )
    if name == "daemonset.yaml":
        assert "--prometheus /textfile/ascend_audit.prom" in script
        assert volumes[mounts["/textfile"]["name"]]["hostPath"]["path"] == (
            "/var/lib/prometheus/node-exporter"
        )
        assert "while true" in script and "sleep" in script


@pytest.mark.parametrize(
    "name,kind,spec", [p for p in PODS if p[1] != "Pod"], ids=[n for n, k, _ in PODS if k != "Pod"]
)
def test_npu_nodes_are_selected_by_device_plugin_labels(name, kind, spec):
    keys = set(spec.get("nodeSelector", {}))
    terms = (
        spec.get("affinity", {})
        .get("nodeAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution", {})
        .get("nodeSelectorTerms", [])
    )
    for term in terms:
        keys |= {e["key"] for e in term.get("matchExpressions", [])}
    assert "accelerator" in keys, name
    assert keys <= DEVICE_PLUGIN_LABELS, keys - DEVICE_PLUGIN_LABELS
    tolerated = {t.get("key") for t in spec.get("tolerations", [])}
    assert "huawei.com/Ascend910" in tolerated


def test_job_places_one_pod_per_node():
    job = next(doc for name, doc in DOCS if name == "job.yaml")
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"]
    anti = spec["template"]["spec"]["affinity"]["podAntiAffinity"]
    (term,) = anti["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "kubernetes.io/hostname"


def test_configmap_policy_is_a_valid_policy():
    cm = next(doc for _, doc in DOCS if doc["kind"] == "ConfigMap")
    policy = parse_policy(cm["data"]["policy.toml"], "ConfigMap ascend-audit-policy")
    assert policy["audit.required_layers"] == ("driver",) or list(
        policy["audit.required_layers"]
    ) == ["driver"]
    assert policy["driver.expected_npu_count"] == 8


def test_every_namespaced_object_is_in_the_audit_namespace():
    for name, doc in DOCS:
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == "ascend-audit", name
