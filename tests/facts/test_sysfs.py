"""Tests for the sysfs facts: value parsers, PCI/NUMA/NVMe gatherers and /dev nodes."""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from shared_fixtures import FIXTURES, REFERENCE
from sysroot import (
    DIR,
    NPU_BDFS,
    DirReader,
    FileRead,
    Link,
    attrs,
    healthy_910b_node,
    local,
    write_tree,
)

from ascend_audit.facts.sysfs import (
    collect_dev_nodes,
    collect_numa,
    collect_nvme,
    collect_pci_npus,
    family_of,
    format_cpulist,
    parse_cpu_ranges,
    parse_cpulist,
    parse_hex_id,
    parse_link_speed,
    parse_link_width,
    parse_numa_node,
    parse_nvme_address,
)

DRIVER_REF = REFERENCE / "driver"


# --------------------------------------------------------------------------------------------
# value parsers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("16.0 GT/s PCIe\n", 16.0),
        ("16 GT/s\n", 16.0),  # kernels up to 5.6
        ("8.0 GT/s PCIe", 8.0),
        ("2.5 GT/s PCIe", 2.5),
        ("5 GT/s", 5.0),
        ("32.0 GT/s PCIe", 32.0),
        ("64.0 GT/s PCIe", 64.0),
        ("Unknown", None),
        ("Unknown speed\n", None),
        ("", None),
        ("GT/s", None),
        ("0 GT/s", None),
        ("fast", None),
        (None, None),
    ],
)
def test_parse_link_speed(text, expected):
    assert parse_link_speed(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("16\n", 16), ("8", 8), ("x4", 4), ("0", 0), ("", None), ("sixteen", None), ("-1", None)],
)
def test_parse_link_width(text, expected):
    assert parse_link_width(text) == expected


def test_parse_cpulist_ranges_and_singles():
    cpus = parse_cpulist("0-23,48-71\n")
    assert cpus is not None and len(cpus) == 48
    assert cpus[:2] == (0, 1) and cpus[-1] == 71 and 24 not in cpus
    assert parse_cpulist("5") == (5,)
    assert parse_cpulist("3,1,1-2") == (1, 2, 3)
    assert parse_cpulist("\n") == ()
    assert parse_cpu_ranges("0-95,96-191") == ((0, 95), (96, 191))
    assert format_cpulist(parse_cpulist("0-23,48-71,100")) == "0-23,48-71,100"


@given(st.sets(st.integers(min_value=0, max_value=4095), max_size=300))
def test_cpulist_round_trips_through_the_kernel_format(cpus):
    assert parse_cpulist(format_cpulist(tuple(cpus))) == tuple(sorted(cpus))


@given(st.text(max_size=40))
def test_value_parsers_never_raise(text):
    parse_cpulist(text)
    parse_link_speed(text)
    parse_link_width(text)
    parse_hex_id(text)
    parse_numa_node(text)
    assert isinstance(parse_nvme_address(text), dict)


@pytest.mark.parametrize("bad", ["0-", "5-3", "a-b", "0-99999999", "1,,2", "0 - 3", "0-3:2", None])
def test_parse_cpulist_garbage_is_none(bad):
    assert parse_cpulist(bad) is None


def test_parse_hex_ids_and_numa_node():
    assert parse_hex_id("0x19e5\n") == 0x19E5
    assert parse_hex_id("0XD802") == 0xD802
    assert parse_hex_id("19e5") == 0x19E5
    assert parse_hex_id("0xzz") is None
    assert parse_hex_id("") is None
    assert family_of(0xD802) == "910B" and family_of(0xD803) == "910_93"
    assert family_of(0xD806) == "950" and family_of(0xD500) == "310P" and family_of(0x1234) is None
    assert parse_numa_node("-1\n") is None
    assert parse_numa_node("0\n") == 0
    assert parse_numa_node("3") == 3
    assert parse_numa_node("node1") is None


