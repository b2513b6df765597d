"""Item 9: plug-in checks are trusted code, but one that exits, raises a BaseException, runs past
its timeout or edits a fact cannot end the audit or change what later checks see; loading a
checks directory writes no __pycache__ into it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hardening.helpers import REPO, audit_process

PLUGINS = """
import sys, time
from ascend_audit.registry import check
from ascend_audit.model import passed
from ascend_audit.facts.driver_scan import NPU_SMI


class Boom(BaseException):
    pass


@check("SITE-EXIT-001", layer="driver", title="calls sys.exit", severity="low")
def exits(ctx):
    sys.exit(7)


@check("SITE-BASE-001", layer="driver", title="raises BaseException", severity="low")
def raises(ctx):
    raise Boom("plug-in blew up")


@check("SITE-SLOW-001", layer="driver", title="runs forever", severity="low")
def slow(ctx):
    time.sleep(600)
    return passed("never")


@check("SITE-EDIT-001", layer="driver", title="edits a fact", severity="low")
def edits(ctx):
    run = ctx.fact(NPU_SMI)
    object.__setattr__(run, "info", None)  # a frozen dataclass, forced
    return passed("edited")


@check("SITE-SEE-001", layer="driver", title="reads the fact after", severity="low")
def sees(ctx):
    info = ctx.fact(NPU_SMI).info
    return passed(f"npus seen: {len(info.npus) if info is not None else 'none'}")
"""


def _checks_dir(tmp: Path) -> Path:
    d = tmp / "site-checks"
    d.mkdir()
    (d / "site.py").write_text(PLUGINS)
    (d / "helper_mod.py").write_text("VALUE = 1\n")  # not a check module, still loaded
    return d


def test_misbehaving_plugins_become_errors_and_the_audit_writes_its_report(tmp_path):
    checks = _checks_dir(tmp_path)
    policy = tmp_path / "policy.toml"
    policy.write_text("[audit]\ncheck_timeout = 2\n")
    out = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    res = audit_process(
        "run",
        "--example",
        "atlas-800t-a2-ready",
        "--checks-dir",
        str(checks),
        "--policy",
        str(policy),
        "--json",
        str(out),
        env=env,
        timeout=120,
    )
    assert res.returncode == 1, (res.returncode, res.stderr[-800:])
    report = json.loads(out.read_text())
    by_id = {r["id"]: r for r in report["results"]}
    assert by_id["SITE-EXIT-001"]["status"] == "ERROR"
    assert "SystemExit" in by_id["SITE-EXIT-001"]["summary"]
    assert by_id["SITE-BASE-001"]["status"] == "ERROR"
    assert "Boom" in by_id["SITE-BASE-001"]["summary"]
    assert by_id["SITE-SLOW-001"]["status"] == "ERROR"
    assert "timeout of 2 s" in by_id["SITE-SLOW-001"]["summary"]
    assert by_id["SITE-EDIT-001"]["status"] == "PASS"
    seen = by_id["SITE-SEE-001"]["summary"]
    assert seen == "npus seen: 8", "a plug-in's edit of a fact reached the check after it"
    assert by_id["DRV-NPU-001"]["status"] in ("PASS", "WARN")  # built-ins still judged
    assert not list(checks.rglob("__pycache__")), "loading the checks dir wrote bytecode"


def test_the_readme_says_plugins_are_trusted_code():
    text = (REPO / "README.md").read_text()
    assert "trusted code" in text and "--checks-dir" in text
