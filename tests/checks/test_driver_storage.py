"""DRV-STOR-001: where the weights live — NVMe-oF live and optimized, local NVMe, NFS, other."""

from __future__ import annotations

from pathlib import Path

from fakenode import atlas_800_a2, npu_smi_outputs
from standins import node_env, run_node, standin
from sysroot import healthy_910b_node, local

from ascend_audit.context import Context
from ascend_audit.facts.storage import WEIGHTS_STORAGE
from ascend_audit.gather.storage import find_weights_path, model_from_argv
from ascend_audit.host.base import FileRead, ProcessInfo
from ascend_audit.host.live import LiveHost
from ascend_audit.policy import parse_policy

CHECK = "DRV-STOR-001"
WEIGHTS = '[driver]\nweights_path = "/models"\n'
FABRIC = "/sys/devices/virtual/nvme-fabrics/ctl"


def node(tmp_path: Path, **variant: bool) -> tuple[Path, Path]:
    root, bindir = tmp_path / "root", tmp_path / "bin"
    healthy_910b_node(root, **variant)
    standin(bindir, "npu-smi", npu_smi_outputs(atlas_800_a2()))
    return root, bindir


def judge(root: Path, bindir: Path, policy: str = WEIGHTS):
    report = run_node(root, bindir, policy, only=[CHECK], layers=["driver"])
    return report, report.result(CHECK)


def test_live_optimized_nvmeof_passes(tmp_path):
    report, res = judge(*node(tmp_path))
    assert res.status.value == "PASS", res.summary
    assert "/models is on nvme-of" in res.summary and "rdma" in res.summary
    loc = next(e.values for e in res.evidence if e.source == "/sys/class/nvme")
    assert loc["kind"] == "nvme-of" and loc["nvme_controllers"] == ["nvme1", "nvme2"]
    mount = next(e for e in res.evidence if e.source == "/proc/self/mountinfo")
    assert " /models " in mount.excerpt and "259:1" in mount.excerpt
    inv = report.inventory["storage"]
    assert inv["weights_path"] == "/models" and inv["kind"] == "nvme-of"
    assert inv["device"] == "/dev/nvme1n1" and inv["transport"] == "rdma"
    assert [c["state"] for c in inv["weights_controllers"]] == ["live", "live"]
    assert inv["nvmeof_subsystems"][0]["nqn"] == "nqn.2014-08.org.example:weights"


def test_require_nvmeof_passes_on_live_nvmeof(tmp_path):
    _, res = judge(*node(tmp_path), WEIGHTS + "require_nvmeof = true\n")
    assert res.status.value == "PASS"


def test_weights_on_nfs_warn_with_the_measured_loading_times(tmp_path):
    _, res = judge(*node(tmp_path, weights_on_nfs=True))
    assert res.status.value == "WARN"
    assert "NFS, server 10.1.24.251" in res.summary
    assert "691 s → 112 s" in res.summary and "1399 s → 150 s" in res.summary


def test_weights_on_nfs_fail_when_policy_requires_nvmeof(tmp_path):
    _, res = judge(*node(tmp_path, weights_on_nfs=True), WEIGHTS + "require_nvmeof = true\n")
    assert res.status.value == "FAIL"
    assert "require_nvmeof" in res.summary


def test_local_nvme_passes_but_fails_when_nvmeof_is_required(tmp_path):
    root, bindir = node(tmp_path)
    policy = '[driver]\nweights_path = "/srv/models"\n'
    (root / "srv" / "models").mkdir(parents=True)
    _, res = judge(root, bindir, policy)
    assert res.status.value == "PASS" and "nvme-local" in res.summary
    _, res = judge(root, bindir, policy + "require_nvmeof = true\n")
    assert res.status.value == "FAIL" and "(nvme-local)" in res.summary


def test_non_optimized_path_fails(tmp_path):
    _, res = judge(*node(tmp_path, all_optimized=False))
    assert res.status.value == "FAIL"
    assert "path not optimized: nvme1c2n1 is non-optimized" in res.summary


def test_controller_not_live_fails(tmp_path):
    root, bindir = node(tmp_path)
    (local(root, f"{FABRIC}/nvme2/state")).write_text("connecting\n")
    _, res = judge(root, bindir)
    assert res.status.value == "FAIL"
    assert "controller not live: nvme2 is connecting" in res.summary


def test_missing_weights_directory_fails(tmp_path):
    _, res = judge(*node(tmp_path), '[driver]\nweights_path = "/models/absent"\n')
    assert res.status.value == "FAIL"
    assert "/models/absent does not exist" in res.summary


def test_no_weights_path_skips_with_the_policy_key(tmp_path):
    _, res = judge(*node(tmp_path), "")
    assert res.status.value == "SKIP"
    assert res.summary == "no weights path: set driver.weights_path"


def test_mountinfo_unreadable_falls_back_to_proc_mounts(tmp_path):
    root, bindir = node(tmp_path)
    local(root, "/proc/self/mountinfo").unlink()
    _, res = judge(root, bindir)
    assert res.status.value == "PASS", res.summary
    assert any(e.source == "/proc/mounts" for e in res.evidence)


