"""Tests for rank table parsing (v1.0, v1.2 super pod, legacy group_list, P/D) and validation."""

from __future__ import annotations

import json
import random

import pytest
from shared_fixtures import fixture_files, read_fixture

from ascend_audit.facts.rank_table import (
    RankTable,
    devices_of_server,
    parse_rank_table,
    problems_of,
    strip_json_comments,
)

H = "hccn/"
V10_4 = "rank_table_v1.0_4server_32rank_910B3_itove-ascend.json"
V10_2 = "rank_table_v1.0_2server_16rank_910B3_itove-ascend.json"
V10_DOC = "rank_table_v1.0_4server_32rank_commented_deepseekv3-multinode-doc.partial.jsonc"
V10_A2 = "rank_table_v1.0_A2_2server_device_port_hccl-doc.partial.jsonc"
V12_A3 = "rank_table_v1.2_A3_superpod_2pods_4server_hccl-doc.partial.jsonc"
PD = "rank_table_v1.2_vllm-ascend_pd_prefill_decode_device_list_1P1D_vllm-ascend-2498.json"
LEGACY = "rank_table_template2_group_list_legacy_910_hccl-doc.partial.jsonc"
HCCL_JSON = "hccl_json_A3_v1.2_super_device_id_ascend-operator_mind-cluster-doc.partial.jsonc"


def _table(name: str) -> RankTable:
    return parse_rank_table(read_fixture(H + name))


def _v10(servers: list[list[tuple[str, str, str]]], **top) -> str:
    doc = {
        "version": "1.0",
        "server_count": str(len(servers)),
        "status": "completed",
        "server_list": [
            {
                "server_id": f"10.0.0.{i + 1}",
                "device": [{"device_id": d, "device_ip": ip, "rank_id": r} for d, ip, r in devs],
            }
            for i, devs in enumerate(servers)
        ],
    }
    doc.update(top)
    return json.dumps(doc)


# --------------------------------------------------------------------------------------------
# real tables


def test_v10_four_servers_real_table():
    t = _table(V10_4)
    assert (t.layout, t.version, t.status, t.server_count) == (
        "server_list",
        "1.0",
        "completed",
        "4",
    )
    assert [s.server_id for s in t.servers] == [
        "172.20.84.67",
        "172.20.84.77",
        "172.20.84.189",
        "172.20.84.50",
    ]
    assert t.size == 32 and [d.rank for d in t.devices] == list(range(32))
    assert len({d.device_ip for d in t.devices}) == 32
    assert t.servers[0].container_ip == "172.20.84.67"
    assert {d.device_ip.rsplit(".", 1)[0] for d in t.servers[0].devices} == {"172.20.61"}
    assert {d.device_ip.rsplit(".", 1)[0] for s in t.servers[1:] for d in s.devices} == {
        "172.20.60"
    }
    assert not t.had_comments and t.problems == ()
    assert problems_of(t) == []


def test_v10_two_servers_real_table():
    t = _table(V10_2)
    assert t.server_count == "2" and t.size == 16 and problems_of(t) == []
    devs = devices_of_server(t, "172.20.84.77")
    assert next((d.device_id, d.device_ip, d.rank_id) for d in devs) == ("0", "172.20.60.25", "8")


def test_v10_hash_commented_doc_table():
    t = _table(V10_DOC)
    assert t.had_comments and t.layout == "server_list" and t.size == 32
    assert [s.server_id for s in t.servers][-1] == "172.30.210.94"
    assert [d.device_ip for d in devices_of_server(t, "172.30.210.94")] == [
        f"192.0.2.{80 + i}" for i in range(8)
    ]
    assert problems_of(t) == []


def test_v10_a2_slash_commented_with_device_port():
    t = _table(V10_A2)
    assert t.had_comments and [s.server_id for s in t.servers] == ["node_0", "node_1"]
    assert [(d.device_id, d.device_ip, d.device_port, d.rank_id) for d in t.devices] == [
        ("0", "192.168.1.8", "16667", "0"),
        ("1", "192.168.1.9", "16667", "1"),
        ("0", "192.168.2.8", "16667", "2"),
        ("1", "192.168.2.9", "16667", "3"),
    ]
    assert problems_of(t) == []


