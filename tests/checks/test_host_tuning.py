"""DRV-HOST-001..004 and DRV-HCCL-001 on fake sysroots (a serving process injected where needed)."""

from __future__ import annotations

from pathlib import Path

from fakenode import FakeNpu, npu_smi_outputs
from standins import node_env, standin
from sysroot import NPU_BDFS, healthy_910b_node, write_tree

from ascend_audit.context import Context
from ascend_audit.host.base import ProcessInfo
from ascend_audit.host.live import LiveHost
from ascend_audit.model import Status
from ascend_audit.policy import parse_policy
from ascend_audit.registry import load_registry

TUNED = {
    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance\n",
    "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "performance\n",
    "/sys/class/dmi/id/sys_vendor": "Huawei\n",
    "/sys/class/dmi/id/product_name": "Atlas 800T A2\n",
    "/proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu sse2\n",
    "/proc/sys/kernel/osrelease": "5.10.0-136.12.0.86.oe2203sp1.aarch64\n",
    "/sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never\n",
    "/proc/sys/kernel/numa_balancing": "0\n",
    "/proc/sys/vm/overcommit_memory": "0\n",
    "/proc/swaps": "Filename\tType\tSize\tUsed\tPriority\n",
    "/proc/meminfo": "MemTotal: 1000 kB\nSwapTotal: 0 kB\n",
    "/etc/security/limits.conf": "* soft nofile 1048576\n* soft memlock unlimited\n",
    "/sys/class/net/eth0/operstate": "up\n",
    "/sys/class/net/eth1/operstate": "down\n",
    "/proc/net/fib_trie": "     |-- 10.0.0.5\n        /32 host LOCAL\n",
}
SWAPS_HEADER = "Filename\tType\tSize\tUsed\tPriority\n"
PROC_LIMITS = (
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max open files            1024                 1048576              files     \n"
    "Max locked memory         65536                65536                bytes     \n"
)


class ServingHost(LiveHost):
    """A LiveHost on a sysroot that also shows one serving process."""

    def __init__(self, root: str, bindir: Path, proc: ProcessInfo | None) -> None:
        super().__init__(root, environ=node_env(bindir))
        self.proc = proc

    def processes(self) -> list[ProcessInfo]:
        return [self.proc] if self.proc else []


def vllm(pid: int = 4242, affinity: tuple[int, ...] = (0, 1, 2), **env: str) -> ProcessInfo:
    argv = ("/opt/venv/bin/python", "-m", "vllm.entrypoints.openai.api_server", "--model", "/m")
    return ProcessInfo(pid, "python", "/opt/venv/bin/python", argv, "svc", affinity, "/", env)


def judge(tmp_path: Path, cid: str, files=None, policy="", proc=None, drop=()):  # type: ignore[no-untyped-def]
    root, bindir = tmp_path / "root", tmp_path / "bin"
    if not root.exists():
        healthy_910b_node(root)
        spec = {k: v for k, v in {**TUNED, **(files or {})}.items() if k not in drop}
        write_tree(root, spec)
        standin(
            bindir,
            "npu-smi",
            npu_smi_outputs([FakeNpu(i, b.upper()) for i, b in enumerate(NPU_BDFS)]),
        )
    ctx = Context(ServingHost(str(root), bindir, proc), parse_policy(policy))
    return load_registry(entry_points=False).get(cid).func(ctx)


def test_tuned_host_passes_all(tmp_path):
    for cid in ("DRV-HOST-001", "DRV-HOST-002", "DRV-HOST-003"):
        out = judge(tmp_path, cid)
        assert out.status is Status.PASS, (cid, out.summary)


def test_bare_sysroot_skips_not_fails(tmp_path):
    root = tmp_path / "root"
    healthy_910b_node(root)
    (tmp_path / "bin").mkdir()
    for cid in ("DRV-HOST-001", "DRV-HOST-002", "DRV-HOST-003", "DRV-HOST-004"):
        out = judge(tmp_path, cid)
        assert out.status is Status.SKIP, (cid, out.summary)


def test_powersave_vm_and_old_kernel_warn(tmp_path):
    out = judge(
        tmp_path,
        "DRV-HOST-001",
        {
            "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "powersave\n",
            "/sys/class/dmi/id/sys_vendor": "QEMU\n",
            "/proc/sys/kernel/osrelease": "4.19.90-24.4.v2101.ky10.aarch64\n",
        },
    )
    assert out.status is Status.WARN
    assert "CPU governor of 1/2 CPUs is powersave, want performance" in out.summary
    assert "virtual machine" in out.summary and "QEMU" not in out.summary.upper()[:0]
    assert "kernel release is 4.19.90" in out.summary