def test_parse_nvme_address_shapes():
    kernel = parse_nvme_address("traddr=192.168.10.20,trsvcid=4420,src_addr=192.168.10.5\n")
    assert kernel == {"traddr": "192.168.10.20", "trsvcid": "4420", "src_addr": "192.168.10.5"}
    old_cli = parse_nvme_address("traddr=10.0.2.15 trsvcid=4420")
    assert old_cli["traddr"] == "10.0.2.15" and old_cli["trsvcid"] == "4420"
    assert parse_nvme_address("0000:83:00.0") == {"traddr": "0000:83:00.0"}
    assert parse_nvme_address("garbage") == {}
    assert parse_nvme_address(None) == {}


# --------------------------------------------------------------------------------------------
# PCI inventory


def test_healthy_node_pci_inventory(tmp_path):
    node = healthy_910b_node(tmp_path)
    inv = collect_pci_npus(node.reader())
    assert inv.problems == ()
    assert [n.bdf for n in inv.npus] == list(NPU_BDFS)
    assert {n.family for n in inv.npus} == {"910B"}
    assert inv.chip_count == 8
    assert len(inv.npus_on_node(0)) == 4 and len(inv.npus_on_node(1)) == 4
    first = inv.npu("0000:01:00.0")
    assert first is not None
    assert first.device_id == "0xd802" and first.vendor_id == "0x19e5" and first.huawei_vendor
    assert first.driver == "devdrv_device_driver"
    assert first.local_cpulist is not None and len(first.local_cpulist) == 96
    assert first.link.current_speed == 16.0 and first.link.current_width == 16
    assert not first.link.width_reduced and not first.link.speed_reduced
    assert first.upstream_bdf == "0000:00:01.0"
    assert first.upstream_link is not None and first.upstream_link.max_width == 16
    assert first.sysfs_path == "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
    # The Kunpeng root ports carry the Huawei vendor id but are not NPUs.
    assert all(n.device_id != "0xa120" for n in inv.npus)
    json.dumps(inv.to_dict())


def test_rdma_nic_and_net_interfaces(tmp_path):
    inv = collect_pci_npus(healthy_910b_node(tmp_path).reader())
    (mlx,) = inv.rdma_devices
    assert mlx.name == "mlx5_0" and mlx.pci_bdf == "0000:84:00.0" and mlx.numa_node == 1
    assert mlx.netdevs == ("ib0",)
    names = [n.name for n in inv.net_interfaces]
    assert names == ["ib0"]  # lo has no device behind it
    ib0 = inv.net_interfaces[0]
    assert ib0.numa_node == 1 and ib0.operstate == "up" and ib0.rdma_devices == ("mlx5_0",)
    assert ib0.speed_mbps == 200000 and ib0.mtu == 4092


def test_downtrained_link_is_visible_on_npu_and_upstream_port(tmp_path):
    node = healthy_910b_node(tmp_path, downtrained=True)
    inv = collect_pci_npus(node.reader())
    slow = inv.npu(node.downtrained_bdf)
    assert slow is not None
    assert slow.link.current_width == 8 and slow.link.current_speed == 8.0
    assert slow.link.width_reduced and slow.link.speed_reduced
    assert slow.upstream_link is not None and slow.upstream_link.width_reduced
    assert sum(n.link.width_reduced for n in inv.npus) == 1


def _one_function(root: Path, bdf: str = "0000:01:00.0", **values: str) -> None:
    spec = {f"/sys/devices/pci0000:00/0000:00:01.0/{bdf}/{k}": v for k, v in values.items()}
    spec[f"/sys/bus/pci/devices/{bdf}"] = Link(f"../../../devices/pci0000:00/0000:00:01.0/{bdf}")
    write_tree(root, spec)


