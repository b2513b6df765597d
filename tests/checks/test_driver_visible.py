"""DRV-NPU-004 (visible devices): each way a mask is wrong, and a mask that fits the command."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakenode import FakeNpu, npu_smi_outputs
from fieldnodes import as_container
from standins import standin
from sysroot import NPU_BDFS, healthy_910b_node

from ascend_audit.context import Context, Inputs
from ascend_audit.engine import Selection, run_audit
from ascend_audit.host.live import LiveHost
from ascend_audit.policy import parse_policy
from ascend_audit.registry import load_registry

CHECK = "DRV-NPU-004"


def judge(tmp_path: Path, env=None, policy="", given=None, script: str | None = None):
    root, bindir = tmp_path / "root", tmp_path / "bin"
    healthy_910b_node(root)
    count = 8
    if given is not None:
        as_container(root, given)
        count = len(given)
    npus = [FakeNpu(i, NPU_BDFS[i].upper()) for i in (given or range(count))]
    standin(bindir, "npu-smi", npu_smi_outputs(npus))
    configs: tuple[str, ...] = ()
    if script:
        (tmp_path / "vllm.yaml").write_text(script)
        configs = (str(tmp_path / "vllm.yaml"),)
    environ = {"PATH": f"{bindir}:/usr/bin:/bin", **(env or {})}
    host = LiveHost(str(root), timeout=5.0, environ=environ)
    ctx = Context(host, parse_policy(policy), Inputs(serving_configs=configs))
    sel = Selection(only=frozenset({CHECK}), gate=False)
    return run_audit(load_registry(entry_points=False), ctx, sel).result(CHECK)


def test_no_mask_skips(tmp_path):
    r = judge(tmp_path)
    assert r.status.value == "SKIP" and "ASCEND_RT_VISIBLE_DEVICES" in r.summary


def test_ascending_mask_within_the_node_passes(tmp_path):
    r = judge(tmp_path, {"ASCEND_RT_VISIBLE_DEVICES": "0,1,2,3"})
    assert r.status.value == "PASS", r.summary


def test_non_ascending_mask_fails_with_ee1001(tmp_path):
    r = judge(tmp_path, {"ASCEND_RT_VISIBLE_DEVICES": "3,2,1,0"})
    assert r.status.value == "FAIL"
    assert "ASCEND_RT_VISIBLE_DEVICES=3,2,1,0" in r.summary and "EE1001" in r.summary


def test_duplicate_fails(tmp_path):
    r = judge(tmp_path, {"ASCEND_RT_VISIBLE_DEVICES": "0,1,1"})
    assert r.status.value == "FAIL" and "device 1 twice" in r.summary


def test_device_beyond_what_the_container_exposes_fails(tmp_path):
    # gpustack 3352: ASCEND_RT_VISIBLE_DEVICES=4 in a VM that exposes 3 NPUs (range 0-2)
    r = judge(tmp_path, {"ASCEND_RT_VISIBLE_DEVICES": "4"}, given=(0, 1, 2))
    assert r.status.value == "FAIL"
    assert "names device 4 but this node exposes 3 device(s) (0-2)" in r.summary


def test_policy_mask_is_judged_too(tmp_path):
    r = judge(tmp_path, policy='[driver]\nvisible_devices = "1,0"\n')
    assert r.status.value == "FAIL" and "(policy)" in r.summary


@pytest.mark.parametrize(("mask", "status"), [("0,1", "FAIL"), ("0,1,2,3", "PASS")])
def test_mask_must_cover_tp_times_local_dp(tmp_path, mask, status):
    config = "tensor-parallel-size: 2\ndata-parallel-size: 4\ndata-parallel-size-local: 2\n"
    r = judge(tmp_path, {"ASCEND_RT_VISIBLE_DEVICES": mask}, script=config)
    assert r.status.value == status, r.summary
    if status == "FAIL":
        assert "needs 4 (TP 2 x local DP 2" in r.summary


def test_docker_runtime_variable_that_does_not_match_the_devices_warns(tmp_path):
    # vllm-ascend 6063: ASCEND_VISIBLE_DEVICES=4,5 but compose mapped all eight davinci nodes
    r = judge(tmp_path, {"ASCEND_VISIBLE_DEVICES": "4,5"}, given=tuple(range(8)))
    assert r.status.value == "WARN"
    assert "ASCEND_VISIBLE_DEVICES=4,5" in r.summary and "Ascend Docker Runtime" in r.summary


def test_device_plugin_order_of_the_runtime_variable_is_not_ee1001(tmp_path):
    """HAMi's device plugin hands a pod ASCEND_VISIBLE_DEVICES=4,3 (physical ids, its order):
    the Ascend Docker Runtime reads that set, CANN's EE1001 ordering rule is for
    ASCEND_RT_VISIBLE_DEVICES only (HAMi issue #1894)."""
    r = judge(tmp_path, {"ASCEND_VISIBLE_DEVICES": "4,3"}, given=(3, 4))
    assert r.status.value == "PASS", r.summary
    (tmp_path / "rt").mkdir()
    rt = judge(tmp_path / "rt", {"ASCEND_RT_VISIBLE_DEVICES": "1,0"}, given=(3, 4))
    assert rt.status.value == "FAIL" and "EE1001" in rt.summary
