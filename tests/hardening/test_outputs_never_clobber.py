"""Item 5: outputs never go through a planted link, non-regular targets are written in place,
`-` is standard output for every output option, and `-o DIR` is never a mixed set."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hardening.helpers import REPO, audit

EXAMPLE = ["run", "--example", "atlas-800t-a2-ready"]


def _victim(tmp: Path) -> Path:
    v = tmp / "victim.conf"
    v.write_text("precious\n")
    return v


@pytest.mark.parametrize("flag", ["--json", "--html", "--junit", "--markdown", "--prometheus"])
def test_a_symlinked_target_is_refused_with_exit_2(tmp_path, flag):
    victim = _victim(tmp_path)
    target = tmp_path / "out.file"
    target.symlink_to(victim)
    res = audit(*EXAMPLE, flag, str(target))
    assert res.returncode == 2, (res.returncode, res.stderr[-400:])
    assert str(target) in res.stderr and "symbolic link" in res.stderr
    assert victim.read_text() == "precious\n" and target.is_symlink()


def test_planted_temporary_names_are_never_written_through(tmp_path):
    victim = _victim(tmp_path)
    target = tmp_path / "report.json"
    for name in ("report.json.part", ".report.json.part", ".report.json.tmp", "report.json.tmp"):
        (tmp_path / name).symlink_to(victim)
    res = audit(*EXAMPLE, "--json", str(target))
    assert res.returncode == 0, res.stderr[-400:]
    assert victim.read_text() == "precious\n"
    assert json.loads(target.read_text())["verdict"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part") and not p.is_symlink()]


def test_a_symlinked_bundle_part_or_target_is_refused(tmp_path):
    victim = _victim(tmp_path)
    link = tmp_path / "node.tar.gz"
    link.symlink_to(victim)
    res = audit("collect", "--sysroot", str(tmp_path), "-o", str(link))
    assert res.returncode == 2 and "symbolic link" in res.stderr
    assert victim.read_text() == "precious\n"


def test_a_fifo_target_is_written_in_place_not_renamed_over(tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    res = audit(*EXAMPLE, "--json", str(fifo))
    reader.join(10)
    assert res.returncode == 0, res.stderr[-400:]
    assert fifo.is_fifo(), "the FIFO was replaced by a file"
    assert json.loads(got[0])["verdict"] == "READY"


@pytest.mark.parametrize(
    "flag, marker",
    [
        ("--json", '"verdict"'),
        ("--html", "<html"),
        ("--junit", "<testsuites"),
        ("--markdown", "# "),
        ("--prometheus", "# TYPE"),
    ],
)
def test_dash_means_standard_output_and_the_summary_goes_to_stderr(flag, marker):
    res = audit(*EXAMPLE, flag, "-")
    assert res.returncode == 0, res.stderr[-400:]
    assert marker in res.stdout
    assert "SUMMARY" not in res.stdout and "SUMMARY" in res.stderr
    if flag == "--json":
        json.loads(res.stdout)


def test_two_dashes_are_a_usage_error():
    res = audit(*EXAMPLE, "--json", "-", "--html", "-")
    assert res.returncode == 2 and "only one output" in res.stderr


def _consistent(out: Path) -> bool:
    text = (out / "report.json").read_bytes()
    digest = hashlib.sha256(text).hexdigest()
    html, md = (out / "report.html").read_text(), (out / "report.md").read_text()
    return digest in html and digest[:16] in md


def test_two_runs_into_one_output_dir_never_leave_a_mixed_set(tmp_path):
    out = tmp_path / "reports"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    runs = [["--layers", "driver"], ["--layers", "driver,operator"]] * 3
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "ascend_audit", *EXAMPLE, *extra, "-o", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            cwd=str(REPO),
        )
        for extra in runs
    ]
    for p in procs:
        assert p.wait(180) in (0, 1), p.stderr.read()[-400:] if p.stderr else ""
    assert sorted(x.name for x in out.iterdir()) == sorted(
        ["report.json", "report.html", "report.junit.xml", "report.md"]
    )
    assert _consistent(out), "report.json, report.html and report.md come from different runs"
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name], "staging left behind"


def test_directory_bundle_into_a_folder_of_other_files_is_refused(tmp_path):
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    res = audit("collect", "--sysroot", str(tmp_path), "-o", str(folder))
    assert res.returncode == 2 and "holds other files" in res.stderr
    assert (folder / "notes.txt").read_text() == "mine\n"


def test_a_run_that_fails_midway_leaves_the_previous_set_whole(tmp_path, monkeypatch):
    import ascend_audit.reports.markdown as markdown
    from ascend_audit.reports.diff import load_report
    from ascend_audit.reports.outputs import render_outputs

    out = tmp_path / "reports"
    src = tmp_path / "a.json"
    assert audit(*EXAMPLE, "--json", str(src)).returncode == 0
    report, _ = load_report(str(src))
    render_outputs(report, None, str(out))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    report.verdict = type(report.verdict)("NOT_READY")  # a different second run

    def broken(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(markdown, "write_markdown", broken)
    with pytest.raises(OSError):
        render_outputs(report, None, str(out))
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before, "a mixed set was left"
    assert _consistent(out)
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]