def test_old_kernel_speed_numa_unknown_and_unbound(tmp_path):
    _one_function(
        tmp_path,
        vendor="0x19e5\n",
        device="0xd801\n",
        numa_node="-1\n",
        current_link_speed="16 GT/s\n",
        max_link_speed="16 GT/s\n",
        current_link_width="16\n",
    )
    (npu,) = collect_pci_npus(DirReader(tmp_path)).npus
    assert npu.family == "910"
    assert npu.numa_node is None and npu.numa_node_raw == "-1"
    assert npu.link.current_speed == 16.0 and npu.link.max_width is None
    assert npu.driver is None  # no driver link: unbound
    assert npu.upstream_bdf == "0000:00:01.0" and npu.upstream_link is None


def test_partner_vendor_accepted_with_note_other_class_ignored(tmp_path):
    _one_function(tmp_path, "0000:01:00.0", vendor="0x1d94\n", device="0xd802\n")
    _one_function(
        tmp_path, "0000:02:00.0", vendor="0x1e2d\n", device="0xd500\n", **{"class": "0x120000\n"}
    )
    _one_function(
        tmp_path, "0000:03:00.0", vendor="0x8086\n", device="0xd100\n", **{"class": "0x020000\n"}
    )
    inv = collect_pci_npus(DirReader(tmp_path))
    assert [n.bdf for n in inv.npus] == ["0000:01:00.0", "0000:02:00.0"]
    assert not inv.npus[0].huawei_vendor
    assert "not Huawei" in inv.npus[0].notes[0]


def test_unknown_huawei_accelerator_is_reported_not_counted(tmp_path):
    _one_function(tmp_path, vendor="0x19e5\n", device="0xd807\n", **{"class": "0x120000\n"})
    inv = collect_pci_npus(DirReader(tmp_path))
    assert inv.npus == ()
    assert any("unknown device id 0xd807" in p for p in inv.problems)


def test_duo_and_virtual_function_chip_counting(tmp_path):
    _one_function(
        tmp_path, "0000:01:00.0", vendor="0x19e5\n", device="0xd500\n", subsystem_device="0x0110\n"
    )
    _one_function(tmp_path, "0000:02:00.0", vendor="0x19e5\n", device="0xd805\n")
    inv = collect_pci_npus(DirReader(tmp_path))
    duo, vf = inv.npus
    assert duo.chips == 2 and not duo.virtual_function
    assert vf.virtual_function and vf.family == "910B"
    assert inv.chip_count == 2


def test_garbage_and_missing_attributes(tmp_path):
    _one_function(
        tmp_path,
        "0000:01:00.0",
        vendor="0x19e5\n",
        device="0xd802\n",
        numa_node="banana\n",
        local_cpulist="0-\n",
        current_link_speed="\x00\xff\n",
        current_link_width="wide\n",
    )
    _one_function(tmp_path, "0000:02:00.0", vendor="not hex\n", device="0xd802\n")
    _one_function(tmp_path, "0000:03:00.0")  # a dir with no attributes at all
    inv = collect_pci_npus(DirReader(tmp_path))
    (npu,) = inv.npus
    assert npu.numa_node is None and npu.local_cpulist is None
    assert npu.link.current_speed is None and npu.link.current_width is None
    assert any("local_cpulist" in n for n in npu.notes)
    assert any("0000:02:00.0" in p for p in inv.problems)
    assert any("0000:03:00.0" in p for p in inv.problems)


def test_unreadable_attribute_is_a_problem_not_a_crash(tmp_path):
    node = healthy_910b_node(tmp_path)
    dev = f"/sys/bus/pci/devices/{NPU_BDFS[0]}"
    reader = DirReader(node.root, errors={f"{dev}/vendor": "Permission denied"})
    inv = collect_pci_npus(reader)
    assert len(inv.npus) == 7
    assert any("Permission denied" in p for p in inv.problems)


