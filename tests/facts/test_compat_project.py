"""The compatibility rows the project adds itself (data/compat_project.toml): each cited, each
version in the Huawei grammar, none against a reference row, all of them in the packaged tables."""

from __future__ import annotations

import json

import pytest
from shared_fixtures import REFERENCE

from ascend_audit.data import build_compat as bc
from ascend_audit.facts.compat import check_cann_hdk, check_mindie, check_vllm_ascend, load_table

PROJECT = bc.load_project()
ROWS = [(table, n, row) for table, rows in PROJECT.items() for n, row in enumerate(rows, 1)]


def _reference(table: str) -> list[dict[str, str]]:
    """The packaged reference rows of TABLE (the project's own rows left out)."""
    return [
        {k: v for k, v in r.fields if k not in ("origin", "quote")}
        for r in load_table(table)
        if r.get("origin", "reference") == "reference"
    ]


def test_there_are_project_rows_in_three_tables() -> None:
    assert {t for t, _, _ in ROWS} == {"cann_hdk", "mindie", "vllm_ascend_release"}
    assert len(ROWS) == 12


@pytest.mark.parametrize(("table", "n", "row"), ROWS, ids=[f"{t}-{n}" for t, n, _ in ROWS])
def test_every_row_is_cited_and_readable(table: str, n: int, row: dict[str, str]) -> None:
    assert row["kind"] in bc.KINDS and row["product"]
    assert row["source"].startswith(("https://", "http://")) and len(row["quote"]) > 20
    for col in bc.HUAWEI_COLUMNS[table]:
        assert bc.huawei_version_problems(row.get(col, "")) == [], col


@pytest.mark.parametrize(("table", "n", "row"), ROWS, ids=[f"{t}-{n}" for t, n, _ in ROWS])
def test_no_row_contradicts_or_restates_a_reference_row(
    table: str, n: int, row: dict[str, str]
) -> None:
    assert bc.project_problems(table, row, _reference(table)) == []


def test_every_project_row_is_packaged_after_the_reference_rows() -> None:
    for table, rows in PROJECT.items():
        packaged = [r for r in load_table(table) if r.get("origin") == "project"]
        assert [(r.source, r.get("quote")) for r in packaged] == [
            (r["source"], r["quote"]) for r in rows
        ]
    meta = json.loads((bc.HERE / "compat_meta.json").read_text(encoding="utf-8"))
    assert meta["project"]["rows"] == len(ROWS)


def test_the_packaged_tables_are_what_the_build_writes(tmp_path) -> None:
    src = REFERENCE / "compat"
    if not src.is_dir():
        pytest.skip("reference tables are not beside this checkout")
    bc.build(src, tmp_path, "2026-08-22")
    for out in sorted(tmp_path.glob("*")):
        assert out.read_text(encoding="utf-8") == (bc.HERE / out.name).read_text(encoding="utf-8")


# --- the validator refuses what it must ------------------------------------------------------

_GOOD = {
    "kind": "pairing",
    "product": "MindCluster",
    "cann": "9.1.0",
    "hdk": "25.6.RC1",
    "source": "https://example.invalid/release-note.html",
    "quote": "| 26.1.0 | 9.1.0 | Atlas 850 系列硬件产品：25.6.RC1 |",
}


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"hdk": "25.0.RC1"}, "reference says N"),  # 9.1.X with 25.0.X is known-bad
        ({"kind": "known-bad", "hdk": "26.1.0"}, "reference says Y"),
        ({"cann": "9.1.X", "hdk": "25.X"}, "covers CANN 9.1.0 / HDK 25.0.0"),
        ({"hdk": "26.1.0"}, "already in the reference with the same verdict"),
        ({"hdk": "25.six.RC1"}, "is not a Huawei version"),
        ({"cann": "8.5.1-final"}, "is not a Huawei version"),
        ({"quote": ""}, "no quoted words"),
        ({"source": "the release notes"}, "source is not an address"),
        ({"kind": "compatible"}, "kind 'compatible'"),
        ({"product": ""}, "no product"),
        ({"hdk": ""}, "empty ['hdk']"),
        ({"colour": "blue"}, "unknown keys ['colour']"),
        ({"product": "MindSDK", "cann": "7.0.0", "hdk": "23.0.3"}, "below the minimum"),
    ],
)
def test_a_bad_cann_hdk_row_is_refused_naming_why(change: dict[str, str], words: str) -> None:
    ref = _reference("cann_hdk")
    assert bc.project_problems("cann_hdk", _GOOD, ref) == []
    problems = bc.project_problems("cann_hdk", {**_GOOD, **change}, ref)
    assert any(words in p for p in problems), problems


