"""node_exporter textfile output: parsed with the official client's parser, checked against JSON."""

from __future__ import annotations

import json
import os
import re
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from ascend_audit.reports.json_report import report_json
from ascend_audit.reports.prometheus import (
    escape_label_value,
    render_prometheus,
    write_prometheus,
)
from clirun import cli as run_cli

from ascend_audit.model import Evidence, LayerReport, Report, Result, Status, Verdict

parser = pytest.importorskip(
    "prometheus_client.parser", reason="prometheus-client is not installed (test extra)"
)

NAME_RE = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def _result(cid: str, layer: str, status: Status, **metrics: Any) -> Result:
    return Result(
        id=cid,
        layer=layer,
        status=status,
        severity="critical",
        title=f"title of {cid}",
        summary=f"summary of {cid}",
        evidence=[Evidence("command", "npu-smi info", "x")],
        metrics=dict(metrics),
    )


def make_report(
    *,
    verdict: Verdict = Verdict.READY,
    layers: dict[str, Verdict] | None = None,
    results: list[Result] | None = None,
    inventory: dict[str, Any] | None = None,
) -> Report:
    """A Report built directly, as the engine would."""
    layers = layers or {
        "driver": Verdict.READY,
        "operator": Verdict.READY,
        "framework": Verdict.READY,
    }
    return Report(
        tool={"name": "ascend-audit", "version": "0.1.0"},
        host={"hostname": "a2-node-07"},
        started_at="2026-05-04T10:00:00+00:00",
        finished_at="2026-05-04T10:00:02.500000+00:00",
        inputs={},
        verdict=verdict,
        layers=[LayerReport(n, v) for n, v in layers.items()],
        results=results if results is not None else [],
        inventory=inventory if inventory is not None else {"npus": [], "versions": {}},
        duration_ms=2500.0,
    )


def parse_strict(text: str) -> dict[str, Any]:
    """Parse like node_exporter would: the client's parser plus the rules it is lenient about."""
    assert text.endswith("\n"), "node_exporter needs the last line to end in a newline"
    families = {}
    order: list[str] = []
    for fam in parser.text_string_to_metric_families(text):
        assert fam.name not in families, f"family {fam.name} split or declared twice"
        assert NAME_RE.match(fam.name), fam.name
        assert fam.type == "gauge", (fam.name, fam.type)
        assert fam.documentation, f"{fam.name} has no HELP"
        seen = set()
        for s in fam.samples:
            assert s.timestamp is None, "a timestamp makes node_exporter skip the whole file"
            assert s.name == fam.name
            for k in s.labels:
                assert LABEL_RE.match(k), k
            key = tuple(sorted(s.labels.items()))
            assert key not in seen, f"duplicate series {s.name}{dict(key)}"
            seen.add(key)
        families[fam.name] = fam
        order.append(fam.name)
    # one HELP and one TYPE line per family, TYPE before its samples, groups contiguous
    types = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")]
    assert types == order
    assert len(types) == len(set(types))
    return families


def samples(families: dict[str, Any], name: str) -> list[tuple[dict[str, str], float]]:
    return [(s.labels, s.value) for s in families[name].samples] if name in families else []


def value(families: dict[str, Any], name: str, **labels: str) -> float:
    hits = [
        v for lab, v in samples(families, name) if all(lab.get(k) == x for k, x in labels.items())
    ]
    assert len(hits) == 1, (name, labels, samples(families, name))
    return hits[0]


