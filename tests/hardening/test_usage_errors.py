"""Errors people can act on: every bad invocation of every command exits 2 with a message that
names the option or file at fault and says what would be right, never a traceback; and every
command's --help carries an example."""

from __future__ import annotations

import re

import pytest
from hardening.helpers import audit, no_traceback


def _commands() -> list[str]:
    out = audit("--help").stdout
    block = out.split("Commands:", 1)[1]
    return [m.group(1) for m in re.finditer(r"^\s{2}([a-z][\w-]*)\s", block, re.M)]


def test_every_listed_command_is_covered_below():
    assert set(_commands()) <= COVERED, set(_commands()) - COVERED


@pytest.mark.parametrize(
    "command",
    [
        None,
        *sorted(
            [
                "run",
                "collect",
                "checks",
                "explain",
                "render",
                "diff",
                "merge",
                "policy-keys",
                "presets",
                "weights-manifest",
                "completion",
            ]
        ),
    ],
)
def test_help_has_an_example(command):
    proc = audit(*([command] if command else []), "--help")
    assert proc.returncode == 0
    assert "Example" in proc.stdout, f"`{command} --help` shows no example"
    assert "ascend-audit" in proc.stdout.split("Example", 1)[1]


def _bad_invocations(tmp):
    bad_json = tmp / "bad.json"
    bad_json.write_text("{not json")
    bad_toml = tmp / "bad.toml"
    bad_toml.write_text("[driver\nx = ")
    wrong_key = tmp / "wrong.toml"
    wrong_key.write_text("[driver]\nno_such_key = 1\n")
    absent = str(tmp / "absent.json")
    return [
        # (argv, words the message must contain: the option/file and what would be right)
        (["run", "--layers", "drivr"], ["--layers", "drivr", "driver"]),
        (["run", "--timeout", "0"], ["--timeout", "0.1"]),
        (["run", "--timeout", "soon"], ["--timeout", "soon"]),
        (["run", "--policy", absent], ["--policy", "absent.json"]),
        (["run", "--policy", str(bad_toml)], ["--policy", "bad.toml"]),
        (["run", "--policy", str(wrong_key)], ["no_such_key"]),
        (["run", "--example", "nope"], ["--example", "nope", "atlas-800t-a2-ready"]),
        (["run", "--snapshot", absent], ["--snapshot", "absent.json"]),
        (["run", "--only", "NOPE-001"], ["NOPE-001", "ascend-audit checks"]),
        (["run", "--skip", "NOPE-001"], ["NOPE-001"]),
        (["run", "--fail-on", "maybe"], ["--fail-on", "warn", "fail"]),
        (["run", "--sysroot", absent], ["--sysroot", "absent.json"]),
        (["run", "--preset", "nope"], ["--preset", "nope", "a2-vllm"]),
        (["run", "--bogus"], ["--bogus"]),
        (["collect"], ["-o", "--output"]),
        (["collect", "-o", str(tmp / "x.tgz"), "--layers", "x"], ["--layers"]),
        (["checks", "--layer", "kernel"], ["--layer", "kernel", "driver"]),
        (["checks", "--checks-dir", absent], ["--checks-dir", "absent.json"]),
        (["explain"], ["CHECK_ID"]),
        (["explain", "NOPE-001"], ["NOPE-001", "ascend-audit checks"]),
        (["render", absent, "--html", str(tmp / "o.html")], ["absent.json"]),
        (["render", str(bad_json), "--html", str(tmp / "o.html")], ["bad.json", "JSON"]),
        (["render", str(bad_json)], ["--html", "--junit", "--markdown"]),
        (["diff", str(bad_json)], ["AFTER"]),
        (["diff", absent, str(bad_json)], ["absent.json"]),
        (["merge"], ["REPORTS"]),
        (["merge", str(bad_json)], ["bad.json"]),
        (["policy-keys", "extra"], ["extra"]),
        (["presets", "--show", "nope"], ["nope", "a2-vllm"]),
        (["weights-manifest", absent], ["MODEL_DIR", "absent.json"]),
        (["weights-manifest", str(tmp), "--samples", "0"], ["--samples", "1"]),
        (["completion", "tcsh"], ["tcsh", "bash", "zsh", "fish"]),
        (["checks", "--tag", "nope"], ["--tag", "nope", "network"]),
        (["run", "--lang", "fr"], ["--lang", "fr", "zh", "en"]),
        (["no-such-command"], ["no-such-command"]),
    ]


COVERED = {
    "run",
    "collect",
    "checks",
    "explain",
    "render",
    "diff",
    "merge",
    "policy-keys",
    "presets",
    "weights-manifest",
    "completion",
}


def test_bad_invocations_exit_2_naming_the_problem(tmp_path):
    failures = []
    for argv, words in _bad_invocations(tmp_path):
        proc = audit(*argv)
        no_traceback(proc)
        msg = proc.stderr + proc.stdout
        if proc.returncode != 2:
            failures.append(f"{argv}: exit {proc.returncode}: {msg[-300:]}")
            continue
        missing = [w for w in words if w not in msg]
        if missing:
            failures.append(f"{argv}: message lacks {missing}: {msg[-400:]}")
    assert not failures, "\n".join(failures)