def test_symlink_loops_do_not_hang_or_raise(tmp_path):
    node = healthy_910b_node(tmp_path)
    write_tree(
        node.root,
        {
            "/sys/bus/pci/devices/0000:99:00.0": Link("0000:99:00.0"),
            "/sys/class/infiniband/loop0": Link("loop0"),
            "/sys/class/net/loopy": Link("../net/loopy"),
            "/sys/class/nvme/nvme9": Link("nvme9"),
        },
    )
    inv = collect_pci_npus(node.reader())
    assert len(inv.npus) == 8
    assert any("0000:99:00.0" in p for p in inv.problems)
    nvme = collect_nvme(node.reader())
    assert {c.name for c in nvme.controllers} >= {"nvme0", "nvme1", "nvme2"}


class _Exploding:
    """A reader whose every primitive raises: facts must still come back."""

    def __getattr__(self, name):
        def boom(*_a, **_k):
            raise RuntimeError(f"{name} exploded")

        return boom


class _Lying:
    """A reader that returns wrong types everywhere."""

    def read_text(self, path):
        return 42

    def listdir(self, path):
        return ["0000:01:00.0", 7, None]

    def realpath(self, path):
        return None

    def readlink(self, path):
        return b"bytes"

    def exists(self, path):
        return "yes"

    def stat(self, path):
        return object()


@pytest.mark.parametrize("reader", [_Exploding(), _Lying()])
def test_hostile_readers_never_raise(reader):
    inv = collect_pci_npus(reader)
    assert inv.npus == () and inv.problems
    assert collect_numa(reader).online is None
    assert collect_nvme(reader).controllers == ()
    dev = collect_dev_nodes(reader)
    assert dev.davinci_indices == ()
    json.dumps(inv.to_dict())
    json.dumps(dev.to_dict())


def test_empty_root(tmp_path):
    reader = DirReader(tmp_path)
    inv = collect_pci_npus(reader)
    assert inv.npus == () and any("no PCI functions" in p for p in inv.problems)
    numa = collect_numa(reader)
    assert numa.online is None and numa.nodes == () and numa.problems
    nvme = collect_nvme(reader)
    assert nvme.controllers == () and nvme.multipath is None
    dev = collect_dev_nodes(reader)
    assert dev.davinci == () and len(dev.missing_control) == 3


# --------------------------------------------------------------------------------------------
# NUMA


def test_numa_healthy(tmp_path):
    numa = collect_numa(healthy_910b_node(tmp_path).reader())
    assert numa.problems == ()
    assert numa.online == (0, 1)
    assert numa.cpus_of(1) is not None and len(numa.cpus_of(1)) == 96
    assert numa.node_of_cpu(100) == 1 and numa.node_of_cpu(5) == 0 and numa.node_of_cpu(999) is None
    d = numa.to_dict()
    assert d["nodes"][1]["cpulist"] == "96-191" and d["cpus_online"] == "0-191"
    json.dumps(d)


def test_numa_garbage_and_unreadable(tmp_path):
    write_tree(
        tmp_path,
        {
            "/sys/devices/system/node/online": "zero-one\n",
            "/sys/devices/system/node/node0/cpulist": "0-3\n",
            "/sys/devices/system/node/node1/cpulist": "what\n",
        },
    )
    numa = collect_numa(
        DirReader(tmp_path, errors={"/sys/devices/system/node/node0/cpulist": "I/O error"})
    )
    assert numa.online is None
    assert [n.node for n in numa.nodes] == [0, 1]
    assert all(n.cpus is None for n in numa.nodes)
    assert any("unparseable" in p for p in numa.problems)
    assert any("I/O error" in p for p in numa.problems)


# --------------------------------------------------------------------------------------------
# NVMe


