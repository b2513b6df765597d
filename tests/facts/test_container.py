"""Container detection, the device cgroup allow-list, and the visible-device mask grammar."""

from __future__ import annotations

import pytest

from ascend_audit.facts.container import (
    DeviceGrant,
    detect_container,
    parse_devices_list,
    parse_mask,
    sched_pid,
)


def test_docker_marker_and_cgroup():
    info = detect_container(True, False, "0::/docker/4f1c0e5a33a8\n", "bash (4242, #threads: 1)")
    assert info.in_container and info.runtime == "docker"
    assert "/proc/1/sched: PID 1 (bash) is host pid 4242" in info.markers
    assert info.to_identity()["container"] == "docker"


def test_kubernetes_cgroup_wins_over_containerd():
    cg = "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-abc.scope\n"
    assert detect_container(False, False, cg, None).runtime == "kubernetes"


def test_podman_marker():
    assert detect_container(False, True, "0::/\n", None).runtime == "podman"


def test_host_and_unknown():
    host = detect_container(False, False, "0::/init.scope\n", "systemd (1, #threads: 1)\n")
    assert host.in_container is False and host.to_identity() == {"container": "no (host)"}
    assert detect_container(False, False, None, None).in_container is None


@pytest.mark.parametrize("text", ["", "garbage", "\x00" * 100, "systemd (x, #threads: 1)"])
def test_sched_hostile(text):
    assert sched_pid(text) is None


def test_devices_list():
    text = "c 236:3 rwm\nc 236:5 rw\nc 237:0 rwm\nb 8:* rwm\nnonsense\n"
    assert parse_devices_list(text, 236) == (False, (3, 5))
    assert parse_devices_list("a *:* rwm\n", 236) == (True, ())
    assert parse_devices_list(text, None) == (False, ())


def test_grant_intersects_dev_and_cgroup():
    grant = DeviceGrant(True, (0, 1, 2, 3), (1, 3))
    assert grant.given == (1, 3)
    assert DeviceGrant(False, (0, 1)).given == (0, 1)


@pytest.mark.parametrize(
    ("raw", "ranges", "ids", "ascending", "dupes", "problems"),
    [
        ("0,1,2,3", False, (0, 1, 2, 3), True, (), 0),
        ("0,1,2,5", False, (0, 1, 2, 5), True, (), 0),
        ("3,2,1,0", False, (3, 2, 1, 0), False, (), 0),
        ("0,0,1", False, (0, 0, 1), False, (0,), 0),
        ("0-3", True, (0, 1, 2, 3), True, (), 0),
        ("0-3", False, (), True, (), 1),
        ("a,1", False, (1,), True, (), 1),
        ("", False, (), True, (), 1),
        ("4-0", True, (), True, (), 1),
    ],
)
def test_mask_grammar(raw, ranges, ids, ascending, dupes, problems):
    m = parse_mask("ASCEND_RT_VISIBLE_DEVICES", raw, "policy", ranges)
    assert m.ids == ids and m.ascending is ascending and m.duplicates == dupes
    assert len(m.problems) == problems


def test_huge_mask_is_capped():
    m = parse_mask("ASCEND_VISIBLE_DEVICES", "0-99999," * 3, "env", ranges=True)
    assert len(m.ids) <= 4097 and m.problems
