"""FWK-MINDIE-001..004: MindIE config.json consistency on fake nodes and the real default config."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from fakenode import FakeNpu, npu_smi_outputs
from shared_fixtures import fixture
from standins import node_env, standin
from sysroot import DIR, write_tree

from ascend_audit.context import Context, Inputs
from ascend_audit.facts.mindie_config import parse_mindie_json
from ascend_audit.host.base import ProcessInfo
from ascend_audit.host.live import LiveHost
from ascend_audit.model import Status
from ascend_audit.policy import parse_policy
from ascend_audit.registry import load_registry

REAL = "framework/mindie_service_default_config.json"
WEIGHTS = "/data/models/qwen2.5-7b"
GOOD = {
    "Version": "1.0.0",
    "ServerConfig": {
        "ipAddress": "127.0.0.1",
        "port": 1025,
        "managementPort": 1026,
        "metricsPort": 1027,
        "httpsEnabled": False,
        "inferMode": "standard",
        "interCommTLSEnabled": False,
        "interCommPort": 1121,
        "tokenTimeout": 600,
        "e2eTimeout": 600,
    },
    "BackendConfig": {
        "backendName": "mindieservice_llm_engine",
        "modelInstanceNumber": 1,
        "npuDeviceIds": [[0, 1, 2, 3]],
        "multiNodesInferEnabled": False,
        "interNodeTLSEnabled": False,
        "ModelDeployConfig": {
            "maxSeqLen": 4096,
            "maxInputTokenLen": 2048,
            "ModelConfig": [
                {
                    "modelInstanceType": "Standard",
                    "modelName": "qwen",
                    "modelWeightPath": WEIGHTS,
                    "worldSize": 4,
                    "cpuMemSize": 0,
                    "npuMemSize": -1,
                    "backendType": "atb",
                    "tp": 4,
                }
            ],
        },
        "ScheduleConfig": {
            "templateType": "Standard",
            "cacheBlockSize": 128,
            "maxPrefillBatchSize": 50,
            "maxPrefillTokens": 8192,
            "maxBatchSize": 200,
            "maxIterTimes": 2048,
        },
    },
}
MODEL_FILES = {
    f"{WEIGHTS}/config.json": "{}\n",
    f"{WEIGHTS}/model-00001-of-00001.safetensors": "x",
}


def _set(doc: dict, path: str, value: object) -> dict:
    node = doc
    parts = path.split(".")
    for p in parts[:-1]:
        node = node[p][0] if p == "ModelConfig" else node[p]
    node[parts[-1]] = value
    return doc


def variant(**changes: object) -> dict:
    doc = copy.deepcopy(GOOD)
    for path, value in changes.items():
        _set(doc, path.replace("__", "."), value)
    return doc


class NodeHost(LiveHost):
    def __init__(self, root: str, bindir: Path, procs: list[ProcessInfo]) -> None:
        super().__init__(root, environ=node_env(bindir))
        self.procs = procs

    def processes(self) -> list[ProcessInfo]:
        return list(self.procs)


def judge(
    tmp_path: Path,
    cid: str,
    doc: dict | str | Path | None = None,
    files: dict | None = None,
    rank_table: dict | None = None,
    procs: list[ProcessInfo] | None = None,
    npus: int = 8,
):  # type: ignore[no-untyped-def]
    root, bindir = tmp_path / "root", tmp_path / "bin"
    root.mkdir(exist_ok=True)
    write_tree(root, {"/etc/hostname": "node-a\n", **MODEL_FILES, **(files or {})})
    standin(
        bindir,
        "npu-smi",
        npu_smi_outputs([FakeNpu(i, f"0000:{i + 1:02X}:00.0") for i in range(npus)]),
    )
    configs: tuple[str, ...] = ()
    if isinstance(doc, Path):
        configs = (str(doc),)
    elif doc is not None:
        p = tmp_path / "config.json"
        p.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=4))
        configs = (str(p),)
    rt = None
    if rank_table is not None:
        rt = tmp_path / "ranktable.json"
        rt.write_text(json.dumps(rank_table))
    inputs = Inputs(serving_configs=configs, rank_table=str(rt) if rt else None)
    ctx = Context(NodeHost(str(root), bindir, procs or []), parse_policy(""), inputs)
    return load_registry(entry_points=False).get(cid).func(ctx)


def rank_table(servers: int) -> dict:
    return {
        "version": "1.0",
        "server_count": str(servers),
        "server_list": [
            {
                "server_id": f"10.0.0.{s + 1}",
                "device": [
                    {"device_id": str(d), "device_ip": f"29.0.{s}.{d}", "rank_id": str(s * 8 + d)}
                    for d in range(8)
                ],
            }
            for s in range(servers)
        ],
        "status": "completed",
    }


# --- parser -----------------------------------------------------------------------------------


def test_parser_reads_keys_with_lines_from_the_real_default_config():
    path = fixture(REAL)
    cfg = parse_mindie_json(path.read_text(), str(path))
    assert cfg.get("worldSize") == 4 and cfg.device_groups == ((0, 1, 2, 3),)
    assert cfg.get("maxSeqLen") == 2560 and cfg.get("maxIterTimes") == 512
    assert cfg.values["maxSeqLen"].text.startswith('"maxSeqLen" : 2560')
    line = path.read_text().splitlines()[cfg.values["port"].lineno - 1]
    assert '"port" : 1025' in line


@pytest.mark.parametrize("text", ["", "{", "[1,2]", '{"BackendConfig": 3}', "\x00\xff" * 50])
def test_parser_hostile_input(text):
    cfg = parse_mindie_json(text, "x.json")
    assert not cfg.ok and cfg.problems


# --- FWK-MINDIE-001 ---------------------------------------------------------------------------


def test_healthy_config_passes_every_mindie_check(tmp_path):
    for cid in ("FWK-MINDIE-001", "FWK-MINDIE-002", "FWK-MINDIE-003", "FWK-MINDIE-004"):
        out = judge(tmp_path, cid, GOOD)
        assert out.status is Status.PASS, (cid, out.summary)


def test_no_config_skips(tmp_path):
    assert judge(tmp_path, "FWK-MINDIE-001").status is Status.SKIP


def test_unreadable_config_is_an_error(tmp_path):
    out = judge(tmp_path, "FWK-MINDIE-001", '{"BackendConfig": {"npuDeviceIds": [[0]], ')
    assert out.status is Status.ERROR and "invalid JSON" in out.summary  # cut short
    out = judge(tmp_path, "FWK-MINDIE-001", '{"BackendConfig": 7}')
    assert out.status is Status.ERROR and "no BackendConfig section" in out.summary


@pytest.mark.parametrize(
    ("changes", "phrase"),
    [
        (
            {"BackendConfig__ModelDeployConfig__maxSeqLen": 1024},
            "maxSeqLen=1024 < maxInputTokenLen=2048",
        ),
        ({"BackendConfig__ModelDeployConfig__maxInputTokenLen": 0}, "maxInputTokenLen=0 < 1"),
        (
            {"BackendConfig__ScheduleConfig__maxPrefillTokens": 1024},
            "maxPrefillTokens=1024 < maxInputTokenLen=2048",
        ),
        ({"BackendConfig__ScheduleConfig__maxIterTimes": 0}, "maxIterTimes=0 outside 1..maxSeqLen"),
        (
            {"BackendConfig__ScheduleConfig__maxIterTimes": 5000},
            "maxIterTimes=5000 outside 1..maxSeqLen=4096",
        ),
        ({"BackendConfig__ScheduleConfig__maxPrefillBatchSize": 0}, "maxPrefillBatchSize=0 < 1"),
        (
            {"BackendConfig__ScheduleConfig__maxBatchSize": 10},
            "maxPrefillBatchSize=50 > maxBatchSize=10",
        ),
        ({"BackendConfig__ScheduleConfig__cacheBlockSize": 256}, "cacheBlockSize=256 outside"),
        ({"ServerConfig__tokenTimeout": 7200}, "tokenTimeout=7200 outside 1..3600"),
        ({"ServerConfig__e2eTimeout": 0}, "e2eTimeout=0 outside 1..65535"),
        ({"ServerConfig__inferMode": "fast"}, "inferMode='fast'"),
        (
            {"BackendConfig__ModelDeployConfig__ModelConfig__worldSize": 8},
            "worldSize=8 but npuDeviceIds[0]=[0, 1, 2, 3] has 4 devices",
        ),
        (
            {"BackendConfig__ModelDeployConfig__ModelConfig__tp": 2},
            "dp 1 * tp 2 * cp 1 * pp 1 = 2 != worldSize=4",
        ),
        (
            {"BackendConfig__ModelDeployConfig__ModelConfig__pp": 2},
            "pp=2: MindIE serves with pp = 1",
        ),
        ({"BackendConfig__ModelDeployConfig__ModelConfig__sp": 3}, "sp=3: must be 1 or tp (4)"),
        (
            {"BackendConfig__modelInstanceNumber": 2},
            "modelInstanceNumber=2 but npuDeviceIds has 1 groups",
        ),
        ({"BackendConfig__npuDeviceIds": [0, 1, 2, 3]}, "npuDeviceIds is not a list of lists"),
    ],
)
def test_each_limit_and_parallel_violation_fails_naming_keys(tmp_path, changes, phrase):
    out = judge(tmp_path, "FWK-MINDIE-001", variant(**changes))
    assert out.status is Status.FAIL, out.summary
    assert phrase in out.summary
    assert any(e.kind == "config" and ":" in e.source and e.excerpt for e in out.evidence)


def test_real_default_config_limits_pass_and_tls_without_certs_fails(tmp_path):
    path = fixture(REAL)
    out = judge(tmp_path, "FWK-MINDIE-001", path)
    assert out.status is Status.PASS, out.summary
    out = judge(tmp_path, "FWK-MINDIE-004", path)
    assert out.status is Status.FAIL
    assert "httpsEnabled=true, interCommTLSEnabled=true" in out.summary
    assert "/usr/local/Ascend/mindie/latest/mindie-service/security/certs/server.pem" in out.summary
    out = judge(tmp_path, "FWK-MINDIE-002", path)
    assert out.status is Status.FAIL and "does not exist on this node" in out.summary


# --- FWK-MINDIE-002 ---------------------------------------------------------------------------


def test_weight_path_problems(tmp_path):
    out = judge(
        tmp_path,
        "FWK-MINDIE-002",
        variant(BackendConfig__ModelDeployConfig__ModelConfig__modelWeightPath="/data/x"),
    )
    assert out.status is Status.FAIL and "modelWeightPath=/data/x does not exist" in out.summary
    out = judge(
        tmp_path,
        "FWK-MINDIE-002",
        variant(BackendConfig__ModelDeployConfig__ModelConfig__modelWeightPath="rel/p"),
    )
    assert out.status is Status.FAIL and "not an absolute path" in out.summary
    out = judge(
        tmp_path,
        "FWK-MINDIE-002",
        GOOD,
        files={"/data/empty": DIR},
    )
    assert out.status is Status.PASS
    out = judge(
        tmp_path,
        "FWK-MINDIE-002",
        variant(BackendConfig__ModelDeployConfig__ModelConfig__modelWeightPath="/data/empty"),
    )
    assert out.status is Status.FAIL
    assert "holds no config.json and no weight files" in out.summary


# --- FWK-MINDIE-003 ---------------------------------------------------------------------------


def test_device_ids_outside_the_visible_devices_fail(tmp_path):
    out = judge(tmp_path, "FWK-MINDIE-003", GOOD, npus=2)
    assert out.status is Status.FAIL
    assert "npuDeviceIds [2, 3] outside the 2 visible devices" in out.summary
    env = {"ASCEND_RT_VISIBLE_DEVICES": "4,5"}
    proc = ProcessInfo(
        9,
        "mindieservice_daemon",
        "/usr/local/Ascend/mindie/latest/mindie-service/bin/mindieservice_daemon",
        ("mindieservice_daemon",),
        "svc",
        (),
        "/",
        env,
    )
    out = judge(tmp_path, "FWK-MINDIE-003", GOOD, procs=[proc])
    assert out.status is Status.FAIL and "ASCEND_RT_VISIBLE_DEVICES=4,5" in out.summary


def test_npu_mem_size_against_hbm(tmp_path):
    mc = "BackendConfig__ModelDeployConfig__ModelConfig__npuMemSize"
    out = judge(tmp_path, "FWK-MINDIE-003", variant(**{mc: 0}))
    assert out.status is Status.FAIL and "npuMemSize=0" in out.summary
    out = judge(tmp_path, "FWK-MINDIE-003", variant(**{mc: 70}))
    assert out.status is Status.FAIL
    assert "npuMemSize=70 GB of KV cache per NPU >= 64.0 GiB of HBM" in out.summary
    out = judge(tmp_path, "FWK-MINDIE-003", variant(**{mc: 20}))
    assert out.status is Status.PASS, out.summary


# --- FWK-MINDIE-004 ---------------------------------------------------------------------------


def test_multinode_switch_against_the_rank_table(tmp_path):
    on = variant(BackendConfig__multiNodesInferEnabled=True)
    out = judge(tmp_path, "FWK-MINDIE-004", on)
    assert out.status is Status.FAIL and "no rank table was found" in out.summary
    out = judge(tmp_path, "FWK-MINDIE-004", on, rank_table=rank_table(1))
    assert out.status is Status.FAIL and "the rank table lists 1 server" in out.summary
    out = judge(tmp_path, "FWK-MINDIE-004", GOOD, rank_table=rank_table(2))
    assert out.status is Status.FAIL
    assert "multiNodesInferEnabled=false but the rank table lists 2 servers" in out.summary
    out = judge(tmp_path, "FWK-MINDIE-004", on, rank_table=rank_table(2))
    assert out.status is Status.WARN and "interNodeTLSEnabled=false" in out.summary


def test_tls_with_its_files_present_passes(tmp_path):
    home = "/usr/local/Ascend/mindie/latest/mindie-service"
    doc = variant(
        ServerConfig__interCommTLSEnabled=True,
        ServerConfig__interCommTlsCaPath="security/grpc/ca/",
        ServerConfig__interCommTlsCaFiles=["ca.pem"],
        ServerConfig__interCommTlsCert="security/grpc/certs/server.pem",
        ServerConfig__interCommPk="security/grpc/keys/server.key.pem",
    )
    files = {
        f"{home}/security/grpc/ca/ca.pem": "pem\n",
        f"{home}/security/grpc/certs/server.pem": "pem\n",
    }
    out = judge(tmp_path, "FWK-MINDIE-004", doc, files=files)
    assert out.status is Status.FAIL
    assert "1 TLS file(s) are missing" in out.summary and "server.key.pem" in out.summary
    files[f"{home}/security/grpc/keys/server.key.pem"] = "key\n"
    out = judge(tmp_path, "FWK-MINDIE-004", doc, files=files)
    assert out.status is Status.PASS, out.summary


def test_running_mindie_process_config_is_found_on_the_node(tmp_path):
    home = "/opt/mindie-service"
    env = {"MIES_INSTALL_PATH": home}
    bad = variant(BackendConfig__ModelDeployConfig__maxSeqLen=100)
    files = {f"{home}/conf/config.json": json.dumps(bad, indent=4)}
    proc = ProcessInfo(
        9,
        "mindieservice_daemon",
        f"{home}/bin/mindieservice_daemon",
        ("mindieservice_daemon",),
        "svc",
        (),
        "/",
        env,
    )
    out = judge(tmp_path, "FWK-MINDIE-001", files=files, procs=[proc])
    assert out.status is Status.FAIL
    assert out.summary.startswith(f"{home}/conf/config.json: maxSeqLen=100 < maxInputTokenLen")
