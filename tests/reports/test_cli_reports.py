"""`render`, `diff` and `merge` on the command line: outputs, exit codes, bad input."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

from ascend_audit.reports.diff import diff_reports
from ascend_audit.reports.json_report import write_report
from ascend_audit.reports.merge import merge_reports
from clirun import cli as run_cli
from report_samples import SAMPLES, driver_down_report, mixed_report, ready_report, validate

from ascend_audit.model import Status, Verdict


def audit(*args: str) -> subprocess.CompletedProcess:
    return run_cli(*args, env=dict(os.environ))


def _write(tmp_path, name, report) -> str:
    path = str(tmp_path / name)
    validate(write_report(report, path))
    return path


def test_render_regenerates_every_format(tmp_path):
    src = _write(tmp_path, "report.json", SAMPLES["mixed"]())
    out = audit(
        "render",
        src,
        "--html",
        str(tmp_path / "o.html"),
        "--junit",
        str(tmp_path / "o.xml"),
        "--markdown",
        str(tmp_path / "o.md"),
    )
    assert out.returncode == 0, out.stderr
    text = open(src, encoding="utf-8").read()  # noqa: SIM115
    html = (tmp_path / "o.html").read_text()
    assert hashlib.sha256(text.encode()).hexdigest() in html
    ET.fromstring((tmp_path / "o.xml").read_bytes())
    assert (
        "NOT\\_READY" in (tmp_path / "o.md").read_text()
        or "NOT_READY" in (tmp_path / "o.md").read_text()
    )


def test_render_usage_errors_exit_2_naming_the_file(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    out = audit("render", str(bad), "--html", str(tmp_path / "o.html"))
    assert out.returncode == 2 and "broken.json" in out.stderr and "Traceback" not in out.stderr
    notreport = tmp_path / "other.json"
    notreport.write_text('{"verdict": "SOMETIMES", "results": []}')
    out = audit("render", str(notreport), "--html", str(tmp_path / "o.html"))
    assert out.returncode == 2 and "other.json" in out.stderr
    out = audit("render", str(tmp_path / "missing.json"), "--html", str(tmp_path / "o.html"))
    assert out.returncode == 2 and "missing.json" in out.stderr
    good = _write(tmp_path, "good.json", SAMPLES["ready"]())
    out = audit("render", good)
    assert out.returncode == 2 and "--html" in out.stderr


def test_diff_detects_regressions():
    before, after = ready_report("n1"), mixed_report()
    after.host["hostname"] = "n1"
    after.inventory["versions"]["cann"] = "8.1.RC1"
    after.inventory["npus"] = after.inventory["npus"][:7]
    d = diff_reports(before, after)
    assert d["got_worse"]
    changes = {c["id"]: (c["before"], c["after"], c["worse"]) for c in d["status_changes"]}
    assert changes["DRV-PCIE-002"] == ("PASS", "WARN", True)
    assert {v["key"] for v in d["version_changes"]} == {"cann"}
    assert [n["npu_id"] for n in d["npus_disappeared"]] == [7]
    assert any("overall" in w for w in d["worse"])


def test_diff_improvement_is_not_worse():
    before = driver_down_report()
    after = driver_down_report()
    after.results[0].status = Status.PASS
    after.results[1].status = Status.WARN
    after.layers[0].verdict = Verdict.READY
    after.verdict = Verdict.DEGRADED
    after.inventory["npus"] = [
        {"npu_id": 0, "chip_id": 0, "name": "910B3", "health": "OK", "bus_id": "0000:C1:00.0"}
    ]
    d = diff_reports(before, after)
    assert not d["got_worse"], d["worse"]
    assert len(d["npus_appeared"]) == 1


def test_diff_cli_exit_codes_and_json(tmp_path):
    a = _write(tmp_path, "a.json", ready_report("n1"))
    b = _write(tmp_path, "b.json", driver_down_report())
    out = audit("diff", a, b, "--json", str(tmp_path / "d.json"))
    assert out.returncode == 1, out.stderr
    assert "got worse" in out.stdout
    assert json.loads((tmp_path / "d.json").read_text())["got_worse"] is True
    out = audit("diff", a, a, "--json", "-")
    assert out.returncode == 0 and json.loads(out.stdout)["got_worse"] is False
    (tmp_path / "x.json").write_text("[]")
    out = audit("diff", a, str(tmp_path / "x.json"))
    assert out.returncode == 2 and "x.json" in out.stderr


def test_merge_flags_inconsistency_and_not_ready():
    fleet = merge_reports(
        [
            ("a.json", ready_report("n1")),
            ("b.json", ready_report("n2")),
            ("c.json", ready_report("n3", cann="8.1.RC1", torch_npu="2.5.1")),
        ]
    )
    assert fleet["ready_count"] == 3 and not fleet["consistent"] and not fleet["ok"]
    keys = {i["key"]: i for i in fleet["consistency"]}
    assert set(keys) == {"cann", "torch_npu"}
    assert keys["cann"]["nodes"] == ["n3"] and keys["cann"]["majority"] == "8.0.RC3"
    rep = ready_report("n4")
    rep.inventory["npus"] = rep.inventory["npus"][:4]
    fleet = merge_reports(
        [
            ("a.json", ready_report("n1")),
            ("b.json", ready_report("n2")),
            ("d.json", rep),
            ("e.json", driver_down_report()),
        ]
    )
    kinds = {i["key"] for i in fleet["consistency"]}
    assert "npu_count" in kinds
    assert fleet["not_ready"] == ["node-b07"]
    n1 = fleet["nodes"][0]
    assert n1["cells"]["DRV-NPU-001"]["status"] == "PASS"


def test_merge_cli(tmp_path):
    paths = [_write(tmp_path, f"{n}.json", ready_report(n)) for n in ("n1", "n2")]
    out = audit(
        "merge",
        *paths,
        "--html",
        str(tmp_path / "fleet.html"),
        "--json",
        str(tmp_path / "fleet.json"),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    fleet = json.loads((tmp_path / "fleet.json").read_text())
    assert fleet["ok"] and fleet["node_count"] == 2
    assert "Checks × nodes" in (tmp_path / "fleet.html").read_text()
    paths.append(_write(tmp_path, "bad.json", mixed_report()))
    out = audit("merge", *paths, "--json", str(tmp_path / "fleet2.json"))
    assert out.returncode == 1
    (tmp_path / "junk.json").write_bytes(b"\xff\xfe not utf8")
    out = audit("merge", *paths, str(tmp_path / "junk.json"))
    assert out.returncode == 2 and "junk.json" in out.stderr and "Traceback" not in out.stderr


def test_run_output_dir_writes_all_formats(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    out = run_cli(
        "run",
        "--sysroot",
        str(root),
        "-q",
        "-o",
        str(tmp_path / "out"),
        "--html",
        str(tmp_path / "r.html"),
        "--junit",
        str(tmp_path / "r.xml"),
        "--markdown",
        str(tmp_path / "r.md"),
        env=dict(os.environ, PATH="/usr/bin:/bin"),
    )
    assert out.returncode in (0, 1), out.stderr
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["report.html", "report.json", "report.junit.xml", "report.md"]
    validate((tmp_path / "out" / "report.json").read_text())
    for p in ("r.html", "r.xml", "r.md"):
        assert (tmp_path / p).stat().st_size > 0


def test_help_stays_light():
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from ascend_audit import cli; "
            "heavy = ('jinja2', 'pandas', 'torch', 'markupsafe'); "
            "print(','.join(m for m in heavy if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and out.stdout.strip() == "", out.stdout


def test_merge_keeps_the_newest_audit_of_a_node_and_says_so(tmp_path):
    old, new = ready_report("n1"), mixed_report()
    new.host["hostname"] = "n1"
    old.started_at, new.started_at = "2026-11-30T08:00:00+00:00", "2026-12-01T08:00:00+00:00"
    fleet = merge_reports([("new.json", new), ("old.json", old), ("n2.json", ready_report("n2"))])
    assert fleet["node_count"] == 2
    assert [n["node"] for n in fleet["nodes"]] == ["n1", "n2"]
    assert fleet["nodes"][0]["file"] == "new.json"
    (dup,) = fleet["duplicates"]
    assert dup["kept"] == "new.json" and dup["dropped"] == ["old.json"]
    paths = [_write(tmp_path, "old.json", old), _write(tmp_path, "new.json", new)]
    out = audit("merge", *paths, "--json", str(tmp_path / "fleet.json"))
    assert "node n1 given 2 times: keeping the newest audit" in out.stdout
    assert json.loads((tmp_path / "fleet.json").read_text())["node_count"] == 1


def test_diff_warns_on_different_hosts_and_prints_each_change_once(tmp_path):
    a = _write(tmp_path, "a.json", ready_report("n1"))
    b = _write(tmp_path, "b.json", driver_down_report())
    out = audit("diff", a, b)
    assert out.stdout.startswith("warning: the reports are of different hosts (n1 before")
    body = [line.strip() for line in out.stdout.splitlines() if "→" in line]
    assert len(body) == len(set(body)), out.stdout
    changed = [line for line in body if line.startswith("✗ DRV-NPU-001")]
    assert len(changed) == 1, out.stdout
    out = audit("diff", a, b, "--json", "-")
    assert json.loads(out.stdout)["different_hosts"] is True
    assert "different hosts" in out.stderr
    same = _write(tmp_path, "c.json", ready_report("n1"))
    assert "warning" not in audit("diff", a, same).stdout