def test_v12_a3_super_pods():
    t = _table(V12_A3)
    assert (t.version, t.server_count, t.size) == ("1.2", "4", 16)
    assert [(p.super_pod_id, p.server_ids) for p in t.super_pods] == [
        ("0", ("node_0", "node_1")),
        ("1", ("node_2", "node_3")),
    ]
    assert [s.super_pod_id for s in t.servers] == ["0", "0", "1", "1"]
    assert [s.host_ip for s in t.servers] == [f"172.16.0.{100 + i}" for i in range(4)]
    d = t.servers[2].devices[1]
    assert (d.super_device_id, d.backup_device_ip, d.host_port, d.rank_id) == (
        "1",
        "192.168.3.6",
        "16666",
        "9",
    )
    # super_device_id repeats across the two pods but is unique inside each: no finding
    assert problems_of(t) == []


def test_pd_prefill_decode_lists():
    t = _table(PD)
    assert (t.layout, t.version, t.server_count) == ("pd", "1.2", "2")
    assert [(d.role, d.server_id, d.device_id, d.device_ip, d.cluster_id) for d in t.devices] == [
        ("prefill", "172.17.0.6", "0", "192.0.2.100", "1"),
        ("decode", "172.17.0.7", "1", "192.0.2.101", "2"),
    ]
    assert problems_of(t) == []


def test_legacy_group_list():
    t = _table(LEGACY)
    assert (t.layout, t.version, t.group_count) == ("group_list", None, "1")
    assert t.groups == (("hccl_world_group", "2", "2"),)
    assert [(s.server_id, s.pod_name, s.group_name) for s in t.servers] == [
        ("node_0", "tf-bae41", "hccl_world_group"),
        ("node_1", "tf-tbdf1", "hccl_world_group"),
    ]
    assert [(d.device_id, d.device_ip, d.rank_id) for d in t.devices] == [
        ("0", "192.168.1.8", None),
        ("1", "192.168.1.9", None),
    ]
    assert problems_of(t) == []


def test_mindcluster_hccl_json_doc_example_with_caption_and_elision():
    t = _table(HCCL_JSON)
    assert (t.layout, t.version, t.status, t.server_count) == (
        "server_list",
        "1.2",
        "completed",
        "1",
    )
    (s,) = t.servers
    assert (s.server_id, s.host_ip, s.container_ip, s.hardware_type) == (
        "xx-xx-xx-xx",
        "xx.xx.xx.xx",
        "192.168.149.xx",
        "800I-A3-64G",
    )
    assert [(d.device_id, d.super_device_id, d.rank_id) for d in s.devices] == [
        ("0", "37748736", "0"),
        ("7", "38600711", "7"),
    ]
    found = problems_of(t)
    assert found[0].startswith("text before the JSON object ignored")
    assert "rank_id values are not exactly 0..1: missing 1; out of range 7" in found
    assert sum("is not a valid IP address" in f for f in found) == 2


def test_every_rank_table_fixture_parses():
    files = [p for p in fixture_files("hccn") if p.name.startswith(("rank_table", "hccl_json"))]
    if not files:
        pytest.skip("../shared/fixtures/hccn is not beside this checkout")
    assert len(files) == 8
    for p in files:
        t = parse_rank_table(p.read_text(encoding="utf-8", errors="replace"))
        assert t.layout in ("server_list", "group_list", "pd"), p.name
        assert t.size >= 2, p.name
        json.dumps(t.to_dict())


# --------------------------------------------------------------------------------------------
# validation findings


