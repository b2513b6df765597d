"""Item 6: the terminal shows what the node said, never what it commands; no encoding crashes;
report files are written before anything is printed."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from hardening.helpers import REPO, audit, fake_node

from ascend_audit.textsafe import encodable, printable

HOSTILE = (
    "\x1b]0;pwned-title\x07"  # OSC: set the window title
    "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # OSC 52: write the clipboard
    "\x1b[2J\x1b[H"  # CSI: clear the screen, home
    "\x9b31m"  # 8-bit CSI
    "\x1bPqdcs-payload\x1b\\"  # DCS string
    "\r\x08\x07\x00\x7f\x85"  # CR overwrite, BS, BEL, NUL, DEL, C1 NEL
    "\u202egnp.exe\u202c\u2066x\u2069"  # bidi override / isolate
)
BAD = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_printable_strips_every_kind_of_control():
    out = printable("node-" + HOSTILE + "\tend\nnext")
    assert not BAD.search(out), repr(out)
    assert "pwned-title" not in out and "ZWNobyBwd25lZA" not in out and "dcs-payload" not in out
    assert out.startswith("node-") and out.endswith("\tend\nnext")
    assert "gnp.exe" in out  # the text itself stays, only its reordering goes
    assert printable("lone \udc80 surrogate") == "lone ? surrogate"


@pytest.mark.parametrize("encoding", ["ascii", "gbk"])
def test_encodable_replaces_what_a_terminal_cannot_show(encoding):
    class Stream:
        pass

    s = Stream()
    s.encoding = encoding  # type: ignore[attr-defined]
    text = encodable("节点 ✓ 🚀 ok", s)  # type: ignore[arg-type]
    text.encode(encoding)
    assert text.endswith("ok")


@pytest.fixture
def hostile_node(tmp_path):
    root, _bindir, env = fake_node(tmp_path)
    (root / "etc" / "hostname").write_text("node-a" + HOSTILE + "节点🚀\n")
    return tmp_path, root, env


def _clean(text: str) -> None:
    assert not BAD.search(text), repr(BAD.search(text).group(0))  # type: ignore[union-attr]
    assert "pwned-title" not in text and "ZWNobyBwd25lZA" not in text


def test_run_diff_and_merge_print_no_control_characters(hostile_node):
    tmp, root, env = hostile_node
    a, b = tmp / "a.json", tmp / "b.json"
    res = audit("run", "--sysroot", str(root), "--no-color", "-v", "--json", str(a), env=env)
    assert res.returncode in (0, 1), res.stderr[-500:]
    assert "node-a" in res.stdout
    _clean(res.stdout + res.stderr)
    assert "pwned-title" in json.loads(a.read_text())["host"]["hostname"]  # the JSON keeps it
    res2 = audit(
        "run", "--sysroot", str(root), "--layers", "driver", "--no-color", "--json", str(b), env=env
    )
    assert res2.returncode in (0, 1)
    for cmd in (["diff", str(a), str(b)], ["merge", str(a), str(b)]):
        out = audit(*cmd, env=env)
        assert out.returncode in (0, 1), out.stderr[-500:]
        assert "node-a" in out.stdout
        _clean(out.stdout + out.stderr)


@pytest.mark.parametrize("encoding", ["ascii", "gbk"])
def test_a_terminal_that_cannot_encode_gets_replacements_not_a_crash(hostile_node, encoding):
    tmp, root, env = hostile_node
    env = dict(env, PYTHONIOENCODING=f"{encoding}:strict", PYTHONPATH=str(REPO))
    out = tmp / f"r-{encoding}.json"
    argv = [sys.executable, "-m", "ascend_audit", "run", "--sysroot", str(root), "--json", str(out)]
    res = subprocess.run(argv, capture_output=True, env=env, cwd=str(REPO), timeout=180)
    stdout, stderr = res.stdout.decode(encoding), res.stderr.decode(encoding)
    assert res.returncode in (0, 1), stderr[-800:]
    assert "Traceback" not in stderr and "internal error" not in stderr
    assert "node-a" in stdout
    assert "节点🚀" in json.loads(out.read_text(encoding="utf-8"))["host"]["hostname"]


def test_report_files_are_written_before_anything_is_printed(hostile_node):
    tmp, root, env = hostile_node
    out = tmp / "first.json"
    env = dict(env, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-m", "ascend_audit", "run", "--sysroot", str(root), "-q", "--json", out],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=str(REPO),
    )
    assert proc.stdout is not None
    proc.stdout.close()  # nobody reads: printing the summary fails with a broken pipe
    proc.wait(120)
    assert out.exists() and json.loads(out.read_text())["verdict"]
