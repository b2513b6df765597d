"""DRV-RANK-001 on the real rank-table fixtures (no hccn_tool: structure and this-node matching)."""

from __future__ import annotations

import json
from pathlib import Path

from shared_fixtures import fixture
from sysroot import write_tree

from ascend_audit.context import Context, Inputs
from ascend_audit.host.live import LiveHost
from ascend_audit.model import Status
from ascend_audit.policy import parse_policy
from ascend_audit.registry import load_registry


def judge(tmp_path: Path, table: str | Path, files: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    write_tree(root, files or {"/etc/hostname": "nohost\n"})
    path = table if isinstance(table, Path) else tmp_path / "t.json"
    if not isinstance(table, Path):
        path.write_text(table)
    host = LiveHost(str(root), environ={"PATH": str(tmp_path)})
    ctx = Context(host, parse_policy(""), Inputs(rank_table=str(path)))
    return load_registry(entry_points=False).get("DRV-RANK-001").func(ctx)


def test_real_v1_table_passes_structure_and_warns_when_node_unknown(tmp_path):
    out = judge(tmp_path, fixture("hccn/rank_table_v1.0_4server_32rank_910B3_itove-ascend.json"))
    assert out.status is Status.WARN
    assert "this node is not in the table" in out.summary


def test_hostname_identifies_this_node(tmp_path):
    doc = json.loads(
        fixture("hccn/rank_table_v1.0_2server_16rank_910B3_itove-ascend.json").read_text()
    )
    doc["server_list"][1]["server_id"] = "node-b"
    out = judge(tmp_path, json.dumps(doc), {"/etc/hostname": "node-b\n"})
    assert out.status is Status.PASS, out.summary
    assert "hostname node-b" in out.evidence[1].excerpt


def test_pd_table_from_vllm_ascend_is_read(tmp_path):
    p = fixture(
        "hccn/rank_table_v1.2_vllm-ascend_pd_prefill_decode_device_list_1P1D_vllm-ascend-2498.json"
    )
    out = judge(tmp_path, p)
    assert out.status in (Status.PASS, Status.WARN), out.summary
    assert out.evidence[0].values["layout"] == "pd"


def test_a3_superpod_doc_table_is_judged(tmp_path):
    p = fixture("hccn/rank_table_v1.2_A3_superpod_2pods_4server_hccl-doc.partial.jsonc")
    out = judge(tmp_path, p)
    assert out.evidence[0].values["version"] == "1.2"
    assert out.status in (Status.PASS, Status.WARN, Status.FAIL)


def test_initializing_duplicate_and_unreadable_tables(tmp_path):
    doc = {
        "version": "1.0",
        "server_count": "2",
        "status": "initializing",
        "server_list": [
            {
                "server_id": "a",
                "device": [{"device_id": "0", "device_ip": "1.1.1.1", "rank_id": "0"}],
            }
        ],
    }
    out = judge(tmp_path, json.dumps(doc))
    assert out.status is Status.FAIL
    assert 'not "completed"' in out.summary and "server_count is 2" in out.summary
    assert judge(tmp_path, "not json at all").status is Status.FAIL
    missing = tmp_path / "absent.json"
    assert judge(tmp_path, missing).status is Status.ERROR


def test_a3_entry_without_super_device_id_fails(tmp_path):
    doc = {
        "version": "1.2",
        "status": "completed",
        "server_count": "1",
        "server_list": [
            {
                "server_id": "a",
                "device": [{"device_id": "0", "device_ip": "1.1.1.1", "rank_id": "0"}],
            }
        ],
    }
    out = judge(tmp_path, json.dumps(doc))
    assert out.status is Status.FAIL and "super_device_id missing" in out.summary


def test_no_table_skips(tmp_path):
    host = LiveHost(str(tmp_path), environ={"PATH": str(tmp_path)})
    ctx = Context(host, parse_policy(""), Inputs())
    out = load_registry(entry_points=False).get("DRV-RANK-001").func(ctx)
    assert out.status is Status.SKIP