def test_status_initializing_and_missing_fields():
    t = parse_rank_table(_v10([[("0", "10.1.0.1", "0")]], status="initializing"))
    assert any("initializing" in f for f in problems_of(t))
    doc = json.loads(_v10([[("0", "10.1.0.1", "0")]]))
    del doc["status"], doc["version"], doc["server_count"]
    found = problems_of(parse_rank_table(json.dumps(doc)))
    assert any("status is missing" in f for f in found)
    assert any("version is missing" in f for f in found)
    assert any("server_count is missing" in f for f in found)


def test_server_count_mismatch():
    t = parse_rank_table(_v10([[("0", "10.1.0.1", "0")]], server_count="2"))
    assert "server_count is 2 but the table lists 1 server(s)" in problems_of(t)


def test_rank_ids_duplicate_gap_interleaved():
    t = parse_rank_table(
        _v10(
            [
                [
                    ("0", "10.1.0.1", "0"),
                    ("1", "10.1.0.2", "1"),
                    ("2", "10.1.0.3", "2"),
                    ("3", "10.1.0.4", "7"),
                ],
                [
                    ("0", "10.2.0.1", "3"),
                    ("1", "10.2.0.2", "4"),
                    ("2", "10.2.0.3", "5"),
                    ("3", "10.2.0.4", "6"),
                ],
            ]
        )
    )
    found = problems_of(t)
    assert any("server 10.0.0.1: rank_ids 0-2, 7 are not contiguous" in f for f in found)
    assert not any("10.0.0.2: rank_ids" in f for f in found)
    dup = parse_rank_table(_v10([[("0", "10.1.0.1", "0"), ("1", "10.1.0.2", "0")]]))
    found = problems_of(dup)
    assert any("rank_id 0 appears 2 times" in f for f in found)
    assert any("missing 1" in f for f in found)
    bad = parse_rank_table(_v10([[("0", "10.1.0.1", "x"), ("1", "10.1.0.2", "-1")]]))
    assert sum("not a non-negative integer" in f for f in problems_of(bad)) == 2


def test_device_ip_duplicate_invalid_missing_and_family_mix():
    t = parse_rank_table(
        _v10(
            [
                [("0", "10.1.0.1", "0"), ("1", "10.1.0.1", "1")],
                [("0", "fe80::1", "2"), ("1", "", "3")],
            ]
        )
    )
    found = problems_of(t)
    assert any("device_ip 10.1.0.1 used by 2 devices" in f for f in found)
    assert any("mix IPv4 and IPv6" in f for f in found)
    assert any("device_ip missing" in f for f in found)
    assert any("device_id" not in f or "device 1" in f for f in found)


def test_device_id_duplicate_and_out_of_range():
    t = parse_rank_table(
        _v10([[("0", "10.1.0.1", "0"), ("0", "10.1.0.2", "1"), ("16", "10.1.0.3", "2")]])
    )
    found = problems_of(t)
    assert any("device_id 0 appears more than once" in f for f in found)
    assert any("device_id 16 is beyond 0-15" in f for f in found)


def test_a3_missing_super_device_id_and_duplicate_in_pod():
    doc = json.loads(_strip(V12_A3))
    doc["server_list"][0]["device"][0].pop("super_device_id")
    doc["server_list"][1]["device"][0]["super_device_id"] = "1"
    found = problems_of(parse_rank_table(json.dumps(doc)))
    assert any("super_device_id missing" in f for f in found)
    assert any("super pod 0: super_device_id 1 used by 2 devices" in f for f in found)


def test_super_pod_membership_problems():
    doc = json.loads(_strip(V12_A3))
    doc["super_pod_list"][0]["server_list"].append({"server_id": "ghost"})
    doc["super_pod_list"][1]["server_list"] = [{"server_id": "node_2"}]
    doc["server_list"][1], doc["server_list"][2] = doc["server_list"][2], doc["server_list"][1]
    found = problems_of(parse_rank_table(json.dumps(doc)))
    assert any("unknown server_id 'ghost'" in f for f in found)
    assert any("server node_3 is in no super pod" in f for f in found)
    assert any("not listed contiguously" in f for f in found)