def test_no_mount_table_is_an_error(tmp_path):
    root, bindir = node(tmp_path)
    local(root, "/proc/self/mountinfo").unlink()
    local(root, "/proc/mounts").unlink()
    _, res = judge(root, bindir)
    assert res.status.value == "ERROR"
    assert "cannot tell where /models lives" in res.summary


def test_nuse_is_never_read(tmp_path):
    root, bindir = node(tmp_path)
    for ctrl in ("nvme1", "nvme2"):
        (local(root, f"{FABRIC}/{ctrl}/nvme1c1n1")).mkdir(exist_ok=True)
    (local(root, "/sys/devices/virtual/nvme-subsystem/nvme-subsys1/nvme1n1/nuse")).write_text("1\n")
    reads: list[str] = []

    class Spy(LiveHost):
        def read_text(self, path: str, limit: int = 1 << 22) -> FileRead:
            reads.append(path)
            return super().read_text(path, limit)

    ctx = Context(Spy(str(root), environ=node_env(bindir)), parse_policy(WEIGHTS))
    assert ctx.fact(WEIGHTS_STORAGE).location.kind == "nvme-of"
    assert reads and not [p for p in reads if p.endswith("/nuse")]


# ---- finding the weights from a running serving process ------------------------------------


def test_model_from_vllm_and_generic_command_lines():
    assert model_from_argv(["vllm", "serve", "/models/qwen3-32b", "--tp", "8"]) == (
        "/models/qwen3-32b",
        "vllm",
    )
    argv = ["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "/m/q"]
    assert model_from_argv(argv) == ("/m/q", "vllm")
    assert model_from_argv(["python", "server.py", "--model=/w/x"]) == ("/w/x", "server")
    assert model_from_argv(["vllm serve /models/a --port 8000"]) == ("/models/a", "vllm")
    assert (
        model_from_argv(
            ["/usr/local/Ascend/mindie/latest/mindie-service/bin/mindieservice_daemon"]
        )[1]
        == "mindie"
    )
    assert model_from_argv(["sshd", "-D"]) == (None, "")


class ProcHost(LiveHost):
    """A fake node whose process list is given."""

    def __init__(self, root: Path, procs: list[ProcessInfo]) -> None:
        super().__init__(str(root))
        self.procs = procs

    def processes(self) -> list[ProcessInfo]:
        return self.procs


def _proc(pid: int, *argv: str, exe: str = "", cwd: str = "") -> ProcessInfo:
    return ProcessInfo(pid, argv[0].rsplit("/", 1)[-1], exe, tuple(argv), "root", cwd=cwd)


def test_weights_path_from_a_running_vllm(tmp_path):
    root, _ = node(tmp_path)
    procs = [_proc(1, "init"), _proc(4242, "vllm", "serve", "/models/qwen3-32b", "--tp", "8")]
    ctx = Context(ProcHost(root, procs), parse_policy(""))
    found = find_weights_path(ctx)
    assert found.path == "/models/qwen3-32b" and found.pid == 4242
    assert "process 4242 (vllm serve /models/qwen3-32b" in found.origin


def test_weights_path_relative_to_the_process_cwd(tmp_path):
    root, _ = node(tmp_path)
    procs = [
        _proc(
            7,
            "python",
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            "./qwen",
            cwd="/models",
        )
    ]
    assert (
        find_weights_path(Context(ProcHost(root, procs), parse_policy(""))).path == "/models/qwen"
    )


def test_weights_path_from_mindie_config(tmp_path):
    root, _ = node(tmp_path)
    home = "/usr/local/Ascend/mindie/latest/mindie-service"
    cfg = local(root, f"{home}/conf/config.json")
    cfg.parent.mkdir(parents=True)
    cfg.write_text(
        '{"BackendConfig": {"npuDeviceIds": [[0,1,2,3]], "ModelDeployConfig": {"ModelConfig": '
        '[{"modelName": "qwen", "modelWeightPath": "/models/qwen2.5-72b", "worldSize": 4}]}}}'
    )
    daemon = f"{home}/bin/mindieservice_daemon"
    ctx = Context(ProcHost(root, [_proc(99, daemon, exe=daemon)]), parse_policy(""))
    found = find_weights_path(ctx)
    assert found.path == "/models/qwen2.5-72b"
    assert found.origin.endswith(f"via {home}/conf/config.json")


def test_hub_model_id_skips_with_the_reason(tmp_path):
    root, _ = node(tmp_path)
    procs = [_proc(5, "vllm", "serve", "Qwen/Qwen3-8B")]
    ctx = Context(ProcHost(root, procs), parse_policy(""))
    found = find_weights_path(ctx)
    assert found.path is None and "hub model 'Qwen/Qwen3-8B'" in found.note


def test_policy_wins_over_processes(tmp_path):
    root, _ = node(tmp_path)
    procs = [_proc(4242, "vllm", "serve", "/elsewhere")]
    ctx = Context(ProcHost(root, procs), parse_policy(WEIGHTS))
    assert find_weights_path(ctx).path == "/models"