def test_nvme_healthy_inventory(tmp_path):
    node = healthy_910b_node(tmp_path)
    reader = node.reader()
    nvme = collect_nvme(reader)
    assert nvme.problems == ()
    assert nvme.multipath is True
    local_ctrl = nvme.controller("nvme0")
    assert local_ctrl is not None and local_ctrl.transport == "pcie"
    assert local_ctrl.pci_bdf == "0000:83:00.0" and local_ctrl.numa_node == 1
    assert local_ctrl.model == "3.84TB NVMe Gen4 U.2 boot SSD"  # padding stripped
    assert local_ctrl.namespaces == ("nvme0n1",) and not local_ctrl.fabrics
    fab = nvme.controller("nvme1")
    assert fab is not None and fab.transport == "rdma" and fab.fabrics
    assert (fab.traddr, fab.trsvcid) == ("192.168.10.20", "4420")
    assert fab.state == "live" and fab.subsystem == "nvme-subsys1" and fab.numa_node is None
    assert fab.pci_bdf is None and fab.ctrl_loss_tmo == "600"
    sub = nvme.subsystem("nvme-subsys1")
    assert sub is not None and sub.iopolicy == "numa"
    assert sub.controllers == ("nvme1", "nvme2") and sub.namespaces == ("nvme1n1", "nvme1n2")
    head = nvme.namespace("nvme1n1")
    assert head is not None and head.dev == "259:1" and head.subsystem == "nvme-subsys1"
    assert head.size_bytes == 15002931888 * 512
    assert nvme.namespace_by_dev("259:0").name == "nvme0n1"
    paths = nvme.paths_of("nvme1n1")
    assert [(p.name, p.controller, p.ana_state) for p in paths] == [
        ("nvme1c1n1", "nvme1", "optimized"),
        ("nvme1c2n1", "nvme2", "optimized"),
    ]
    assert {c.name for c in nvme.controllers_of("nvme1n2")} == {"nvme1", "nvme2"}
    assert [n.name for n in nvme.namespaces] == ["nvme0n1", "nvme1n1", "nvme1n2"]
    json.dumps(nvme.to_dict())


def test_nvme_non_optimized_path_variant(tmp_path):
    nvme = collect_nvme(healthy_910b_node(tmp_path, all_optimized=False).reader())
    states = {p.name: p.ana_state for p in nvme.paths_of("nvme1n1")}
    assert states == {"nvme1c1n1": "optimized", "nvme1c2n1": "non-optimized"}


def test_nvme_never_reads_nuse(tmp_path):
    node = healthy_910b_node(tmp_path)
    for path in ("/sys/devices/virtual/nvme-subsystem/nvme-subsys1/nvme1n1/nuse",):
        local(node.root, path).write_text("123\n")
    reader = node.reader()
    collect_nvme(reader)
    assert reader.reads, "the gatherer read nothing"
    assert not [p for p in reader.reads if p.endswith("/nuse")]


def test_nvme_fabrics_states_and_tcp_src_addr(tmp_path):
    node = healthy_910b_node(tmp_path)
    ctl = "/sys/devices/virtual/nvme-fabrics/ctl"
    write_tree(
        node.root,
        {
            f"{ctl}/nvme2/state": "connecting\n",
            f"{ctl}/nvme2/transport": "tcp\n",
            f"{ctl}/nvme2/address": "traddr=192.168.11.20,trsvcid=4420,src_addr=192.168.11.5\n",
        },
    )
    c = collect_nvme(node.reader()).controller("nvme2")
    assert c is not None and c.state == "connecting" and c.transport == "tcp"
    assert c.src_addr == "192.168.11.5"


def test_nvme_block_dir_fallback_and_garbage(tmp_path):
    # A namespace visible only through /sys/block (its parent listing unreadable).
    write_tree(
        tmp_path,
        {
            **attrs("/sys/devices/virtual/nvme-subsystem/nvme-subsys3/nvme3n1", dev="259:9"),
            "/sys/block/nvme3n1": Link("../devices/virtual/nvme-subsystem/nvme-subsys3/nvme3n1"),
            "/sys/block/nvme3c3n1": Link("../devices/virtual/nvme-fabrics/ctl/nvme3/nvme3c3n1"),
            **attrs("/sys/devices/virtual/nvme-fabrics/ctl/nvme4", state="live", cntlid="many"),
            "/sys/class/nvme/nvme4": Link("../../devices/virtual/nvme-fabrics/ctl/nvme4"),
            "/sys/class/nvme/not-a-controller": DIR,
        },
    )
    nvme = collect_nvme(DirReader(tmp_path))
    assert [n.name for n in nvme.namespaces] == ["nvme3n1"]
    assert nvme.namespaces[0].subsystem == "nvme-subsys3"
    (c,) = nvme.controllers
    assert c.transport is None and c.cntlid is None
    assert any("nvme4: transport unknown" in p for p in nvme.problems)