def test_legacy_counts_mismatch():
    doc = json.loads(_strip(LEGACY))
    doc["group_list"][0]["device_count"] = "3"
    doc["group_count"] = "2"
    found = problems_of(parse_rank_table(json.dumps(doc)))
    assert any("device_count '3' but 2 device(s)" in f for f in found)
    assert any("group_count is '2'" in f for f in found)


def test_pd_duplicate_cluster_id():
    doc = json.loads(read_fixture(H + PD))
    doc["decode_device_list"][0]["cluster_id"] = "1"
    assert any(
        "cluster_id 1 appears 2 times" in f for f in problems_of(parse_rank_table(json.dumps(doc)))
    )


def test_devices_of_server_by_host_or_container_ip():
    t = _table(V12_A3)
    assert len(devices_of_server(t, "172.16.0.101")) == 4
    assert devices_of_server(t, "node_3")[0].rank_id == "12"
    assert devices_of_server(t, "nope") == () and devices_of_server(t, "") == ()


# --------------------------------------------------------------------------------------------
# comment stripping


def _strip(name: str) -> str:
    return strip_json_comments(read_fixture(H + name))[0]


def test_strip_keeps_comment_markers_inside_strings():
    text = '{"a": "http://x#y", // c\n "b": "say \\"//\\" ok", /* x */ "c": [1, 2,],}'
    cleaned, had = strip_json_comments(text)
    assert had
    assert json.loads(cleaned) == {"a": "http://x#y", "b": 'say "//" ok', "c": [1, 2]}


def test_strip_removes_elision_lines_but_not_dots_in_values():
    text = '{\n "a": [\n  1,\n  ...\n  2\n ],\n "v": "1.2"\n}'
    assert json.loads(strip_json_comments(text)[0]) == {"a": [1, 2], "v": "1.2"}


# --------------------------------------------------------------------------------------------
# hostile input


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        None,
        42,
        b"",
        b"\xff\xfe\x00garbage",
        "[]",
        "[1,2]",
        "null",
        '"x"',
        "{",
        "}{",
        '{"server_list": 5}',
        '{"server_list": [1, {"device": 3}]}',
        '{"group_list": [{"instance_list": ["x"]}]}',
        '{"prefill_device_list": [7]}',
        '{"rank_list": [{"rank_id": 0}], "version": "2.0"}',
        "[" * 100000,
        '{"a": 1}',
    ],
    ids=lambda v: repr(v)[:24],
)
def test_bad_inputs_never_raise(bad):
    t = parse_rank_table(bad)
    assert isinstance(t.problems, tuple)
    assert isinstance(problems_of(t), list)
    json.dumps(t.to_dict())


def test_truncated_at_random_points_and_binary_garbage():
    text = read_fixture(H + V12_A3)
    rng = random.Random(5)
    for cut in sorted({rng.randrange(len(text)) for _ in range(60)}):
        t = parse_rank_table(text[:cut])
        problems_of(t)
    blob = bytes(rng.randrange(256) for _ in range(50000))
    assert parse_rank_table(blob).layout == "invalid"
    latin = read_fixture(H + V10_4).encode().replace(b"172.20.84.67", b"172.20.84.\xe9")
    t = parse_rank_table(latin)
    assert t.size == 32 and "\ufffd" in t.servers[0].server_id
    assert problems_of(t) == []


def test_reordered_lines_never_raise():
    lines = read_fixture(H + V10_DOC).splitlines()
    rng = random.Random(9)
    for _ in range(10):
        rng.shuffle(lines)
        problems_of(parse_rank_table("\n".join(lines)))


def test_huge_table_is_fast():

    servers = [
        [(str(d), f"10.{s // 250}.{s % 250}.{d + 1}", str(s * 16 + d)) for d in range(16)]
        for s in range(3200)
    ]
    text = _v10(servers)
    t = parse_rank_table(text)
    found = problems_of(t)
    assert t.size == 51200 and found == []
    noisy = "{\n" + "// comment line\n" * 50000 + '"status": "completed", "server_list": []}'
    assert parse_rank_table(noisy).status == "completed"
