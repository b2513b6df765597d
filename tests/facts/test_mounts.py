"""Tests for mount parsing, path-to-storage classification and nvme-cli JSON."""

from __future__ import annotations

import json
import re
import time

import pytest
from shared_fixtures import REFERENCE
from sysroot import Link, attrs, healthy_910b_node, write_tree

from ascend_audit.facts.mounts import (
    Mount,
    MountTable,
    classify_path,
    find_mount,
    parse_mountinfo,
    parse_proc_mounts,
    unescape_mount_field,
)
from ascend_audit.facts.nvme_cli import parse_nvme_list_json
from ascend_audit.facts.sysfs import collect_nvme

DRIVER_REF = REFERENCE / "driver"


def _ref(name: str) -> str:
    p = DRIVER_REF / name
    if not p.is_file():
        pytest.skip(f"../shared/reference/driver/{name} is not beside this checkout")
    return p.read_text(encoding="utf-8")


def _node_table(node) -> MountTable:
    return parse_mountinfo(node.reader().read_text("/proc/self/mountinfo").text)


# --------------------------------------------------------------------------------------------
# parsing


def test_parse_mountinfo_fields(tmp_path):
    table = _node_table(healthy_910b_node(tmp_path))
    assert table.problems == ()
    assert len(table) == 8 and table.source == "mountinfo"
    models = table.at("/models")
    assert models is not None
    assert (models.major, models.minor, models.devnum) == (259, 1, "259:1")
    assert models.fstype == "xfs" and models.source == "/dev/nvme1n1"
    assert models.mount_id == 120 and models.parent_id == 29 and models.optional == ("shared:60",)
    assert models.has_flag("relatime") and models.option("logbsize") == "32k"
    datasets = table.at("/datasets")
    assert datasets.option("proto") == "tcp" and datasets.option("vers") == "4.2"
    assert [m.mount_point for m in table][:2] == ["/", "/sys"]
    assert table[0].devnum == "259:5"
    json.dumps(table.to_dict())


def test_mountinfo_escapes_and_optional_fields():
    text = (
        "36 35 98:0 /mnt1 /mnt/my\\040models rw,noatime master:1 shared:7 - ext3 /dev/root rw\n"
        "37 35 0:40 / /tab\\011dir rw - tmpfs tmp\\134fs rw\n"
        "38 35 0:41 /sub\\040dir /x rw - tmpfs none rw\n"
    )
    a, b, c = parse_mountinfo(text)
    assert a.mount_point == "/mnt/my models" and a.root == "/mnt1"
    assert a.optional == ("master:1", "shared:7")
    assert b.mount_point == "/tab\tdir" and b.source == "tmp\\fs" and b.optional == ()
    assert c.root == "/sub dir"
    assert unescape_mount_field("no escapes") == "no escapes"
    assert unescape_mount_field("\\012") == "\n"


def test_reference_mountinfo_lines_from_design():
    text = _ref("fake_sysroot_design.md")
    lines = re.findall(r'"(\d+ \d+ \d+:\d+ [^"]+)"', text)
    assert len(lines) >= 2, "the design's example mountinfo lines were not found"
    table = parse_mountinfo("\n".join(lines))
    assert table.at("/models").devnum == "259:1"
    nfs = table.at("/datasets")
    assert nfs.fstype == "nfs4" and nfs.option("vers") == "4.2"
    loc = classify_path("/datasets/x", table, None)
    assert loc.kind == "nfs" and loc.nfs_server == "10.1.24.250" and loc.transport == "tcp"


def test_mountinfo_hostile_input():
    empty = parse_mountinfo("")
    assert len(empty) == 0 and empty.problems
    assert parse_mountinfo(None).problems
    garbage = "\n".join(["no separator here at all", "1 2 3", "- - - -", "\x00\xff" * 50] * 10)
    table = parse_mountinfo(garbage + "\n25 1 8:1 / /data rw - ext4 /dev/sda1 rw\n")
    assert [m.mount_point for m in table] == ["/data"]
    assert any("malformed lines in all" in p for p in table.problems)
    weird = parse_mountinfo("x y zz:top / /w rw - ext4 /dev/sdb rw\n")
    assert weird[0].major is None and weird[0].mount_id is None and weird[0].mount_point == "/w"
    # Missing superblock options field: still parsed.
    (short,) = parse_mountinfo("40 1 0:50 / /s rw - tmpfs tmpfs\n")
    assert short.super_options == () and short.fstype == "tmpfs"