def _tree_from_libnvme_capture(root: Path, text: str) -> None:
    spec: dict[str, object] = {}
    section = None
    for line in text.splitlines():
        if line.endswith(":") and line.startswith("sys/class/"):
            section = "/" + line[:-1]
            continue
        m = re.match(r"^(\S+) -> (\S+)$", line)
        if m and section:
            spec[f"{section}/{m.group(1)}"] = Link(m.group(2))
            continue
        m = re.match(r"^(/sys/\S+) (b'.*')$", line)
        if m:
            spec[m.group(1)] = ast.literal_eval(m.group(2))
    write_tree(root, spec)


def test_real_libnvme_pcie_capture(tmp_path):
    ref = DRIVER_REF / "libnvme_tree-pcie_real_sysfs_values.txt"
    if not ref.is_file():
        pytest.skip("../shared/reference/driver is not beside this checkout")
    _tree_from_libnvme_capture(tmp_path, ref.read_text(encoding="utf-8"))
    nvme = collect_nvme(DirReader(tmp_path))
    assert [c.name for c in nvme.controllers] == ["nvme0", "nvme1", "nvme2"]
    assert {c.transport for c in nvme.controllers} == {"pcie"}
    n0, n1, n2 = nvme.controllers
    assert n0.pci_bdf == "0214:90:00.0" and n0.numa_node == 1 and n0.cntlid == 129
    assert n0.model == "3.2TB NVMe Gen4 U.2 SSD V" and n0.serial == "S7DFNG0W700063"
    assert n0.subsysnqn == "nqn.1994-11.com.samsung:nvme:PM1743:2.5-inch:S7DFNG0W700063"
    assert n0.namespaces == ("nvme0n1",)
    assert n1.paths[0].name == "nvme1c1n1" and n1.paths[0].head == "nvme1n1"
    assert n2.numa_node == 2 and n2.paths[0].numa_nodes == "2-3"
    assert {s.name: s.iopolicy for s in nvme.subsystems} == {
        "nvme-subsys0": "numa",
        "nvme-subsys1": "numa",
    }
    head = nvme.namespace("nvme1n1")
    assert head is not None and head.dev == "259:2" and head.subsystem == "nvme-subsys1"
    assert len(nvme.paths_of("nvme1n1")) == 2
    assert nvme.namespace("nvme0n1").size_sectors == 978143920


# --------------------------------------------------------------------------------------------
# /dev nodes


def test_dev_nodes_with_ownership_shim(tmp_path):
    dev = collect_dev_nodes(healthy_910b_node(tmp_path).reader())
    assert dev.problems == ()
    assert dev.davinci_indices == tuple(range(8))
    assert dev.missing_control == ()
    mgr = dev.node("/dev/davinci_manager")
    assert mgr is not None and mgr.owner == "HwHiAiUser" and mgr.mode == "0660"
    assert mgr.is_char_device is True and mgr.uid == 1000
    json.dumps(dev.to_dict())


def test_dev_nodes_missing_chip_and_plain_stat(tmp_path):
    node = healthy_910b_node(tmp_path, missing_chip=True)
    assert node.davinci == tuple(range(7))
    dev = collect_dev_nodes(DirReader(node.root))  # no shim: real os.stat of plain files
    assert dev.davinci_indices == tuple(range(7))
    d0 = dev.node("/dev/davinci0")
    assert d0 is not None and d0.mode == "0660" and d0.is_char_device is False
    # The PCI functions are all still there: the gap is what a check must catch.
    assert len(collect_pci_npus(node.reader()).npus) == 8


