"""End to end: `ascend-audit run --layers operator --trace DIR` exit codes, JSON, snapshots."""

from __future__ import annotations

import json
import subprocess

from clirun import cli as run_cli
from shared_fixtures import DATA

TRACES = DATA / "traces"


def cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd)


def test_clean_trace_exits_0(tmp_path):
    out = tmp_path / "out.json"
    res = cli(
        "run", "--layers", "operator", "--trace", str(TRACES / "no_aicpu"), "--json", str(out)
    )
    assert res.returncode == 0, res.stdout + res.stderr
    report = json.loads(out.read_text())
    ops = {r["id"]: r["status"] for r in report["results"] if r["layer"] == "operator"}
    assert ops["OPR-AICPU-001"] == "PASS"
    assert report["inventory"]["operator"]["aicpu_share"] == 0


def test_failing_trace_exits_1(tmp_path):
    out = tmp_path / "out.json"
    res = cli(
        "run", "--layers", "operator", "--trace", str(TRACES / "heavy_aicpu"), "--json", str(out)
    )
    assert res.returncode == 1, res.stdout + res.stderr
    report = json.loads(out.read_text())
    aicpu = next(r for r in report["results"] if r["id"] == "OPR-AICPU-001")
    assert aicpu["status"] == "FAIL"
    assert aicpu["metrics"]["top_aicpu_ops"][0]["type"] == "MaskedScatter"


def test_no_trace_leaves_the_operator_layer_missing(tmp_path):
    out = tmp_path / "out.json"
    res = cli("run", "--layers", "operator", "--json", str(out))
    assert res.returncode == 1
    layer = next(x for x in json.loads(out.read_text())["layers"] if x["name"] == "operator")
    assert layer["verdict"] == "MISSING"


def test_traces_and_logs_are_recorded_into_snapshots(tmp_path):
    log = tmp_path / "vllm.log"
    log.write_text(
        "[W compiler_depend.ts:51] Warning: CAUTION: The operator 'aten::x' is not "
        "currently supported on the NPU backend and will fall back to run on the CPU.\n"
    )
    bundle = tmp_path / "bundle"
    args = ["--trace", str(TRACES / "multi_rank"), "--serving-log", str(log)]
    col = cli("collect", "-o", str(bundle), "-q", *args)
    assert col.returncode in (0, 1), col.stderr
    log.unlink()  # replay must not need the original inputs
    out = tmp_path / "replay.json"
    cli("run", "--snapshot", str(bundle), "--layers", "operator", "--no-gate", "--json", str(out))
    results = {r["id"]: r for r in json.loads(out.read_text())["results"]}
    assert results["OPR-AICPU-001"]["metrics"]["per_rank"]["rank_1"] > 0.2
    assert results["OPR-FALLBACK-001"]["status"] == "FAIL"
    assert results["OPR-FALLBACK-001"]["metrics"]["aclop_compile_execute"] == 2
