"""The Ansible role and playbook, run for real with ansible-core against three local fake nodes."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from clirun import cli as run_cli
from fakenode import atlas_800_a2, npu_smi_outputs
from standins import standin
from sysroot import healthy_910b_node

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = REPO / "deploy" / "ansible" / "audit.yml"
ANSIBLE_PLAYBOOK = shutil.which("ansible-playbook")

pytestmark = [
    pytest.mark.skipif(ANSIBLE_PLAYBOOK is None, reason="ansible-core is not installed (fleet)"),
    pytest.mark.timeout(600),
    pytest.mark.xdist_group("ansible"),  # one worker builds the module's wheel once
]

READY_POLICY = """\
[audit]
required_layers = ["driver"]

[driver]
expected_npu_count = 8

[[waivers]]
check = "DRV-VER-002"
reason = "CANN 8.0.0 with driver 24.1.rc3 accepted for this fake node"
expires = 2099-12-31
"""


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _has_merge() -> bool:
    out = run_cli("merge", "--help")
    return out.returncode == 0


RUNTIME_DEPS = ("click", "jinja2", "psutil", "pyudev", "yaml")


def _offline_deps_missing(tmp: Path) -> list[str]:
    """The runtime dependencies a node venv (--system-site-packages, pip --no-index) would not
    see: the play installs only the wheel offline, so they must be in the system site already
    (.ci/run installs them there; a bare clone's own venv does not)."""
    probe = tmp / "probe-venv"
    made = subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(probe)],
        capture_output=True,
        timeout=120,
    )
    if made.returncode != 0:
        return list(RUNTIME_DEPS)
    code = (
        "import importlib.util, sys; "
        f"print(' '.join(m for m in {RUNTIME_DEPS!r} if importlib.util.find_spec(m) is None))"
    )
    out = subprocess.run(
        [str(probe / "bin" / "python"), "-c", code], capture_output=True, text=True, timeout=60
    )
    return out.stdout.split() if out.returncode == 0 else list(RUNTIME_DEPS)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel the controller builds, from a copy of the checkout (the tree stays clean)."""
    tmp = tmp_path_factory.mktemp("wheel")
    missing = _offline_deps_missing(tmp)
    if missing:
        pytest.skip(
            "needs an offline wheelhouse: a node venv of this Python (--system-site-packages, "
            f"pip --no-index) cannot see {', '.join(missing)}; .ci/run installs them system-wide"
        )
    src = tmp / "src"
    shutil.copytree(
        REPO,
        src,
        ignore=shutil.ignore_patterns(
            ".git",
            "build",
            "dist",
            "*.egg-info",
            "__pycache__",
            ".pytest_cache",
            ".ruff_cache",
            ".hypothesis",
            "fleet-out",
        ),
    )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--disable-pip-version-check",
            "-q",
            str(src),
            "-w",
            str(tmp / "dist"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if out.returncode != 0:
        pytest.skip(f"could not build the wheel here: {out.stderr[-500:]}")
    (whl,) = (tmp / "dist").glob("ascend_audit-*.whl")
    return whl


def _node_vars(base: Path, name: str) -> dict[str, Any]:
    return {
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
        "ascend_audit_install_dir": str(base / name / "opt"),
        "ascend_audit_output_dir": str(base / name / "out"),
        "ascend_audit_venv_python": sys.executable,
        # reuse the test interpreter's packages: the venv gets only the wheel itself
        "ascend_audit_venv_args": ["--system-site-packages", "--without-pip"],
        "ascend_audit_pip_args": ["--no-index"],  # dependencies come from the system site
    }


def count_calls(program: Path, log: Path) -> None:
    """Wrap PROGRAM so that each call appends a line to LOG (how many audits ran on the node)."""
    real = program.with_name(program.name + ".real")
    program.rename(real)
    program.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    program.chmod(0o755)


def make_fleet(
    tmp_path: Path, wheel: Path, *, unreachable: bool = True, group_fleet_dir: bool = False
) -> tuple[Path, Path]:
    """Inventory of a ready node, a node without NPUs and (optionally) an unreachable node;
    GROUP_FLEET_DIR: the fleet directory is a group variable of the nodes (not an extra var)."""
    nodes = tmp_path / "nodes"
    ready_root = nodes / "node-ready" / "root"
    healthy_910b_node(ready_root)
    (ready_root / "etc").mkdir(exist_ok=True)
    (ready_root / "etc" / "hostname").write_text("node-ready\n")
    bindir = nodes / "node-ready" / "bin"
    standin(bindir, "npu-smi", npu_smi_outputs(atlas_800_a2()))
    count_calls(bindir / "npu-smi", tmp_path / "npu-smi-calls.log")
    policy = tmp_path / "policy-ready.toml"
    policy.write_text(READY_POLICY)

    fault_root = nodes / "node-fault" / "root"
    (fault_root / "etc").mkdir(parents=True)
    (fault_root / "etc" / "hostname").write_text("node-fault\n")

    hosts: dict[str, Any] = {
        "node-ready": {
            **_node_vars(nodes, "node-ready"),
            "ascend_audit_sysroot": str(ready_root),
            "ascend_audit_policy": str(policy),
            "ascend_audit_environment": {"PATH": f"{bindir}:/usr/bin:/bin"},
        },
        "node-fault": {
            **_node_vars(nodes, "node-fault"),
            "ascend_audit_sysroot": str(fault_root),
            "ascend_audit_environment": {"PATH": "/usr/bin:/bin"},
        },
    }
    if unreachable:
        hosts["node-gone"] = {
            "ansible_connection": "ssh",
            "ansible_host": "127.0.0.1",
            "ansible_port": _closed_port(),
            "ansible_user": "nobody",
            "ansible_ssh_common_args": "-o ConnectTimeout=3 -o BatchMode=yes "
            "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
        }
    group_vars: dict[str, Any] = {"ascend_audit_wheel": str(wheel)}
    if group_fleet_dir:
        group_vars["ascend_audit_fleet_dir"] = str(tmp_path / "fleet")
    inventory = tmp_path / "inventory.yml"  # JSON is YAML
    inventory.write_text(json.dumps({"npu_node": {"hosts": hosts, "vars": group_vars}}))
    return inventory, tmp_path / "fleet"


def play(
    inventory: Path, fleet: Path, *extra: str, fleet_as_extra_var: bool = True
) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ,
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_HOST_KEY_CHECKING="False",
        ANSIBLE_RETRY_FILES_ENABLED="False",
        ANSIBLE_LOCALHOST_WARNING="False",
        ANSIBLE_PYTHON_INTERPRETER=sys.executable,
        ANSIBLE_LOCAL_TEMP=str(fleet.parent / "ansible-local"),
        ANSIBLE_REMOTE_TEMP=str(fleet.parent / "ansible-remote"),
        ANSIBLE_SSH_CONTROL_PATH_DIR=str(fleet.parent / "cp"),
        LC_ALL="C.UTF-8",
        LANG="C.UTF-8",
    )
    return subprocess.run(
        [
            ANSIBLE_PLAYBOOK,
            "-i",
            str(inventory),
            str(PLAYBOOK),
            "-e",
            json.dumps(
                {
                    **({"ascend_audit_fleet_dir": str(fleet)} if fleet_as_extra_var else {}),
                    "ascend_audit_controller_cmd": [sys.executable, "-m", "ascend_audit"],
                }
            ),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=540,
        env=env,
        cwd=str(fleet.parent),
    )


def test_fleet_play_audits_fetches_merges_and_fails_naming_nodes(tmp_path, wheel):
    """The whole play, with the fleet directory set as a group variable of the nodes (the
    inventory's usual place): every output lands there, none beside the playbook."""
    inventory, fleet = make_fleet(tmp_path, wheel, group_fleet_dir=True)
    out = play(inventory, fleet, fleet_as_extra_var=False)
    log = out.stdout + out.stderr
    assert out.returncode != 0, log
    assert not (PLAYBOOK.parent / "fleet-out").exists(), "outputs split into the checkout"

    # each node is audited once: run --record gives the report and the bundle of one audit
    calls = (tmp_path / "npu-smi-calls.log").read_text().splitlines()
    (tmp_path / "npu-smi-calls.log").unlink()
    nodes = tmp_path / "nodes"
    once = run_cli(
        "run",
        "--sysroot",
        str(nodes / "node-ready" / "root"),
        "-q",
        "--policy",
        str(tmp_path / "policy-ready.toml"),
        env=dict(os.environ, PATH=f"{nodes / 'node-ready' / 'bin'}:/usr/bin:/bin"),
    )
    assert once.returncode in (0, 1), once.stdout + once.stderr
    one_audit = (tmp_path / "npu-smi-calls.log").read_text().splitlines()
    assert one_audit and sorted(calls) == sorted(one_audit), (calls, one_audit)
    assert "ascend-audit collect" not in log

    # the unreachable node is reported as such by Ansible, quickly
    assert "UNREACHABLE" in log and "node-gone" in log, log

    # each reachable node: installed into its own venv, audited, its report and snapshot fetched
    for name in ("node-ready", "node-fault"):
        venv = nodes / name / "opt" / "venv"
        installed = list(venv.glob("lib/python*/site-packages/ascend_audit/__init__.py"))
        assert installed, f"{name}: ascend-audit not installed into its own venv\n{log}"
        assert (venv / "bin" / "ascend-audit").is_file()
        assert (nodes / name / "out" / "report.json").is_file()
        assert (fleet / "snapshots" / f"{name}.tar.gz").is_file(), log
    assert not (fleet / "reports" / "node-gone.json").exists()

    ready = json.loads((fleet / "reports" / "node-ready.json").read_text())
    fault = json.loads((fleet / "reports" / "node-fault.json").read_text())
    assert ready["host"]["hostname"] == "node-ready"
    assert ready["verdict"] in ("READY", "DEGRADED"), ready["layers"]
    assert len(ready["inventory"]["npus"]) == 8
    assert ready["policy"]["required_layers"] == ["driver"]
    assert fault["verdict"] == "NOT_READY"
    fault_layers = {x["name"]: x["verdict"] for x in fault["layers"]}
    assert fault_layers["driver"] == "NOT_READY"

    # the fetched snapshot replays into the same verdict on the controller
    replay = run_cli(
        "run",
        "--snapshot",
        str(fleet / "snapshots" / "node-fault.tar.gz"),
        "--json",
        str(tmp_path / "replay.json"),
        env=dict(os.environ, PATH="/usr/bin:/bin"),
    )
    assert json.loads((tmp_path / "replay.json").read_text())["verdict"] == "NOT_READY", replay

    # the play's failure message names the failing node with its layers, and the missing node
    assert "Fleet NOT READY: 1/3 node(s) ready" in log, log
    assert "node-fault: driver NOT_READY, operator BLOCKED, framework BLOCKED" in log, log
    assert "Missing from the fleet run" in log and "node-gone" in log.split("Missing from")[1]
    assert "node-ready:" not in log.split("Not ready:")[1].split("Missing from")[0]

    if not _has_merge():
        assert "ascend-audit merge did not run" in log, log
        pytest.skip("`ascend-audit merge` does not exist yet: merged-report assertions skipped")
    merged = json.loads((fleet / "fleet.json").read_text())
    assert (fleet / "fleet.html").is_file()
    assert merged["node_count"] == 2 and merged["ready_count"] == 1, merged
    by_node = {n["node"]: n for n in merged["nodes"]}
    assert by_node["node-fault"]["ready"] is False
    assert by_node["node-ready"]["ready"] is True
    assert f"Merged report: {fleet}/fleet.html" in log
    # the merge also flags the NPU count that differs from the majority, and the play says so
    assert "Inconsistent across nodes: " in log and "node-fault" in log.split("Inconsistent")[1], (
        log
    )


def test_check_mode_changes_nothing(tmp_path, wheel):
    inventory, fleet = make_fleet(tmp_path, wheel, unreachable=False)
    out = play(inventory, fleet, "--check")
    log = out.stdout + out.stderr
    assert out.returncode == 0, log
    assert "check mode: 2 node(s) would be audited" in log, log
    for name in ("node-ready", "node-fault"):
        assert not (tmp_path / "nodes" / name / "opt").exists(), log
        assert not (tmp_path / "nodes" / name / "out").exists(), log
    assert not fleet.exists()


def test_a_node_python_below_the_floor_is_refused_by_name(tmp_path, wheel):
    """The role installs on Python 3.9+ (the package's floor), and says so on an older one."""
    inventory, fleet = make_fleet(tmp_path, wheel, unreachable=False)
    hosts = json.loads(inventory.read_text())
    import glob

    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.[5-8].*/bin/python3")))
    old = found[-1] if found else ""
    if not old or not os.access(old, os.X_OK):
        old = str(tmp_path / "python-too-old")  # a stand-in that answers like Python 3.8
        Path(old).write_text("#!/bin/sh\necho 3.8\nexit 1\n")
        Path(old).chmod(0o755)
    hosts["npu_node"]["hosts"]["node-fault"]["ascend_audit_venv_python"] = old
    inventory.write_text(json.dumps(hosts))
    out = play(inventory, fleet)
    log = out.stdout + out.stderr
    assert out.returncode != 0, log
    assert "is Python 3.8: ascend-audit needs Python 3.9" in " ".join(log.split()), log
    assert not (tmp_path / "nodes" / "node-fault" / "opt" / "venv").exists()


def test_shipped_config_keeps_host_key_checking_on():
    """Root over SSH: the shipped ansible.cfg never turns host-key checking off; the README says
    how to add new nodes' keys (or switch it off once, knowingly)."""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(PLAYBOOK.parent / "ansible.cfg")
    assert cfg.get("defaults", "host_key_checking", fallback="True").lower() not in (
        "false",
        "no",
        "0",
        "off",
    )
    readme = (REPO / "deploy" / "README.md").read_text(encoding="utf-8")
    assert "ssh-keyscan" in readme and "ANSIBLE_HOST_KEY_CHECKING=False" in readme


def test_role_and_play_are_ansible_lint_clean():
    """ansible-lint (production profile) has no finding on deploy/ansible."""
    lint = shutil.which("ansible-lint") or str(Path(sys.executable).parent / "ansible-lint")
    if not os.access(lint, os.X_OK):
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("ansible-lint is not installed in CI (.ci/setup-peers installs it)")
        pytest.skip("ansible-lint is not installed (pip install ansible-lint)")
    out = subprocess.run(
        [lint, "--offline", "--nocolor", "--profile", "production", "."],
        cwd=PLAYBOOK.parent,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, ANSIBLE_HOME=str(Path(tempfile.mkdtemp(prefix="ansible-lint-")))),
    )
    assert out.returncode == 0, out.stdout + out.stderr