def test_dev_nodes_reader_without_stat(tmp_path):
    node = healthy_910b_node(tmp_path)

    class NoStat:
        def __init__(self, inner):
            self.inner = inner

        def read_text(self, p):
            return self.inner.read_text(p)

        def listdir(self, p):
            return self.inner.listdir(p)

        def realpath(self, p):
            return self.inner.realpath(p)

        def readlink(self, p):
            return self.inner.readlink(p)

        def exists(self, p):
            return self.inner.exists(p)

    dev = collect_dev_nodes(NoStat(DirReader(node.root)))
    assert dev.davinci_indices == tuple(range(8))
    assert dev.davinci[0].owner is None and dev.davinci[0].mode is None
    assert any("cannot stat" in p for p in dev.problems)


def test_dir_reader_contract(tmp_path):
    write_tree(tmp_path, {"/a/b": "x\n", "/a/l": Link("b"), "/loop": Link("loop")})
    r = DirReader(tmp_path, errors={"/a/b": "Permission denied"})
    assert r.read_text("/a/b") == FileRead("/a/b", None, "Permission denied")
    assert r.read_text("/a/l").text == "x\n"
    assert r.realpath("/a/l") == "/a/b" and r.readlink("/a/l") == "b"
    assert r.read_text("/loop").text is None and r.listdir("/loop") is None
    assert r.listdir("/a") == ["b", "l"] and not r.exists("/nope")
    assert os.path.islink(local(tmp_path, "/a/l"))


# --------------------------------------------------------------------------------------------
# builders write the real version-file formats


def _keys(text: str) -> list[str]:
    return [line.split("=", 1)[0] for line in text.splitlines() if "=" in line]


def test_builder_version_files_follow_real_formats(tmp_path):
    vf = FIXTURES / "version_files"
    if not vf.is_dir():
        pytest.skip("../shared/fixtures/version_files is not beside this checkout")
    node = healthy_910b_node(tmp_path)
    drv = local(node.root, "/usr/local/Ascend/driver/version.info").read_text()
    fw = local(node.root, "/usr/local/Ascend/firmware/version.info").read_text()
    real_drv = (vf / "driver_version_info_24.1.rc1_mind-cluster-doc.txt").read_text()
    real_fw = (vf / "firmware_version_info_7.1.0.11.220_mind-cluster-doc.txt").read_text()
    assert set(_keys(real_drv)) <= set(_keys(drv))
    assert _keys(fw) == _keys(real_fw)
    assert drv != real_drv and fw != real_fw
    toolkit = local(
        node.root,
        "/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info",
    ).read_text()
    real_tk = (
        vf / "cann_ascend_toolkit_install_info_8.0.0_aarch64_vllm-ascend-312.txt"
    ).read_text()
    assert _keys(toolkit) == _keys(real_tk)

    bad = healthy_910b_node(tmp_path / "mismatch", version_mismatch=True)
    drv = local(bad.root, "/usr/local/Ascend/driver/version.info").read_text()
    fw = local(bad.root, "/usr/local/Ascend/firmware/version.info").read_text()
    assert "Version=25.0.rc1.1\n" in drv and "compatible_version_fw=[7.0.0,7.7.99]" in drv
    real_range = next(line for line in real_fw.splitlines() if "compatible_version_drv" in line)
    assert real_range in fw.splitlines() and "Version=7.1.0.11.220\n" in fw


def test_engine_live_host_satisfies_the_reader_protocol(tmp_path):
    live = pytest.importorskip("ascend_audit.host.live", reason="the engine's LiveHost")
    node = healthy_910b_node(tmp_path, downtrained=True)
    host = live.LiveHost(sysroot=str(node.root))
    inv = collect_pci_npus(host)
    assert len(inv.npus) == 8 and inv.problems == ()
    assert inv.npu(node.downtrained_bdf).link.width_reduced
    assert collect_numa(host).online == (0, 1)
    assert collect_nvme(host).controller("nvme1").transport == "rdma"
    assert collect_dev_nodes(host).davinci_indices == tuple(range(8))
