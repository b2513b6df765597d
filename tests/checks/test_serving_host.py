"""DRV-SHM/PORT/NETIF/MNODE/RAY-001 on fake nodes built here (a serving process injected)."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from shared_fixtures import read_fixture
from standins import node_env, standin
from sysroot import Link, write_tree

from ascend_audit.context import Context, Inputs
from ascend_audit.facts.netif import (
    addresses_by_route,
    parse_if_inet6,
    parse_proc_net_route,
    parse_size,
)
from ascend_audit.facts.sockets import parse_proc_net_tcp, socket_inode
from ascend_audit.host.base import ProcessInfo
from ascend_audit.host.live import LiveHost
from ascend_audit.model import Status
from ascend_audit.policy import parse_policy
from ascend_audit.registry import load_registry

TCP_HEAD = (
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
    "timeout inode\n"
)
TCP6_HEAD = (
    "  sl  local_address                         remote_address                        st "
    "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
)


def tcp_row(n: int, port: int, inode: int, addr: str = "00000000", st: str = "0A") -> str:
    return (
        f"   {n}: {addr}:{port:04X} 00000000:0000 {st} 00000000:00000000 00:00000000 "
        f"00000000  1000        0 {inode} 1 0000000000000000 100 0 0 10 0\n"
    )


def mountinfo(shm_opts: str = "rw,nosuid,nodev,size=16777216k,inode64") -> str:
    return (
        "22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
        f"30 22 0:26 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs shm {shm_opts}\n"
    )


BASE = {
    "/proc/self/mountinfo": mountinfo(),
    "/proc/meminfo": "MemTotal:       1056964608 kB\n",
    "/proc/net/tcp": TCP_HEAD + tcp_row(0, 22, 1111),
    "/proc/net/tcp6": TCP6_HEAD,
    "/proc/net/fib_trie": (
        "Local:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 10.0.0.5\n        /32 host LOCAL\n"
        "     |-- 10.1.0.5\n        /32 host LOCAL\n"
    ),
    "/proc/net/route": (
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        "eth0\t00000000\t0100000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
        "eth0\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
        "eth1\t0000010A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
    ),
    "/sys/class/net/lo/operstate": "unknown\n",
    "/sys/class/net/eth0/operstate": "up\n",
    "/sys/class/net/eth1/operstate": "down\n",
    "/sys/class/net/eth2/operstate": "up\n",
}


class ServingHost(LiveHost):
    """A LiveHost on a sysroot that also shows the given processes."""

    def __init__(self, root: str, bindir: Path, procs: list[ProcessInfo]) -> None:
        super().__init__(root, environ=node_env(bindir))
        self.procs = procs

    def processes(self) -> list[ProcessInfo]:
        return list(self.procs)


def vllm(pid: int = 4242, *extra: str, **env: str) -> ProcessInfo:
    argv = ("/opt/venv/bin/python", "-m", "vllm.entrypoints.openai.api_server", "--model", "/m")
    return ProcessInfo(pid, "python", "/opt/venv/bin/python", argv + extra, "svc", (), "/", env)


def judge(
    tmp_path: Path,
    cid: str,
    files: dict | None = None,
    procs: list[ProcessInfo] | None = None,
    policy: str = "",
    ray: str | None = None,
    configs: list[Path] | None = None,
):  # type: ignore[no-untyped-def]
    root, bindir = tmp_path / "root", tmp_path / "bin"
    root.mkdir(exist_ok=True)
    write_tree(root, {**BASE, **(files or {})})
    bindir.mkdir(exist_ok=True)
    if ray is not None:
        standin(bindir, "ray", {"status": ray})
    inputs = Inputs(serving_configs=tuple(str(c) for c in configs or ()))
    ctx = Context(ServingHost(str(root), bindir, procs or []), parse_policy(policy), inputs)
    return load_registry(entry_points=False).get(cid).func(ctx)


# --- parsers ----------------------------------------------------------------------------------


def test_proc_net_tcp_listeners_v4_and_v6():
    t4 = parse_proc_net_tcp(
        TCP_HEAD + tcp_row(0, 8000, 5, "0100007F") + tcp_row(1, 60000, 6, st="01"), "tcp"
    )
    assert [(s.address, s.port, s.inode) for s in t4.sockets] == [("127.0.0.1", 8000, 5)]
    row6 = (
        "   0: 00000000000000000000000001000000:1F40 00000000000000000000000000000000:0000 0A "
        "00000000:00000000 00:00000000 00000000     0        0 77 1 0000000000000000 100 0 0 10 0\n"
    )
    t6 = parse_proc_net_tcp(TCP6_HEAD + row6, "tcp6")
    assert [(s.address, s.port) for s in t6.sockets] == [("::1", 8000)]


@pytest.mark.parametrize(
    "text", ["", "garbage\n\x00\xff", TCP_HEAD + "   0: zz:zz\n", TCP_HEAD + "x" * 100000]
)
def test_proc_net_tcp_hostile_input_never_raises(text):
    t = parse_proc_net_tcp(text)
    assert t.sockets == ()


def test_socket_links_and_sizes():
    assert socket_inode("socket:[4242]") == 4242
    assert socket_inode("pipe:[1]") is None and socket_inode(None) is None
    assert parse_size("64k") == 65536 and parse_size("16g") == 16 << 30
    assert parse_size("50%", 1000) == 500 and parse_size("lots") is None


def test_route_placement_and_if_inet6():
    routes = parse_proc_net_route(BASE["/proc/net/route"])
    net = int(ipaddress.IPv4Address("10.0.0.0"))
    mask = int(ipaddress.IPv4Address("255.255.255.0"))
    assert routes == [("eth0", net, mask), ("eth1", net + 65536, mask)]
    assert addresses_by_route(["10.0.0.5", "10.1.0.5", "192.168.9.9"], routes) == {
        "eth0": ["10.0.0.5"],
        "eth1": ["10.1.0.5"],
    }
    assert parse_proc_net_route("garbage\nx y z\n\xff") == []
    v6 = parse_if_inet6("fe800000000000000000000000000001 02 40 20 80 eth0\n")
    assert v6 == {"eth0": ["fe80::1"]}


# --- DRV-SHM-001 ------------------------------------------------------------------------------


def test_shm_16g_passes(tmp_path):
    out = judge(tmp_path, "DRV-SHM-001")
    assert out.status is Status.PASS, out.summary
    assert "16.00 GiB (size=16777216k)" in out.summary


def test_docker_default_64m_shm_fails(tmp_path):
    files = {"/proc/self/mountinfo": mountinfo("rw,nosuid,nodev,noexec,size=65536k")}
    out = judge(tmp_path, "DRV-SHM-001", files)
    assert out.status is Status.FAIL
    assert "/dev/shm is 0.06 GiB (size=65536k), want >= 1 GiB" in out.summary


def test_ray_launch_wants_more_shm_as_in_the_gpustack_report(tmp_path):
    # gpustack-5014: 9663676416 bytes of /dev/shm, Ray asked for 10200547328
    assert "9663676416 bytes" in read_fixture(
        "field/visibility_and_resources/"
        "dev_shm_too_small_raylet_9GB_available_10GB_requested_Kimi-K2.5_TP8_PP2_gpustack-5014"
        ".partial.log"
    )
    files = {"/proc/4242/mountinfo": mountinfo("rw,size=9437184k")}
    proc = vllm(4242, "--distributed-executor-backend", "ray")
    out = judge(tmp_path, "DRV-SHM-001", files, [proc])
    assert out.status is Status.FAIL
    assert "want >= 10 GiB (policy host.ray_min_shm_gib: Ray launch" in out.summary
    assert out.evidence[0].source == "/proc/4242/mountinfo"


def test_shm_without_size_is_half_of_ram_and_absent_shm_skips(tmp_path):
    out = judge(tmp_path, "DRV-SHM-001", {"/proc/self/mountinfo": mountinfo("rw,inode64")})
    assert out.status is Status.PASS and "half of MemTotal" in out.summary
    none = "22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
    out = judge(tmp_path, "DRV-SHM-001", {"/proc/self/mountinfo": none})
    assert out.status is Status.SKIP


# --- DRV-PORT-001 -----------------------------------------------------------------------------


def test_free_ports_pass(tmp_path):
    out = judge(tmp_path, "DRV-PORT-001")
    assert out.status is Status.PASS, out.summary
    assert "HCCL 60000-60031" in out.summary


def test_hccl_port_held_by_another_job_fails_naming_it(tmp_path):
    # vllm-ascend-405: a second TP=4 job fails because the first holds 60000
    log = read_fixture(
        "field/visibility_and_resources/"
        "HCCL_HcclGetRootInfo_error11_EJ0003_port60000_already_bound_two_tp4_jobs_vllm-ascend-405.log"
    )
    assert "port[60000]" in log
    files = {
        "/proc/net/tcp": TCP_HEAD + tcp_row(0, 60000, 9001),
        "/proc/777/fd/0": Link("/dev/null"),
        "/proc/777/fd/5": Link("socket:[9001]"),
        "/proc/777/comm": "python3\n",
    }
    out = judge(tmp_path, "DRV-PORT-001", files)
    assert out.status is Status.FAIL
    assert "port 60000 (HCCL host port (HCCL default base 60000 + 0)" in out.summary
    assert "pid 777 (python3)" in out.summary
    assert any(e.source == "/proc/net/tcp" and e.values["port"] == 60000 for e in out.evidence)


def test_vllm_port_from_config_and_custom_hccl_base(tmp_path):
    cfg = tmp_path / "serve.yaml"
    cfg.write_text("model: /models/qwen\nport: 9000\n")
    files = {"/proc/net/tcp": TCP_HEAD + tcp_row(0, 9000, 9002) + tcp_row(1, 60000, 9003)}
    out = judge(tmp_path, "DRV-PORT-001", files, configs=[cfg], policy="")
    assert out.status is Status.FAIL
    assert "port 9000 (vLLM --port" in out.summary and "owner unknown" in out.summary
    # the same node with HCCL moved to 50000: 60000 is no longer HCCL's
    out = judge(
        tmp_path,
        "DRV-PORT-001",
        {"/proc/net/tcp": TCP_HEAD + tcp_row(1, 60000, 9)},
        procs=[vllm(4242, HCCL_IF_BASE_PORT="50000")],
    )
    assert out.status is Status.PASS, out.summary
    assert "HCCL 50000-50031" in out.summary


def test_port_held_by_the_service_itself_passes(tmp_path):
    files = {
        "/proc/net/tcp": TCP_HEAD + tcp_row(0, 8000, 9100),
        "/proc/4242/fd/7": Link("socket:[9100]"),
        "/proc/4242/comm": "python\n",
    }
    out = judge(tmp_path, "DRV-PORT-001", files, [vllm(4242)])
    assert out.status is Status.PASS, out.summary
    assert "by the service itself, pid 4242" in out.summary


def test_unknown_owner_with_a_running_service_warns_and_unreadable_tables_skip(tmp_path):
    files = {"/proc/net/tcp": TCP_HEAD + tcp_row(0, 8000, 9200)}
    out = judge(tmp_path, "DRV-PORT-001", files, [vllm(4242)])
    assert out.status is Status.WARN and "owner is unknown" in out.summary
    (tmp_path / "root/proc/net/tcp").unlink()
    (tmp_path / "root/proc/net/tcp6").unlink()
    ctx = Context(ServingHost(str(tmp_path / "root"), tmp_path / "bin", []), parse_policy(""))
    assert load_registry(entry_points=False).get("DRV-PORT-001").func(ctx).status is Status.SKIP


# --- DRV-NETIF-001 ----------------------------------------------------------------------------


def test_interfaces_that_exist_and_hold_the_address_pass(tmp_path):
    proc = vllm(
        4242,
        GLOO_SOCKET_IFNAME="eth0",
        TP_SOCKET_IFNAME="eth0",
        VLLM_HOST_IP="10.0.0.5",
        HCCL_SOCKET_IFNAME="eth",
        HCCL_IF_IP="10.0.0.5",
    )
    out = judge(tmp_path, "DRV-NETIF-001", procs=[proc])
    assert out.status is Status.PASS, out.summary
    assert out.evidence[-1].source.startswith("/sys/class/net/*/operstate")
    assert "eth0 up 10.0.0.5" in out.evidence[-1].excerpt


@pytest.mark.parametrize(
    ("env", "phrase"),
    [
        ({"GLOO_SOCKET_IFNAME": "ens9"}, "GLOO_SOCKET_IFNAME=ens9: no interface 'ens9'"),
        ({"TP_SOCKET_IFNAME": "eth1"}, "TP_SOCKET_IFNAME=eth1: interface is not up (eth1 down)"),
        ({"GLOO_SOCKET_IFNAME": "eth2"}, "eth2 holds no IP address"),
        ({"VLLM_HOST_IP": "10.9.9.9"}, "VLLM_HOST_IP=10.9.9.9 is held by no interface"),
        ({"HCCL_IF_IP": "10.1.0.5"}, "HCCL_IF_IP=10.1.0.5 is on eth1, which is down"),
        ({"HCCL_IF_IP": "not-an-ip"}, "HCCL_IF_IP='not-an-ip' is not an IP address"),
        (
            {"VLLM_HOST_IP": "10.0.0.5", "GLOO_SOCKET_IFNAME": "eth2"},
            "VLLM_HOST_IP=10.0.0.5 is on eth0 but GLOO_SOCKET_IFNAME=eth2",
        ),
    ],
)
def test_each_interface_failure(tmp_path, env, phrase):
    out = judge(tmp_path, "DRV-NETIF-001", procs=[vllm(4242, **env)])
    assert out.status is Status.FAIL
    assert phrase in out.summary


def test_without_a_route_table_only_local_addresses_are_known(tmp_path):
    files = {"/proc/net/route": b"\x00"}
    (tmp_path / "root/proc/net").mkdir(parents=True, exist_ok=True)
    out = judge(tmp_path, "DRV-NETIF-001", files, procs=[vllm(4242, VLLM_HOST_IP="10.0.0.9")])
    assert out.status is Status.FAIL, out.summary
    assert "10.0.0.9" in out.summary
    out = judge(tmp_path, "DRV-NETIF-001", procs=[vllm(4242, GLOO_SOCKET_IFNAME="eth0")])
    assert out.status is Status.PASS, out.summary


def test_the_auditing_machines_ip_command_is_never_asked(tmp_path):
    standin(tmp_path / "bin", "ip", {"*": {"stdout": "[]", "rc": 0}})
    proc = vllm(4242, VLLM_HOST_IP="10.0.0.5")
    out = judge(tmp_path, "DRV-NETIF-001", procs=[proc])
    assert out.status is Status.PASS, out.summary
    assert not any(e.kind == "command" for e in out.evidence)


def test_no_named_interface_skips(tmp_path):
    assert judge(tmp_path, "DRV-NETIF-001", procs=[vllm(4242)]).status is Status.SKIP


# --- DRV-MNODE-001 ----------------------------------------------------------------------------


def test_multinode_timeouts(tmp_path):
    assert judge(tmp_path, "DRV-MNODE-001", procs=[vllm(4242)]).status is Status.SKIP
    cfg = tmp_path / "serve.yaml"
    cfg.write_text("model: /models/ds\nnnodes: 2\n")
    out = judge(tmp_path, "DRV-MNODE-001", configs=[cfg])
    assert out.status is Status.WARN
    assert "HCCL_CONNECT_TIMEOUT unset (default 120 s) < 600 s" in out.summary
    proc = vllm(4242, "--headless", HCCL_CONNECT_TIMEOUT="1800", HCCL_EXEC_TIMEOUT="0")
    out = judge(tmp_path, "DRV-MNODE-001", procs=[proc])
    assert out.status is Status.WARN and "HCCL_EXEC_TIMEOUT=0" in out.summary
    proc = vllm(4242, "--headless", HCCL_CONNECT_TIMEOUT="1800", HCCL_EXEC_TIMEOUT="600")
    out = judge(tmp_path, "DRV-MNODE-001", procs=[proc])
    assert out.status is Status.WARN and "600 s < HCCL_CONNECT_TIMEOUT 1800 s" in out.summary
    proc = vllm(4242, "--headless", HCCL_CONNECT_TIMEOUT="abc")
    assert judge(tmp_path, "DRV-MNODE-001", procs=[proc]).status is Status.FAIL
    proc = vllm(4242, "--headless", HCCL_CONNECT_TIMEOUT="1800", HCCL_EXEC_TIMEOUT="3600")
    out = judge(tmp_path, "DRV-MNODE-001", procs=[proc])
    assert out.status is Status.PASS, out.summary


# --- DRV-RAY-001 ------------------------------------------------------------------------------

RAY_STATUS = """======== Autoscaler status: 2026-03-25 05:44:29 ========
Node status
---------------------------------------------------------------
Active:
 1 node_0c5a