def assert_matches_json(text: str, report_dict: dict[str, Any]) -> dict[str, Any]:
    """Every value of the textfile agrees with the JSON report of the same audit."""
    fams = parse_strict(text)
    ready = report_dict["verdict"] in ("READY", "DEGRADED")
    assert value(fams, "ascend_audit_ready") == (1 if ready else 0)
    assert value(fams, "ascend_audit_info", verdict=report_dict["verdict"]) == 1
    assert value(fams, "ascend_audit_duration_seconds") == pytest.approx(
        report_dict["duration_ms"] / 1000, abs=1e-3
    )
    finished = datetime.fromisoformat(report_dict["finished_at"]).timestamp()
    assert value(fams, "ascend_audit_last_run_timestamp_seconds") == pytest.approx(
        finished, abs=1e-3
    )
    layers = samples(fams, "ascend_audit_layer_ready")
    assert len(layers) == len(report_dict["layers"])
    for layer in report_dict["layers"]:
        v = value(fams, "ascend_audit_layer_ready", layer=layer["name"])
        assert v == (1 if layer["verdict"] in ("READY", "DEGRADED") else 0)
        assert (
            value(fams, "ascend_audit_layer_ready", layer=layer["name"], verdict=layer["verdict"])
            == v
        )
    assert len(samples(fams, "ascend_audit_check_status")) == len(report_dict["results"])
    for r in report_dict["results"]:
        assert (
            value(
                fams,
                "ascend_audit_check_status",
                check=r["id"],
                layer=r["layer"],
                status=r["status"],
            )
            == 1
        )
        ok = r["status"] in ("PASS", "WARN", "SKIP", "WAIVED")
        assert value(fams, "ascend_audit_check_ok", check=r["id"], layer=r["layer"]) == int(ok)
    for status in ("PASS", "WARN", "FAIL", "ERROR", "SKIP", "BLOCKED", "WAIVED"):
        n = sum(1 for r in report_dict["results"] if r["status"] == status)
        assert value(fams, "ascend_audit_check_results", status=status) == n
    npus = report_dict["inventory"].get("npus") or []
    assert value(fams, "ascend_audit_npus") == len({n["npu_id"] for n in npus})
    bad = sum(1 for n in npus if (n.get("health") or "").upper() != "OK")
    assert value(fams, "ascend_audit_npu_chips_unhealthy") == bad
    versions = report_dict["inventory"].get("versions") or {}
    if any(isinstance(versions.get(k), str) for k in ("driver", "firmware", "cann")):
        ((labels, v),) = samples(fams, "ascend_audit_versions_info")
        assert v == 1
        for key in ("driver", "firmware", "cann", "torch_npu", "vllm_ascend", "npu_smi_driver"):
            if isinstance(versions.get(key), str):
                assert labels[key] == versions[key]
            else:
                assert key not in labels
    return fams


def _npus(n: int, unhealthy: tuple[int, ...] = (), chips: int = 1) -> list[dict[str, Any]]:
    return [
        {
            "npu_id": i,
            "chip_id": c,
            "name": "910B3",
            "health": "Warning" if i in unhealthy else "OK",
            "bus_id": f"0000:c{i}:00.0",
            "phy_id": i * chips + c,
        }
        for i in range(n)
        for c in range(chips)
    ]


def test_ready_report_parses_and_matches_its_json():
    rep = make_report(
        results=[
            _result("DRV-NPU-001", "driver", Status.PASS, npus=8),
            _result("OPR-AICPU-001", "operator", Status.PASS, aicpu_share=0.012),
            _result("FWK-VER-001", "framework", Status.WARN),
        ],
        inventory={
            "npus": _npus(8),
            "versions": {
                "driver": "24.1.rc3",
                "firmware": "7.5.0.1.129",
                "cann": "8.0.0",
                "torch_npu": "2.5.1",
                "vllm_ascend": "0.9.1",
                "npus": {"0": {}},
            },
        },
    )
    text = render_prometheus(rep)
    fams = assert_matches_json(text, json.loads(report_json(rep)))
    assert value(fams, "ascend_audit_aicpu_time_ratio") == pytest.approx(0.012)
    assert value(fams, "ascend_audit_npus") == 8
    assert 'ascend_audit_layer_ready{layer="driver",required="true",verdict="READY"} 1' in text
    chip = value(fams, "ascend_audit_npu_chip_health_ok", npu_id="3", pcie_bus_info="0000:C3:00.0")
    assert chip == 1
    assert value(fams, "ascend_audit_npu_chip_health_ok", npu_id="3", id="3") == 1
    # never a name of npu-exporter or node_exporter
    assert all(name.startswith("ascend_audit_") for name in fams)