def test_mountinfo_100k_lines_is_fast():
    lines = [
        f"{i + 100} 1 0:{i % 4000} / /mnt/vol{i} rw,relatime shared:{i} - tmpfs tmpfs rw"
        for i in range(100_000)
    ]
    lines.append("200000 1 259:1 / /mnt/vol5/models rw - xfs /dev/nvme1n1 rw")
    start = time.monotonic()
    table = parse_mountinfo("\n".join(lines))
    elapsed = time.monotonic() - start
    assert len(table) == 100_001 and table.problems == ()
    assert elapsed < 10, f"100k lines took {elapsed:.1f}s"
    m = find_mount("/mnt/vol5/models/llama", table)
    assert m is not None and m.devnum == "259:1"
    assert find_mount("/mnt/vol50000/a", table).mount_point == "/mnt/vol50000"


def test_parse_proc_mounts_reference_nfs_samples():
    text = _ref("nfs_proc_mounts_samples.txt")
    table = parse_proc_mounts(text)
    rdma = table.at("/mnt/r1_4096_128")
    assert rdma is not None and rdma.fstype == "nfs4" and rdma.option("proto") == "rdma"
    assert rdma.option("port") == "20049" and rdma.devnum is None
    plain = table.at("/nfs")
    assert plain is not None and plain.source == "10.1.24.250:/nfs"
    assert table.at("/run").fstype == "tmpfs"
    # Sample (b) was quoted without its mount point: it cannot be a mount.
    assert all(m.source != "192.168.1.58:/mnt/user/media" for m in table)
    assert any("malformed" in p for p in table.problems)

    loc = classify_path("/mnt/r1_4096_128/weights", table, None)
    assert loc.kind == "nfs" and loc.transport == "rdma" and loc.rdma
    assert loc.nfs_server == "192.168.1.11" and loc.nfs_version == "4.2" and loc.is_network
    tcp = classify_path("/nfs/models", table, None)
    assert tcp.kind == "nfs" and tcp.transport == "tcp" and not tcp.rdma
    assert classify_path("/mnt/x", table, None).fstype == "ext4"


def test_parse_proc_mounts_hostile():
    assert parse_proc_mounts("").problems and len(parse_proc_mounts("")) == 0
    assert parse_proc_mounts(None).problems
    table = parse_proc_mounts("one two\n/dev/sda1 /my\\040disk ext4 rw 0 0\n")
    assert [m.mount_point for m in table] == ["/my disk"]


# --------------------------------------------------------------------------------------------
# classification on fake nodes


def test_models_on_nvme_of(tmp_path):
    node = healthy_910b_node(tmp_path)
    reader = node.reader()
    loc = classify_path("/models/llama-70b", _node_table(node), reader)
    assert loc.kind == "nvme-of" and loc.is_network and loc.rdma
    assert loc.mount_point == "/models" and loc.devnum == "259:1"
    assert loc.block_devices == ("nvme1n1",) and loc.nvme_subsystem == "nvme-subsys1"
    assert loc.nvme_controllers == ("nvme1", "nvme2") and loc.nvme_transports == ("rdma",)
    assert dict(loc.controller_states) == {"nvme1": "live", "nvme2": "live"}
    assert dict(loc.ana_states) == {"nvme1c1n1": "optimized", "nvme1c2n1": "optimized"}
    assert loc.problems == ()
    json.dumps(loc.to_dict())


def test_models_with_non_optimized_path(tmp_path):
    node = healthy_910b_node(tmp_path, all_optimized=False)
    loc = classify_path("/models", _node_table(node), node.reader())
    assert dict(loc.ana_states)["nvme1c2n1"] == "non-optimized"


