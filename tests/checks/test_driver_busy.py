"""DRV-NPU-003 (busy NPUs): a foreign process on NPU 3, device memory in use with no process, and
the serving process tree (children found through /proc/PID/stat) that is allowed on the NPUs."""

from __future__ import annotations

from pathlib import Path

from fakenode import FakeNpu, npu_smi_outputs
from standins import node_env, standin
from sysroot import NPU_BDFS, healthy_910b_node, write_tree

from ascend_audit.context import Context
from ascend_audit.engine import Selection, run_audit
from ascend_audit.facts.npu_users import parent_pid
from ascend_audit.host.base import ProcessInfo
from ascend_audit.host.live import LiveHost
from ascend_audit.policy import parse_policy
from ascend_audit.registry import load_registry

CHECK = "DRV-NPU-003"


class NodeWithProcesses(LiveHost):
    """A fake node that also runs some processes (LiveHost on a sysroot lists none)."""

    def __init__(self, root: str, environ: dict[str, str], procs: list[ProcessInfo]) -> None:
        super().__init__(root, timeout=5.0, environ=environ)
        self._procs = procs

    def processes(self) -> list[ProcessInfo]:
        return list(self._procs)


def judge(tmp_path: Path, npus: list[FakeNpu], procs=(), policy: str = ""):
    root, bindir = tmp_path / "root", tmp_path / "bin"
    healthy_910b_node(root)
    standin(bindir, "npu-smi", npu_smi_outputs(npus))
    host = NodeWithProcesses(str(root), node_env(bindir), list(procs))
    ctx = Context(host, parse_policy(policy))
    report = run_audit(load_registry(entry_points=False), ctx, Selection(only=frozenset({CHECK})))
    return report.result(CHECK)


def npus(**busy) -> list[FakeNpu]:
    out = [FakeNpu(i, bdf.upper(), hbm_used=3314) for i, bdf in enumerate(NPU_BDFS)]
    for key, value in busy.items():
        setattr(out[int(key[1:])], *value)
    return out


def test_idle_npus_pass(tmp_path):
    r = judge(tmp_path, npus())
    assert r.status.value == "PASS", r.summary
    assert "no process on any NPU" in r.summary


def test_foreign_process_on_npu3_fails_naming_npu_process_and_memory(tmp_path):
    node = npus(n3=("processes", [(4242, "python3", 30000)]))
    node[3].hbm_used = 33314
    r = judge(tmp_path, node)
    assert r.status.value == "FAIL", r.summary
    assert "NPU 3" in r.summary and "pid 4242 (python3" in r.summary and "30000 MB" in r.summary
    # what the leftover process does to a multi-NPU start (vllm-ascend#1955)
    assert "HCCL's device port on NPU 3 chip 0 (16666 by default) will be busy" in r.summary


def test_memory_in_use_without_a_process_fails(tmp_path):
    node = npus(n5=("hbm_used", 40000))
    r = judge(tmp_path, node)
    assert r.status.value == "FAIL", r.summary
    assert "NPU 5 chip 0: 40000 MB" in r.summary and "4096 MB" in r.summary
    assert judge(tmp_path / "b", node, policy="[driver]\nidle_hbm_mb = 50000\n").status.value == (
        "PASS"
    )


def test_the_serving_tree_may_hold_the_npus(tmp_path):
    node = npus(n0=("processes", [(201, "VllmWorker", 30000)]))
    node[0].hbm_used = 33314
    server = ProcessInfo(200, "vllm", "/usr/bin/python3", ("vllm", "serve", "/models/q"), "root")
    worker = ProcessInfo(201, "VllmWorker", "/usr/bin/python3", ("python3", "-c", "spawn"), "root")
    write_tree(tmp_path / "root", {"/proc/201/stat": "201 (VllmWorker) S 200 201 1 0 -1\n"})
    r = judge(tmp_path, node, procs=[server, worker])
    assert r.status.value == "PASS", r.summary
    assert "1 process(es) of the serving tree" in r.summary


def test_the_serving_tree_is_walked_through_the_scanned_parents(tmp_path):
    node = npus(n0=("processes", [(202, "VllmWorker", 30000)]))
    node[0].hbm_used = 33314
    server = ProcessInfo(200, "vllm", "/usr/bin/python3", ("vllm", "serve", "/models/q"), "root")
    worker = ProcessInfo(202, "VllmWorker", "/usr/bin/python3", ("python3",), "root", ppid=201)
    shim = ProcessInfo(201, "sh", "/bin/sh", ("sh", "-c", "spawn"), "root", ppid=200)
    # a /proc stat that disagrees must not be read: the scanned parents decide
    write_tree(tmp_path / "root", {"/proc/202/stat": "202 (VllmWorker) S 1 202 1 0 -1\n"})
    r = judge(tmp_path, node, procs=[server, shim, worker])
    assert r.status.value == "PASS", r.summary
    orphan = ProcessInfo(202, "VllmWorker", "/usr/bin/python3", ("python3",), "root", ppid=1)
    assert judge(tmp_path / "b", node, procs=[server, orphan]).status.value == "FAIL"
    assert ProcessInfo.from_dict(worker.to_dict()) == worker  # bundles record the parent
    for hostile in (True, "201", None, 2.5):
        assert ProcessInfo.from_dict({**worker.to_dict(), "ppid": hostile}).ppid is None


def test_parent_pid_of_hostile_stat():
    assert parent_pid("12 (a b) c) S 7 12 1\n") == 7
    assert parent_pid("") is None and parent_pid("12 (x) S notanumber") is None