def test_not_ready_report_counts_unhealthy_chips_and_failed_checks():
    rep = make_report(
        verdict=Verdict.NOT_READY,
        layers={
            "driver": Verdict.NOT_READY,
            "operator": Verdict.BLOCKED,
            "framework": Verdict.BLOCKED,
        },
        results=[
            _result("DRV-NPU-002", "driver", Status.FAIL),
            _result("DRV-VER-001", "driver", Status.ERROR),
            _result("OPR-AICPU-001", "operator", Status.BLOCKED),
            _result("FWK-VER-001", "framework", Status.WAIVED),
        ],
        inventory={"npus": _npus(8, unhealthy=(2, 5)), "versions": {"driver": "24.1.rc3"}},
    )
    fams = assert_matches_json(render_prometheus(rep), json.loads(report_json(rep)))
    assert value(fams, "ascend_audit_ready") == 0
    assert value(fams, "ascend_audit_npu_chips_unhealthy") == 2
    assert value(fams, "ascend_audit_check_ok", check="DRV-NPU-002") == 0
    assert value(fams, "ascend_audit_check_ok", check="OPR-AICPU-001") == 0
    assert value(fams, "ascend_audit_check_ok", check="FWK-VER-001") == 1
    assert value(fams, "ascend_audit_layer_ready", layer="operator", verdict="BLOCKED") == 0
    # no traces: the AI CPU share is unknown, so it is left out rather than reported as 0
    assert "ascend_audit_aicpu_time_ratio" not in fams
    ((labels, _),) = samples(fams, "ascend_audit_versions_info")
    assert labels == {"driver": "24.1.rc3"}


def test_a3_chips_count_npus_once_and_inventory_share_wins():
    rep = make_report(
        results=[_result("OPR-AICPU-001", "operator", Status.WARN, aicpu_share=0.5)],
        inventory={"npus": _npus(8, chips=2), "versions": {}, "operator": {"aicpu_share": 0.031}},
    )
    fams = assert_matches_json(render_prometheus(rep), json.loads(report_json(rep)))
    assert value(fams, "ascend_audit_npus") == 8
    assert len(samples(fams, "ascend_audit_npu_chip_health_ok")) == 16
    assert value(fams, "ascend_audit_aicpu_time_ratio") == pytest.approx(0.031)
    assert "ascend_audit_versions_info" not in fams


def test_empty_inventory_and_missing_layers():
    rep = make_report(
        verdict=Verdict.MISSING,
        layers={
            "driver": Verdict.MISSING,
            "operator": Verdict.MISSING,
            "framework": Verdict.MISSING,
        },
        inventory={"npus": [], "versions": {}},
    )
    fams = assert_matches_json(render_prometheus(rep), json.loads(report_json(rep)))
    assert value(fams, "ascend_audit_npus") == 0
    assert samples(fams, "ascend_audit_check_status") == []


def test_hostile_label_values_are_escaped_and_round_trip():
    nasty = 'rc3"} evil_metric 1\n# TYPE x info\\'
    rep = make_report(
        results=[_result('DRV-"X"\n', "driver", Status.PASS)],
        inventory={
            "npus": [{"npu_id": 0, "chip_id": 0, "health": 'O"K\n', "bus_id": "a\\b"}],
            "versions": {"driver": nasty, "cann": "8.0.0\n"},
        },
    )
    text = render_prometheus(rep)
    fams = parse_strict(text)
    ((labels, _),) = samples(fams, "ascend_audit_versions_info")
    assert labels["driver"] == nasty and labels["cann"] == "8.0.0"  # versions are stripped
    assert value(fams, "ascend_audit_check_ok", check='DRV-"X"\n') == 1
    assert value(fams, "ascend_audit_npu_chip_health_ok", health='O"K\n') == 0
    assert "evil_metric" not in fams
    # every physical line is a comment or a sample of ours
    for line in text.splitlines():
        assert line.startswith(("# HELP ascend_audit_", "# TYPE ascend_audit_", "ascend_audit_"))
    assert escape_label_value('a\\b"c\nd') == 'a\\\\b\\"c\\nd'


def test_write_is_atomic_and_leaves_no_temp_files(tmp_path, monkeypatch):
    rep = make_report(inventory={"npus": _npus(2), "versions": {"driver": "24.1.rc3"}})
    target = tmp_path / "textfile" / "ascend_audit.prom"
    target.parent.mkdir()
    target.write_text("# old content\n")
    replaced: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(src, dst):
        replaced.append((str(src), str(dst)))
        assert Path(src).parent == target.parent, "the temp file must be in the same directory"
        assert not str(src).endswith(".prom"), "node_exporter would read a half-written .prom"
        assert Path(target).read_text() == "# old content\n", "target touched before the rename"
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    text = write_prometheus(rep, str(target))
    assert replaced and replaced[0][1] == str(target)
    assert target.read_text() == text == render_prometheus(rep)
    assert sorted(p.name for p in target.parent.iterdir()) == ["ascend_audit.prom"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o644)


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "ascend_audit.prom"
    target.write_text("ascend_audit_ready 1\n")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        write_prometheus(make_report(), str(target))
    assert target.read_text() == "ascend_audit_ready 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["ascend_audit.prom"]