def test_root_on_local_nvme_partition(tmp_path):
    node = healthy_910b_node(tmp_path)
    reader = node.reader()
    nvme = collect_nvme(reader)
    loc = classify_path("/usr/local/Ascend", _node_table(node), reader, nvme)
    assert loc.kind == "nvme-local" and not loc.is_network
    assert loc.mount_point == "/" and loc.block_devices == ("nvme0n1",)
    assert loc.via == ("nvme0n1p2",) and loc.nvme_controllers == ("nvme0",)
    assert loc.transport == "pcie"
    # With or without a prebuilt inventory, the answer is the same.
    assert classify_path("/usr/local/Ascend", _node_table(node), reader) == loc


def test_datasets_and_weights_on_nfs(tmp_path):
    node = healthy_910b_node(tmp_path)
    loc = classify_path("/datasets/coco", _node_table(node), node.reader())
    assert loc.kind == "nfs" and loc.nfs_server == "10.1.24.250"

    nfs_node = healthy_910b_node(tmp_path / "nfs", weights_on_nfs=True)
    assert nfs_node.models_kind == "nfs"
    w = classify_path("/models/qwen", _node_table(nfs_node), nfs_node.reader())
    assert w.kind == "nfs" and w.nfs_server == "10.1.24.251" and w.fstype == "nfs4"
    assert w.nvme_controllers == ()


def test_proc_mounts_only_resolves_by_source(tmp_path):
    node = healthy_910b_node(tmp_path)
    reader = node.reader()
    table = parse_proc_mounts(reader.read_text("/proc/mounts").text)
    assert classify_path("/models", table, reader).kind == "nvme-of"
    root = classify_path("/etc", table, reader)
    assert root.kind == "nvme-local" and root.devnum is None
    nfs_node = healthy_910b_node(tmp_path / "nfs", weights_on_nfs=True)
    nfs_table = parse_proc_mounts(nfs_node.reader().read_text("/proc/mounts").text)
    assert classify_path("/models", nfs_table, nfs_node.reader()).kind == "nfs"


def test_pseudo_and_other_filesystems(tmp_path):
    node = healthy_910b_node(tmp_path)
    reader = node.reader()
    table = _node_table(node)
    assert classify_path("/run/lock", table, reader).kind == "other"
    assert classify_path("/sys/bus", table, reader).fstype == "sysfs"
    efi = classify_path("/boot/efi/EFI", table, reader)
    assert efi.kind == "nvme-local" and efi.via == ("nvme0n1p1",)


@pytest.mark.parametrize(
    ("fstype", "source", "kind"),
    [
        ("cifs", "//fs/share", "cifs"),
        ("smb3", "//fs/share", "cifs"),
        ("lustre", "10.0.0.1@o2ib:/lfs", "lustre"),
        ("gpfs", "gpfs0", "gpfs"),
        ("ceph", "10.0.0.2:6789:/", "ceph"),
        ("fuse.ceph-fuse", "ceph-fuse", "ceph"),
        ("fuse.juicefs", "JuiceFS:weights", "fuse"),
        ("nfs", "filer:/vol", "nfs"),
    ],
)
def test_network_filesystems_by_fstype(fstype, source, kind):
    table = parse_mountinfo(f"50 1 0:77 / /w rw - {fstype} {source} rw\n")
    loc = classify_path("/w/model.safetensors", table, None)
    assert loc.kind == kind and loc.is_network


def test_nfs_version_and_server_fallbacks():
    table = parse_proc_mounts("filer:/vol /w nfs4 rw,proto=rdma 0 0\n")
    loc = classify_path("/w", table, None)
    assert loc.nfs_server == "filer" and loc.nfs_version == "4" and loc.transport == "rdma"


def test_longest_prefix_and_overmount():
    table = parse_mountinfo(
        "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
        "2 1 0:60 / /models rw - nfs4 a:/x rw,addr=10.0.0.1\n"
        "3 1 0:61 / /models rw - nfs4 b:/y rw,addr=10.0.0.2\n"
        "4 1 0:62 / /models/sub rw - tmpfs tmpfs rw\n"
    )
    assert find_mount("/models/llama", table).source == "b:/y"  # the later mount covers
    assert find_mount("/models/sub/x", table).fstype == "tmpfs"
    assert find_mount("/modelsX", table).mount_point == "/"
    assert find_mount("models/../models/llama", table).source == "b:/y"
    assert find_mount("/x", []) is None
    assert classify_path("/x", [], None).kind == "unknown"
    assert classify_path("/x", None, None).kind == "unknown"