def test_hypervisor_flag_warns_unless_allowed(tmp_path):
    files = {"/proc/cpuinfo": "flags\t\t: fpu hypervisor sse2\n"}
    assert judge(tmp_path, "DRV-HOST-001", files).status is Status.WARN
    ok = judge(tmp_path, "DRV-HOST-001", policy="[host]\nallow_virtual_machine = true\n")
    assert ok.status is Status.PASS


def test_memory_knobs_warn(tmp_path):
    out = judge(
        tmp_path,
        "DRV-HOST-002",
        {
            "/sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never\n",
            "/proc/sys/kernel/numa_balancing": "1\n",
            "/proc/swaps": SWAPS_HEADER + "/dev/dm-1 partition 8388604 0 -2\n",
        },
        policy='[host]\novercommit_memory = "1"\n',
    )
    assert out.status is Status.WARN
    for text in (
        "transparent hugepages is madvise, want always",
        "kernel.numa_balancing is 1",
        "vm.overcommit_memory is 0, want 1",
        "swap is on (/dev/dm-1",
    ):
        assert text in out.summary


def test_limits_from_limits_conf_and_from_the_process(tmp_path):
    low = {"/etc/security/limits.conf": "* soft nofile 4096\n"}
    out = judge(tmp_path, "DRV-HOST-003", low)
    assert out.status is Status.WARN
    assert "open-file limit (nofile) is 4096, want >= 65535" in out.summary
    assert "memlock" in out.summary
    assert "limits.conf" in out.evidence[0].source


def test_limits_of_the_running_service_win(tmp_path):
    out = judge(tmp_path, "DRV-HOST-003", {"/proc/4242/limits": PROC_LIMITS}, proc=vllm())
    assert out.status is Status.WARN
    assert out.evidence[0].source == "/proc/4242/limits"
    assert "is 1024, want >= 65535" in out.summary


def test_affinity_on_the_npus_numa_node_passes_far_cpus_warn(tmp_path):
    near = vllm(affinity=tuple(range(0, 8)), ASCEND_RT_VISIBLE_DEVICES="0,1")
    assert judge(tmp_path, "DRV-HOST-004", proc=near).status is Status.PASS
    far = vllm(affinity=tuple(range(90, 100)), ASCEND_RT_VISIBLE_DEVICES="0,1")
    out = judge(tmp_path, "DRV-HOST-004", proc=far)
    assert out.status is Status.WARN
    assert "outside NUMA node(s) [0] of its NPUs [0, 1]" in out.summary


def test_hccl_defaults_pass_and_state_the_defaults(tmp_path):
    out = judge(tmp_path, "DRV-HCCL-001", proc=vllm())
    assert out.status is Status.PASS
    assert "HCCL_CONNECT_TIMEOUT=unset (default 120 s" in out.evidence[0].excerpt
    assert "process 4242" in out.summary


def test_hccl_bad_values_fail(tmp_path):
    env = {
        "HCCL_CONNECT_TIMEOUT": "60",
        "HCCL_SOCKET_IFNAME": "=eth1",
        "HCCL_BUFFSIZE": "x",
        "HCCL_IF_IP": "10.9.9.9",
    }
    out = judge(tmp_path, "DRV-HCCL-001", proc=vllm(**env))
    assert out.status is Status.FAIL
    for text in (
        "HCCL_CONNECT_TIMEOUT='60' outside 120-7200",
        "'=eth1': no matching interface is up",
        "HCCL_BUFFSIZE='x'",
        "HCCL_IF_IP=10.9.9.9 is not an address of this host",
    ):
        assert text in out.summary


def test_hccl_policy_wishes_warn(tmp_path):
    env = {"HCCL_CONNECT_TIMEOUT": "600", "HCCL_BUFFSIZE": "200", "HCCL_SOCKET_IFNAME": "eth0"}
    policy = "[cluster]\nhccl_connect_timeout_min = 1800\nhccl_buffsize_mb = 512\n"
    out = judge(tmp_path, "DRV-HCCL-001", policy=policy, proc=vllm(**env))
    assert out.status is Status.WARN
    assert "HCCL_CONNECT_TIMEOUT 600 s < 1800 s" in out.summary
    assert "HCCL_BUFFSIZE 200 MB, policy wants 512 MB" in out.summary
    out = judge(tmp_path, "DRV-HCCL-001", policy="[cluster]\nrequire_hccl_if = true\n", proc=vllm())
    assert out.status is Status.WARN and "neither HCCL_IF_IP" in out.summary
    missing = judge(tmp_path, "DRV-HCCL-001", proc=vllm(HCCL_SOCKET_IFNAME="=ib9"))
    assert missing.status is Status.FAIL and "matches no interface" in missing.summary