# ---------- through the CLI, once `run --prometheus FILE` exists ----------


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=env or dict(os.environ))


def _has_prometheus_option() -> bool:
    return "--prometheus" in _cli("run", "--help").stdout


def test_cli_run_writes_a_textfile_matching_its_json(tmp_path):
    if not _has_prometheus_option():
        pytest.skip("`ascend-audit run --help` does not list --prometheus yet")
    from fakenode import atlas_800_a2, npu_smi_outputs
    from standins import node_env, standin
    from sysroot import healthy_910b_node

    root, bindir = tmp_path / "root", tmp_path / "bin"
    healthy_910b_node(root)
    standin(bindir, "npu-smi", npu_smi_outputs(atlas_800_a2()))
    prom = tmp_path / "textfile" / "ascend_audit.prom"
    out = _cli(
        "run",
        "--sysroot",
        str(root),
        "--json",
        str(tmp_path / "r.json"),
        "--prometheus",
        str(prom),
        "-q",
        env=node_env(bindir),
    )
    assert out.returncode in (0, 1), out.stdout + out.stderr
    report_dict = json.loads((tmp_path / "r.json").read_text())
    fams = assert_matches_json(prom.read_text(), report_dict)
    assert value(fams, "ascend_audit_npus") == 8
    assert sorted(p.name for p in prom.parent.iterdir()) == ["ascend_audit.prom"]
    # same text as rendering the JSON report again: the textfile is a renderer of the Report
    assert prom.read_text() == render_prometheus(Report.from_dict(report_dict))


def _promtool() -> str:
    """Path of promtool (Debian's `prometheus` package); in CI its absence fails the test."""
    import shutil

    found = shutil.which("promtool")
    if found:
        return found
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("promtool is not installed in CI (.ci/run installs the `prometheus` package)")
    pytest.skip("promtool is not installed (apt-get install prometheus): names not linted")


def _example_names() -> list[str]:
    from ascend_audit.examples_index import list_examples

    return [name for name, _ in list_examples()]


def _lint_reports() -> list[tuple[str, Report]]:
    """Every shape of textfile the renderer makes: ready, failing, A3, empty, hostile, AI CPU."""
    nasty = make_report(
        results=[_result('DRV-"X"\n', "driver", Status.PASS)],
        inventory={
            "npus": [{"npu_id": 0, "chip_id": 0, "health": 'O"K\n', "bus_id": "a\\b"}],
            "versions": {"driver": 'rc3"} evil 1\n', "cann": "8.0.0"},
        },
    )
    return [
        ("ready", make_report(inventory={"npus": _npus(8), "versions": {"driver": "24.1.rc3"}})),
        ("empty", make_report(inventory={})),
        ("hostile", nasty),
    ]


def _promtool_check(text: str) -> str:
    """promtool's complaints about a textfile ('' when it accepts it)."""
    run = subprocess.run(
        [_promtool(), "check", "metrics"],
        input=text.encode(),
        capture_output=True,
        timeout=60,
    )
    said = (run.stdout + run.stderr).decode("utf-8", "replace").strip()
    return said if (run.returncode != 0 or said) else ""


@pytest.mark.parametrize("name", [n for n, _ in _lint_reports()])
def test_promtool_accepts_the_textfile(name):
    """`promtool check metrics` (the linter of Prometheus' own naming rules) has no complaint:
    no _count/_total suffix on a gauge, units spelled out, _ratio for a 0..1 share."""
    report = dict(_lint_reports())[name]
    assert _promtool_check(render_prometheus(report)) == ""


@pytest.mark.parametrize("example", _example_names())
def test_promtool_accepts_every_bundled_example(tmp_path, example):
    prom = tmp_path / "ascend_audit.prom"
    out = _cli("run", "--example", example, "-q", "--prometheus", str(prom))
    assert out.returncode in (0, 1), out.stdout + out.stderr
    text = prom.read_text()
    assert "ascend_audit_ready" in text and "_count " not in text
    assert _promtool_check(text) == ""