def test_symlinked_path_is_resolved_first(tmp_path):
    node = healthy_910b_node(tmp_path)
    # Relative target: DirReader resolves plain os.path.realpath (the LiveHost also keeps
    # absolute targets inside the sysroot).
    write_tree(node.root, {"/srv/weights": Link("../models")})
    loc = classify_path("/srv/weights/llama", _node_table(node), node.reader())
    assert loc.resolved_path == "/models/llama" and loc.kind == "nvme-of"


def _add_stacked(root, name: str, devnum: str, slaves: list[str]) -> None:
    base = f"/sys/devices/virtual/block/{name}"
    spec: dict[str, object] = attrs(base, dev=devnum)
    for s in slaves:
        spec[f"{base}/slaves/{s}"] = Link(f"../../../../../class/block/{s}")
    spec[f"/sys/class/block/{name}"] = Link(f"../../devices/virtual/block/{name}")
    spec[f"/sys/dev/block/{devnum}"] = Link(f"../../devices/virtual/block/{name}")
    write_tree(root, spec)


def test_dm_over_nvme_of_walks_slaves(tmp_path):
    node = healthy_910b_node(tmp_path)
    _add_stacked(node.root, "dm-0", "253:0", ["nvme1n1", "nvme1n2"])
    table = parse_mountinfo("7 1 253:0 / /models rw - xfs /dev/mapper/weights-lv rw\n")
    loc = classify_path("/models", table, node.reader())
    assert loc.kind == "nvme-of" and loc.via == ("dm-0",)
    assert loc.block_devices == ("nvme1n1", "nvme1n2")
    assert len(loc.ana_states) == 4


def test_md_over_local_nvme_and_mixed(tmp_path):
    node = healthy_910b_node(tmp_path)
    _add_stacked(node.root, "md0", "9:0", ["nvme0n1p2"])
    write_tree(node.root, {**attrs("/sys/devices/virtual/block/sdz", dev="8:0")})
    write_tree(node.root, {"/sys/class/block/sdz": Link("../../devices/virtual/block/sdz")})
    _add_stacked(node.root, "md1", "9:1", ["nvme1n1", "sdz"])
    table = parse_mountinfo(
        "7 1 9:0 / /a rw - ext4 /dev/md0 rw\n8 1 9:1 / /b rw - ext4 /dev/md1 rw\n"
    )
    a = classify_path("/a", table, node.reader())
    assert a.kind == "nvme-local" and a.block_devices == ("nvme0n1",)
    assert a.via == ("md0", "nvme0n1p2")
    b = classify_path("/b", table, node.reader())
    assert b.kind == "nvme-of" and any("non-NVMe" in p for p in b.problems)


def test_block_other_unresolvable_and_slave_loops(tmp_path):
    node = healthy_910b_node(tmp_path)
    write_tree(
        node.root,
        {
            **attrs("/sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/block/sda", dev="8:0"),
            "/sys/dev/block/8:0": Link(
                "../../devices/pci0000:00/0000:00:1f.2/ata1/host0/block/sda"
            ),
        },
    )
    _add_stacked(node.root, "dm-1", "253:1", ["dm-2"])
    _add_stacked(node.root, "dm-2", "253:2", ["dm-1"])
    table = parse_mountinfo(
        "7 1 8:0 / /sata rw - ext4 /dev/sda rw\n"
        "8 1 253:1 / /loop rw - ext4 /dev/dm-1 rw\n"
        "9 1 7:9 / /gone rw - ext4 /dev/loop9 rw\n"
    )
    reader = node.reader()
    sata = classify_path("/sata", table, reader)
    assert sata.kind == "block-other" and sata.block_devices == ("sda",)
    loop = classify_path("/loop", table, reader)
    assert loop.kind == "block-other" and loop.problems
    gone = classify_path("/gone", table, reader)
    assert gone.kind == "other" and any("does not resolve" in p for p in gone.problems)


