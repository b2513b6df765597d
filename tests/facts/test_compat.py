"""Tests for the packaged compatibility tables and the answers built on them."""

from __future__ import annotations

import csv
import json

import pytest
from shared_fixtures import REFERENCE

from ascend_audit.facts.compat import (
    base_version,
    check_cann_hdk,
    check_mindie,
    check_torch_npu_cann,
    check_torch_torch_npu,
    check_vllm_ascend,
    load_table,
    table_version,
    version_tokens,
)

TABLES = {
    "torch_npu": "torch_npu_matrix.csv",
    "vllm_ascend_release": "vllm_ascend_release_matrix.csv",
    "vllm_ascend_tag_pins": "vllm_ascend_tag_pins.csv",
    "cann_hdk": "cann_hdk_matrix.csv",
    "mindie": "mindie_matrix.csv",
}


def test_table_version() -> None:
    assert table_version() == "2026-08-22"


@pytest.mark.parametrize(("table", "ref"), TABLES.items())
def test_every_row_has_a_source_and_matches_the_reference(table: str, ref: str) -> None:
    rows = load_table(table)
    assert rows and all(r.source for r in rows)
    path = REFERENCE / "compat" / ref
    if not path.is_file():
        pytest.skip("reference tables are not beside this checkout")
    with path.open(newline="", encoding="utf-8") as fh:
        ref_rows = list(csv.DictReader(fh))
    ours = [r for r in rows if r.get("origin") == "project"]  # data/compat_project.toml
    assert len(rows) == len(ref_rows) + len(ours)
    assert all(r.get("origin", "reference") == "reference" for r in rows[: len(ref_rows)])
    for mine, theirs in zip(rows, ref_rows):
        for k, v in theirs.items():
            assert mine.get(k) == v.strip()


def test_versions() -> None:
    assert version_tokens("2.9.0.post2") == (2, 9, 0, "post", 2)
    assert version_tokens("v8.3.RC1") == (8, 3, "rc", 1)
    assert version_tokens("9.0.0-beta.2") == version_tokens("9.0.0.beta2")
    assert version_tokens("2.9.0.post1+git4c901a4") == (2, 9, 0, "post", 1)
    assert base_version("2.5.1.post1.dev20250619") == (2, 5, 1)
    assert version_tokens(None) == ()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("torch", "npu", "verdict"),
    [
        ("2.13.0", "2.13.0", "ok"),
        ("2.9.0+cpu", "2.9.0.post2", "ok"),
        ("2.12.0", "2.8.0.post2", "bad"),
        ("2.5.1+cu121", "2.5.1", "bad"),
        ("2.8.0", "1.5.0.post3", "bad"),  # that torch_npu was built for torch 1.8.1
        ("", "2.9.0", "unknown"),
        ("garbage", "2.9.0", "unknown"),
    ],
)
def test_torch_torch_npu(torch: str, npu: str, verdict: str) -> None:
    a = check_torch_torch_npu(torch, npu)
    assert a.verdict == verdict, a.reason
    assert a.table_version == table_version()


def test_torch_npu_cann() -> None:
    a = check_torch_npu_cann("2.9.0.post2", "9.0.0")
    assert a.verdict == "ok" and a.rows[0].get("gitcode_branch") == "v2.9.0-26.0.0"
    assert a.sources == ("Ascend/pytorch COMPATIBILITY.en.md @9e73e708 (2026-08-21)",)
    a = check_torch_npu_cann("2.9.0.post1", "9.0.0")
    assert a.verdict == "bad" and "8.5.1" in a.reason
    assert check_torch_npu_cann("2.9.0", "8.5.1").verdict == "ok"  # a vllm-ascend release pairing
    assert check_torch_npu_cann("2.8.0.post2", "8.5.2").verdict == "unknown"
    a = check_torch_npu_cann("2.13.0", "9.1.0")
    assert a.verdict == "unknown" and "not in the table of version 2026-08-22" in a.reason
    assert check_torch_npu_cann("2.3.1", "8.0.rc2").verdict == "ok"
    assert check_torch_npu_cann(None, "8.0.0").verdict == "unknown"


