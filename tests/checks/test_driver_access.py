"""DRV-DEV-001 (device access): the pure ownership rule, and each way the check FAILs end to end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ascend_audit.checks.driver.access import can_open
from shared_fixtures import DATA
from standins import run_node, standin
from sysroot import healthy_910b_node

from ascend_audit.facts.sysfs import DevNode
from ascend_audit.facts.users import service_user as parse_user_db
from ascend_audit.model import Status

CHECK = "DRV-DEV-001"
TABLE = (DATA / "driver" / "npu_smi_info_910b3_8npu.txt").read_text()


def node(
    mode: str | None = "0660",
    owner: str = "HwHiAiUser",
    group: str = "HwHiAiUser",
    uid=1000,
    gid=1000,
):
    return DevNode("/dev/davinci0", True, owner, group, uid, gid, mode, True)


@pytest.mark.parametrize(
    ("dev", "user", "groups", "expected"),
    [
        (node("0000", "root", "root", 0, 0), "root", (), True),
        (node("0600"), "HwHiAiUser", (), True),
        (node("0400"), "HwHiAiUser", ("HwHiAiUser",), False),  # owner bits decide, read-only
        (node("0060"), "HwHiAiUser", ("HwHiAiUser",), False),  # owner match ignores group bits
        (node("0660"), "svc", ("HwHiAiUser",), True),
        (node("0640"), "svc", ("HwHiAiUser",), False),
        (node("0660"), "svc", ("users",), False),
        (node("0666"), "svc", (), True),
        (node("0604"), "svc", (), False),
        (node(None), "svc", (), None),
    ],
)
def test_can_open(dev, user, groups, expected):
    assert can_open(dev, user, groups) is expected


def test_can_open_by_ids_and_stat_mode_with_type_bits():
    from ascend_audit.host.base import StatInfo

    st = StatInfo(0o20660, 1000, 1001, "1000", "1001", "char")
    assert can_open(st, "svc", (), uid=1000) is True
    assert can_open(st, "svc", (), uid=2000, gids=(1001,)) is True
    assert can_open(st, "svc", (), uid=2000, gids=(5,)) is False
    assert can_open(st, "svc", (), uid=0) is True


def test_parse_user_db():
    passwd = "root:x:0:0:root:/root:/bin/bash\nsvc:x:1200:1200::/home/svc:/bin/sh\n"
    group = "root:x:0:\nsvc:x:1200:\nHwHiAiUser:x:1000:alice,svc\nvideo:x:44:alice\n"
    u = parse_user_db(passwd, group, "svc")
    assert u is not None and u.uid == 1200
    assert u.groups == {"svc", "HwHiAiUser"} and u.gids == {1200, 1000}
    assert parse_user_db(passwd, group, "nobody-here") is None
    assert parse_user_db("svc:x:oops\n", group, "svc") is None


def judge(tmp_path: Path, policy: str = "", *, missing_chip=False, prepare=None, table=TABLE):
    built = healthy_910b_node(tmp_path / "root", missing_chip=missing_chip)
    if prepare:
        prepare(built.root)
    outs = {"info": table, "*": "Health Status                  : OK\n"}
    standin(tmp_path / "bin", "npu-smi", outs)
    return run_node(built.root, tmp_path / "bin", policy, only=[CHECK]).result(CHECK)


def test_current_user_can_open_everything(tmp_path):
    r = judge(tmp_path)
    assert r.status is Status.PASS, r.summary
    assert "8 davinci nodes and the 3 manager nodes" in r.summary
    assert "-8005" not in r.summary


@pytest.mark.parametrize("name", ["davinci_manager", "devmm_svm", "hisi_hdc"])
def test_missing_manager_node_fails(tmp_path, name):
    r = judge(tmp_path, prepare=lambda root: (root / "dev" / name).unlink())
    assert r.status is Status.FAIL
    assert f"missing /dev/{name}" in r.summary


def test_no_davinci_node_fails(tmp_path):
    def drop(root: Path) -> None:
        for p in (root / "dev").glob("davinci[0-9]*"):
            p.unlink()

    r = judge(tmp_path, prepare=drop)
    assert r.status is Status.FAIL
    assert "no /dev/davinciN device node" in r.summary


def test_user_outside_owner_and_group_fails_naming_node_owner_group_mode(tmp_path):
    r = judge(tmp_path, '[driver]\nservice_user = "nobody"\n')
    assert r.status is Status.FAIL
    assert "user nobody" in r.summary and "cannot open /dev/davinci0" in r.summary
    assert "mode 0660" in r.summary and "owner " in r.summary and "group " in r.summary
    assert "/dev/hisi_hdc" in r.summary


def _user_db(root: Path, extra_group_member: bool) -> None:
    gid, uid = os.getgid(), os.getuid()
    members = "svc" if extra_group_member else ""
    (root / "etc" / "passwd").write_text(f"svc:x:{uid + 4242}:{gid + 4242}::/home/svc:/bin/sh\n")
    (root / "etc" / "group").write_text(f"svc:x:{gid + 4242}:\ndevgrp:x:{gid}:{members}\n")


def test_group_membership_from_the_nodes_user_database_grants_access(tmp_path):
    r = judge(
        tmp_path, '[driver]\nservice_user = "svc"\n', prepare=lambda root: _user_db(root, True)
    )
    assert r.status is Status.PASS, r.summary
    assert "open to svc" in r.summary


def test_group_without_rw_bits_fails(tmp_path):
    def prepare(root: Path) -> None:
        _user_db(root, True)
        os.chmod(root / "dev" / "devmm_svm", 0o640)

    r = judge(tmp_path, '[driver]\nservice_user = "svc"\n', prepare=prepare)
    assert r.status is Status.FAIL
    assert "cannot open /dev/devmm_svm" in r.summary and "mode 0640" in r.summary
    assert "davinci0" not in r.summary


def test_fewer_davinci_nodes_than_chips_fails_and_explains_container_binding(tmp_path):
    r = judge(tmp_path, missing_chip=True)
    assert r.status is Status.FAIL
    assert "only 7 /dev/davinci nodes for the 8 chips" in r.summary
    assert "dcmi module initialize failed. ret is -8005" in r.summary


@pytest.mark.parametrize(
    "marker",
    [
        ("/.dockerenv", ""),
        ("/proc/1/cgroup", "0::/kubepods/besteffort/pod1234/cri-containerd-ab\n"),
    ],
    ids=["dockerenv", "kubepods"],
)
def test_container_is_explained(tmp_path, marker):
    def prepare(root: Path) -> None:
        p = root / marker[0].lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(marker[1])

    r = judge(tmp_path, prepare=prepare)
    assert r.status is Status.PASS
    assert "bound to the first container that opens it" in r.summary
    assert r.metrics["container"] is True


def test_without_npu_smi_table_nodes_are_still_judged(tmp_path):
    r = judge(tmp_path, '[driver]\nservice_user = "nobody"\n', table="\x00garbage\xff")
    assert r.status is Status.FAIL
    assert "cannot open" in r.summary and "chips" not in r.summary


def test_node_without_any_npu_skips_to_the_enumeration_check(tmp_path):
    from standins import run_node

    (tmp_path / "root").mkdir()
    (tmp_path / "bin").mkdir()
    report = run_node(tmp_path / "root", tmp_path / "bin", only=["DRV-DEV-001", "DRV-NPU-001"])
    assert report.result("DRV-DEV-001").status.value == "SKIP"
    assert "DRV-NPU-001" in report.result("DRV-DEV-001").summary
    assert report.result("DRV-NPU-001").status.value == "FAIL"