def test_classify_with_hostile_reader_never_raises(tmp_path):
    node = healthy_910b_node(tmp_path)

    class Exploding:
        def __getattr__(self, name):
            def boom(*_a, **_k):
                raise OSError(f"{name} exploded")

            return boom

    loc = classify_path("/models", _node_table(node), Exploding())
    assert loc.kind in ("other", "unknown") and loc.mount_point in ("/models", None)
    bad_mounts = [Mount("/m", "xfs", "/dev/x", ())]
    assert classify_path("/m", bad_mounts, Exploding()).kind == "other"
    assert classify_path(None, [object()], None).kind == "unknown"  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# nvme-cli JSON


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^=== (S\d)\.", text, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_nvme_cli_reference_samples():
    sections = _sections(_ref("nvme-cli_json_real_samples.txt"))
    s1 = parse_nvme_list_json(sections["S1"].replace("**", ""))
    (d,) = s1.devices
    assert d.device_path == "/dev/nvme0n1" and d.model == "WUS6AA138FSP5EA"
    assert d.used_bytes == 3840755982336 and d.sector_size == 512 and s1.problems == ()

    s3 = parse_nvme_list_json(sections["S3"])
    assert s3.devices[0].model == "INTEL SSDPE2KX080T8"
    assert any("negative" in p for p in s3.problems)

    s2 = parse_nvme_list_json(sections["S2"].replace("**", ""))  # truncated by the poster
    assert s2.devices == () and s2.problems

    s5 = parse_nvme_list_json(sections["S5"])
    assert [s.name for s in s5.subsystems] == ["nvme-subsys0", "nvme-subsys1"]
    assert s5.subsystems[0].nqn == "nqn.2016-06.io.spdk:cnode1"
    tcp = s5.subsystems[0].paths[0]
    assert (tcp.transport, tcp.traddr, tcp.trsvcid) == ("tcp", "10.0.2.15", "4420")
    assert [p.name for p in s5.subsystems[1].paths] == ["nvme1", "nvme2"]

    s6 = parse_nvme_list_json(sections["S6"].split("-o json", 1)[1])
    assert [len(s.paths) for s in s6.subsystems] == [2, 2]
    assert s6.subsystems[1].nqn == "nvmf-test2" and s6.subsystems[0].paths[1].name == "nvme1"
    assert s6.subsystems[0].paths[0].address.endswith("host_traddr=1.1.1.1")

    s4 = parse_nvme_list_json(sections["S4"])  # cut after the first subsystem: not JSON
    assert s4.subsystems == () and s4.problems


def test_nvme_cli_2x_nested_shape_with_states():
    doc = [
        {
            "HostNQN": "nqn.2014-08.org.nvmexpress:uuid:1234",
            "HostID": "1234",
            "Subsystems": [
                {
                    "Name": "nvme-subsys1",
                    "NQN": "nqn.2014-08.org.example:weights",
                    "IOPolicy": "numa",
                    "Paths": [
                        {
                            "Name": "nvme1",
                            "Transport": "rdma",
                            "Address": "traddr=192.168.10.20,trsvcid=4420",
                            "State": "live",
                            "ANAState": "optimized",
                        },
                        {
                            "Name": "nvme2",
                            "Transport": "rdma",
                            "Address": "traddr=192.168.11.20,trsvcid=4420",
                            "State": "connecting",
                        },
                    ],
                }
            ],
        }
    ]
    out = parse_nvme_list_json(json.dumps(doc))
    assert out.host_nqn == "nqn.2014-08.org.nvmexpress:uuid:1234"
    (sub,) = out.subsystems
    assert sub.iopolicy == "numa"
    assert [(p.name, p.state, p.ana_state) for p in sub.paths] == [
        ("nvme1", "live", "optimized"),
        ("nvme2", "connecting", None),
    ]
    json.dumps(out.to_dict())


@pytest.mark.parametrize(
    "text",
    ["", "   ", "null", "[1, 2, 3]", '{"Devices": "nope"}', "{{{", "[" * 100_000, '"str"'],
)
def test_nvme_cli_hostile_input(text):
    out = parse_nvme_list_json(text)
    assert out.devices == () and out.subsystems == () and out.problems