Resources
---------------------------------------------------------------
Usage:
 0.0/192.0 CPU
 0.0/{npus}.0 NPU
 0B/1.50TiB memory
"""


def test_ray_view(tmp_path):
    ray_argv = (
        "--tensor-parallel-size",
        "8",
        "--pipeline-parallel-size",
        "2",
        "--distributed-executor-backend",
        "ray",
    )
    assert judge(tmp_path, "DRV-RAY-001", procs=[vllm(4242)]).status is Status.SKIP
    out = judge(tmp_path, "DRV-RAY-001", procs=[vllm(4242, *ray_argv)])
    assert out.status is Status.SKIP and "not on PATH" in out.summary
    out = judge(
        tmp_path, "DRV-RAY-001", procs=[vllm(4242, *ray_argv)], ray=RAY_STATUS.format(npus=16)
    )
    assert out.status is Status.PASS, out.summary
    out = judge(
        tmp_path, "DRV-RAY-001", procs=[vllm(4242, *ray_argv)], ray=RAY_STATUS.format(npus=8)
    )
    assert out.status is Status.FAIL and "Ray offers 8 NPUs, the launch needs 16" in out.summary
    no_npu = RAY_STATUS.replace(" 0.0/{npus}.0 NPU\n", "")
    out = judge(tmp_path, "DRV-RAY-001", procs=[vllm(4242, *ray_argv)], ray=no_npu)
    assert out.status is Status.FAIL and "lists no NPU resource" in out.summary