def test_vllm_ascend_release() -> None:
    a = check_vllm_ascend(
        "v0.11.0", vllm="0.11.0", cann="8.3.RC2", torch="2.7.1+cpu", torch_npu="2.7.1.post1",
        python="3.11.7",
    )  # fmt: skip
    assert a.verdict == "ok"
    assert a.rows[0].table == "vllm_ascend_release"
    a = check_vllm_ascend("0.11.0", vllm="0.10.2", cann="8.2.RC1", torch="2.8.0", python="3.12.1")
    assert a.verdict == "bad"
    for part in ("vllm 0.10.2", "cann 8.2.RC1", "torch 2.8.0", "python 3.12.1"):
        assert part in a.reason
    assert check_vllm_ascend("0.18.0", torch_npu="2.9.0.post1+git4c901a4").verdict == "ok"
    assert check_vllm_ascend("0.10.1rc1", vllm="0.10.1.1").verdict == "ok"
    assert check_vllm_ascend("0.10.1rc1", vllm="0.10.1+empty").verdict == "ok"
    assert check_vllm_ascend("0.13.0rc3", cann="8.5.1").verdict == "ok"
    assert check_vllm_ascend("0.19.1rc1", cann="8.5.0").verdict == "unknown"  # patch differs
    assert check_vllm_ascend("0.99.0").verdict == "unknown"
    assert check_vllm_ascend("0.11.0").verdict == "unknown"


def test_mindie() -> None:
    a = check_mindie("2.1.RC1", cann="8.2.RC1", torch_npu="2.1.0.post13", hdk="24.1.RC3")
    assert a.verdict == "ok"
    assert check_mindie("3.0.0", cann="8.5.1", torch_npu="2.9.0").verdict == "ok"
    assert check_mindie("3.0.0", torch_npu="2.1.0.post17").verdict == "ok"
    a = check_mindie("3.0.0", torch_npu="2.8.0")
    assert a.verdict == "bad" and "torch_npu 2.8.0" in a.reason
    assert check_mindie("2.1.RC1", cann="8.3.RC1").verdict == "bad"
    assert check_mindie("2.1.RC1", hdk="23.0.0").verdict == "bad"
    assert check_mindie("9.9.9", cann="8.5.0").verdict == "unknown"


def test_product_minimum_applies_only_where_the_product_is_in_use() -> None:
    a = check_cann_hdk("7.0.0", "23.0.rc3", products=("MindSDK",))
    assert a.verdict == "bad" and "minimum" in a.reason
    assert a.rows[0].get("scope") == "minimum" and a.rows[0].get("product") == "MindSDK"
    assert check_cann_hdk("7.0.0", "23.0.rc3").verdict == "unknown"


def test_builds_and_patches_match_their_release_rows() -> None:
    assert check_cann_hdk("8.2.RC1", "24.1.RC3.b030").verdict == "ok"
    assert check_cann_hdk("8.2.RC1", "24.1.rc3.2").verdict == "ok"


def test_every_hdk_row_has_a_scope_and_a_source() -> None:
    from ascend_audit.facts.compat import load_table

    for row in load_table("cann_hdk"):
        assert row.get("scope") in ("pairing", "minimum", "known-bad") and row.source


@pytest.mark.parametrize(
    ("cann", "hdk", "verdict"),
    [
        ("9.1.0", "25.0.RC1", "bad"),
        ("9.1.0", "25.2.3", "ok"),
        ("9.2.0", "25.2.0", "bad"),
        ("9.2.0", "26.0.RC1", "ok"),
        ("9.2.0", "25.7.RC1", "ok"),
        ("9.0.0-beta.2", "25.5.1", "ok"),
        ("8.2.RC1", "24.1.RC3", "ok"),
        ("7.0.0", "23.0.rc3", "unknown"),  # below MindSDK's minimum only: no MindSDK here
        ("8.3.RC1", "24.1.0", "unknown"),
        ("8.3.RC1", "", "unknown"),
    ],
)
def test_cann_hdk(cann: str, hdk: str, verdict: str) -> None:
    a = check_cann_hdk(cann, hdk)
    assert a.verdict == verdict, a.reason
    if verdict != "unknown":
        assert a.rows and a.sources
    json.dumps(a.to_dict())