def test_a_release_the_reference_lists_cannot_be_restated_or_changed() -> None:
    row = {"kind": "pairing", "product": "MindIE", "source": _GOOD["source"], "quote": "x" * 30}
    mindie = bc.project_problems(
        "mindie", {**row, "mindie": "2.1.RC1", "cann": "8.3.RC1"}, _reference("mindie")
    )
    assert mindie and "already a reference row" in mindie[0]
    vllm = {**row, "vllm_ascend": "v0.23.0", "stable_cann": "9.1.0"}
    assert bc.project_problems("vllm_ascend_release", vllm, _reference("vllm_ascend_release"))


def test_a_malformed_project_file_stops_the_build(tmp_path) -> None:
    bad = tmp_path / "p.toml"
    bad.write_text('[[cann_driver]]\ncann = "9.1.0"\n', encoding="utf-8")
    with pytest.raises(SystemExit, match="not a table"):
        bc.load_project(bad)
    bad.write_text("[[cann_hdk]]\ncann = 9\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="must be a string"):
        bc.load_project(bad)
    src = REFERENCE / "compat"
    if not src.is_dir():
        pytest.skip("reference tables are not beside this checkout")
    bad.write_text(
        "[[cann_hdk]]\n"
        + "".join(f'{k} = "{v}"\n' for k, v in {**_GOOD, "hdk": "25.0.RC1"}.items()),
        encoding="utf-8",
    )
    with pytest.raises(SystemExit, match=r"row 1: .*reference says N"):
        bc.build(src, tmp_path, "2026-08-22", project=bad)


# --- what the rows change: pairs the tables did not know are judged by their row --------------


@pytest.mark.parametrize(
    ("cann", "hdk", "verdict"),
    [
        ("8.5.1", "25.2.0", "ok"),  # CANN 8.5.1 takes 8.5.0's HDKs (MindIE 3.0.0 release note)
        ("8.5.1", "25.5.1", "ok"),
        ("8.5.1", "24.1.0", "unknown"),  # not one of them: still not stated
        ("9.1.0", "25.6.RC1", "ok"),  # Atlas 850 (MindCluster 26.1.0)
        ("9.1.0", "25.1.RC1", "ok"),  # Atlas 950 SuperPoD
        ("9.1.0", "25.0.RC1", "bad"),  # the reference's known-bad row still wins
        ("8.0.0", "24.1.0.3", "ok"),  # a patch of 24.1.0 (MindSpore Transformers 1.3.2)
        ("8.0.RC3", "24.1.RC3", "ok"),
        ("8.0.0", "24.1.rc3", "unknown"),  # no release note pairs these
    ],
)
def test_project_cann_hdk_rows_answer(cann: str, hdk: str, verdict: str) -> None:
    a = check_cann_hdk(cann, hdk)
    assert a.verdict == verdict, a.reason
    if verdict == "ok":
        assert a.rows[0].get("origin") == "project" and a.rows[0].get("quote")


def test_project_mindie_and_vllm_ascend_rows_answer() -> None:
    assert check_mindie("2.2.RC1", cann="8.3.RC2").verdict == "ok"
    assert check_mindie("1.0.0", cann="8.0.RC3").verdict == "bad"  # 1.0.0 is made for 8.0.0
    assert check_mindie("1.0.RC2", cann="8.0.RC2").verdict == "ok"
    ok = check_vllm_ascend("v0.26.0rc1", cann="9.1.0", torch_npu="2.10.0.post4", python="3.11")
    assert ok.verdict == "ok", ok.reason
    assert check_vllm_ascend("v0.26.0rc1", cann="8.5.0").verdict == "bad"
