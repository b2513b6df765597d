"""The bundled examples: each gives its documented verdicts, and rebuilding one by `collect`
then replaying the bundle reproduces the live report (timings aside)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import jsonschema
import pytest
from ascend_audit.reports.json_report import schema
from clirun import cli as run_cli

REPO = Path(__file__).resolve().parents[2]


def _builder():
    spec = importlib.util.spec_from_file_location(
        "build_examples", REPO / "tools/build_examples.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_examples"] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


BUILD = _builder()
NAMES = [e.name for e in BUILD.EXAMPLES]


def audit(*args):
    return run_cli(*args, env=dict(os.environ, PATH="/usr/bin:/bin"))


def test_example_list_names_every_example():
    out = audit("run", "--example", "list")
    assert out.returncode == 0
    for name in NAMES:
        assert name in out.stdout


@pytest.mark.parametrize("example", BUILD.EXAMPLES, ids=NAMES)
def test_example_gives_its_documented_verdicts(example, tmp_path):
    out = audit("run", "--example", example.name, "--json", str(tmp_path / "r.json"))
    report = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(report, schema())
    got = {layer["name"]: layer["verdict"] for layer in report["layers"]}
    assert got == example.expect, out.stdout
    ready = all(v in ("READY", "DEGRADED") for v in got.values())
    assert out.returncode == (0 if ready else 1)
    assert report["host"]["hostname"] == example.hostname
    assert len(report["inventory"]["npus"]) == 8
    assert "Traceback" not in out.stdout + out.stderr


def _comparable(report: dict) -> dict:
    def strip(result):
        evidence = [
            dict(e, values={k: v for k, v in e["values"].items() if k != "duration_ms"})
            for e in result["evidence"]
        ]
        return dict(result, duration_ms=0, evidence=evidence)

    keep = ("verdict", "layers", "inventory", "host")
    return {**{k: report[k] for k in keep}, "results": [strip(r) for r in report["results"]]}


@pytest.mark.parametrize("example", BUILD.EXAMPLES, ids=NAMES)
def test_collect_then_replay_of_each_example_is_identical(example, tmp_path):
    bundle, live = tmp_path / "bundle", tmp_path / "live.json"
    BUILD.build(example, bundle, report_json=live)
    replay = tmp_path / "replay.json"
    audit("run", "--snapshot", str(bundle), "--json", str(replay))
    a, b = json.loads(live.read_text()), json.loads(replay.read_text())
    a["host"].pop("sysroot", None)
    b["host"].pop("sysroot", None)
    assert _comparable(a) == _comparable(b)
