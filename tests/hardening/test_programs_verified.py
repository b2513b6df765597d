"""Every program the auditor runs is verified first (host/trust.py): found on an absolute PATH
entry, every link followed, and the file, each link and every directory on the way out of reach
of users other than root and the auditing user. Real files in temporary directories, really run:
a refused stand-in would leave a marker file behind.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from standins import run_node
from sysroot import NPU_BDFS, healthy_910b_node

from ascend_audit.gather.interpreter import serving_interpreter
from ascend_audit.host.base import ProcessInfo
from ascend_audit.host.live import LiveHost
from ascend_audit.host.trust import (
    MAX_INTERPRETERS,
    env_program,
    search_dirs,
    shebang,
    verify_program,
)

NOBODY = 65534
AS_ROOT = os.geteuid() == 0


def _planted(bindir: Path, name: str = "npu-smi") -> tuple[Path, Path]:
    """A stand-in that would write a marker file when run; returns (program, marker)."""
    bindir.mkdir(parents=True, exist_ok=True)
    marker = bindir.parent / f"{name}-ran"
    prog = bindir / name
    prog.write_text(f"#!/bin/sh\necho ran > {marker}\necho planted\n")
    prog.chmod(0o755)
    return prog, marker


def _host(*path: Path | str) -> LiveHost:
    return LiveHost("/", timeout=5.0, environ={"PATH": ":".join(map(str, path))})


def _hostile_dir(d: Path, how: str) -> str:
    """Make `d` replaceable by another user; returns the words the refusal names it by."""
    if how == "owned-by-nobody":
        if not AS_ROOT:
            pytest.skip("giving a directory to uid 65534 needs root")
        os.chown(d, NOBODY, NOBODY)
        return f"the directory {d} is writable by uid {NOBODY}"
    if how == "world-writable":
        d.chmod(0o777)
        return f"the directory {d} is writable by every user (mode 0777)"
    d.chmod(0o775)
    if not AS_ROOT:
        pytest.skip("giving a directory to group 65534 needs root")
    os.chown(d, os.geteuid(), NOBODY)
    return f"the directory {d} is writable by group"


@pytest.mark.parametrize("how", ["owned-by-nobody", "world-writable", "group-writable"])
def test_a_stand_in_in_a_directory_another_user_controls_is_refused_and_not_run(tmp_path, how):
    prog, marker = _planted(tmp_path / "evil")
    words = _hostile_dir(prog.parent, how)
    res = _host(prog.parent, "/usr/bin", "/bin").run(["npu-smi", "info"])
    assert not marker.exists(), "the planted npu-smi was executed"
    assert res.status == "refused", res
    assert res.error.startswith(f"refused {prog}: "), res.error
    assert words in res.error, res.error
    assert "was not run" in res.describe() and words in res.describe()


def test_a_symlink_to_a_world_writable_program_is_refused(tmp_path):
    prog, marker = _planted(tmp_path / "store")
    prog.chmod(0o777)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "npu-smi").symlink_to(prog)
    res = _host(bindir).run(["npu-smi", "info"])
    assert not marker.exists(), "the link's world-writable target was executed"
    assert res.status == "refused"
    assert f"the file {prog} is writable by every user (mode 0777)" in res.error, res.error


def test_a_symlink_into_a_directory_another_user_controls_is_refused(tmp_path):
    prog, marker = _planted(tmp_path / "store")
    (tmp_path / "store").chmod(0o777)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "npu-smi").symlink_to(prog)
    res = _host(bindir).run(["npu-smi", "info"])
    assert not marker.exists()
    assert res.status == "refused" and f"the directory {prog.parent} is writable" in res.error


def test_an_absolute_argv0_is_verified_too(tmp_path):
    prog, marker = _planted(tmp_path / "evil")
    prog.parent.chmod(0o777)
    res = _host("/usr/bin").run([str(prog), "-i", "0"])
    assert not marker.exists() and res.status == "refused", res


@pytest.mark.parametrize("entry", ["", ".", "bin"])
def test_relative_path_entries_are_never_searched(tmp_path, monkeypatch, entry):
    cwd = tmp_path / "cwd"
    prog, marker = _planted(cwd / "bin")
    (cwd / "npu-smi").symlink_to(prog)  # what "" and "." would find
    monkeypatch.chdir(cwd)
    host = LiveHost("/", timeout=5.0, environ={"PATH": f"{entry}:/nonexistent-dir"})
    assert host.which("npu-smi") is None
    res = host.run(["npu-smi", "info"])
    assert not marker.exists(), f"PATH entry {entry!r} was searched"
    assert res.status == "missing" and res.error == "not found on PATH"
    assert search_dirs(f"{entry}:/usr/bin::.:bin:/bin") == ["/usr/bin", "/bin"]


def test_a_program_owned_by_the_auditor_in_a_0755_directory_runs(tmp_path):
    prog, marker = _planted(tmp_path / "bin")
    prog.parent.chmod(0o755)
    if AS_ROOT:
        os.chown(prog, 0, 0)
        os.chown(prog.parent, 0, 0)
    res = _host(prog.parent, "/usr/bin", "/bin").run(["npu-smi", "info"])
    assert res.status == "ok", res
    assert res.stdout == "planted\n" and marker.read_text() == "ran\n"
    assert res.argv == ("npu-smi", "info")  # evidence names the command as it was asked for


def test_the_child_gets_no_relative_path_entries(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    prog = bindir / "show-path"
    prog.write_text('#!/bin/sh\necho "$PATH"\n')
    prog.chmod(0o755)
    host = LiveHost("/", timeout=5.0, environ={"PATH": f".:{bindir}::bin:/usr/bin:/bin"})
    res = host.run(["show-path"])
    assert res.ok, res
    assert res.stdout.strip() == f"{bindir}:/usr/bin:/bin"


# ---------------------------------------------------------------------------------------------
# a trusted script's #! interpreter is a program the kernel runs: verified the same way


def _script(bindir: Path, first_line: str, name: str = "npu-smi") -> tuple[Path, Path]:
    """A trusted stand-in whose interpreter line is `first_line`; returns (program, marker)."""
    prog, marker = _planted(bindir, name)
    prog.write_text(f"{first_line}\necho ran > {marker}\necho planted\n")
    return prog, marker


def _evil_interpreter(d: Path) -> Path:
    """A working copy of /bin/sh in a directory every user may write."""
    d.mkdir(parents=True)
    d.chmod(0o777)
    sh = d / "sh"
    sh.write_bytes(Path("/bin/sh").resolve().read_bytes())
    sh.chmod(0o755)
    return sh


def test_a_script_whose_interpreter_another_user_controls_is_refused(tmp_path):
    sh = _evil_interpreter(tmp_path / "evil")
    prog, marker = _script(tmp_path / "bin", f"#!{sh}")
    res = _host(prog.parent, "/usr/bin", "/bin").run(["npu-smi", "info"])
    assert not marker.exists(), "the script ran through an interpreter another user controls"
    assert res.status == "refused", res
    assert f"the interpreter of {prog}: the directory {sh.parent} is writable by every user" in (
        res.error
    ), res.error


def test_the_program_env_would_find_is_verified_too(tmp_path):
    sh = _evil_interpreter(tmp_path / "evil")
    os.rename(sh, sh.parent / "evil-sh")
    prog, marker = _script(tmp_path / "bin", "#!/usr/bin/env -S evil-sh -e")
    res = _host(prog.parent, sh.parent, "/usr/bin", "/bin").run(["npu-smi", "info"])
    assert not marker.exists()
    assert res.status == "refused", res
    assert f"the directory {sh.parent} is writable by every user" in res.error, res.error
    gone = _host(prog.parent, "/usr/bin", "/bin").run(["npu-smi", "info"])
    assert gone.status == "refused" and "not on PATH" in gone.error, gone


def test_a_chain_of_trusted_interpreters_runs(tmp_path):
    inner, _ = _script(tmp_path / "lib", "#!/bin/sh", name="inner-sh")
    inner.write_text('#!/usr/bin/env sh\nexec /bin/sh "$@"\n')
    prog, marker = _script(tmp_path / "bin", f"#!{inner}")
    res = _host(prog.parent, "/usr/bin", "/bin").run(["npu-smi", "info"])
    assert res.status == "ok", res
    assert marker.read_text() == "ran\n"


@pytest.mark.parametrize(
    ("first_line", "words"),
    [
        ("#!sh", "names 'sh' as its interpreter"),
        ("#!", "names an empty or over-long #! line"),
        ("#!/" + "x" * 300, "names an empty or over-long #! line"),
        ("#!/nonexistent/sh", "/nonexistent does not exist"),
    ],
)
def test_interpreter_lines_the_auditor_cannot_trust_are_refused(tmp_path, first_line, words):
    prog, marker = _script(tmp_path / "bin", first_line)
    res = _host(prog.parent, "/usr/bin", "/bin").run(["npu-smi", "info"])
    assert not marker.exists()
    assert res.status == "refused" and words in res.error, res.error


def test_shebang_is_split_as_the_kernel_splits_it():
    assert shebang(b"#! /bin/sh  -e -u \nrest") == ("/bin/sh", "-e -u")
    assert shebang(b"#!/usr/bin/env\tpython3\r\n") == ("/usr/bin/env", "python3")
    assert shebang(b"\x7fELF\x02\x01") is None
    assert shebang(b"") is None
    assert shebang(b"#!/bin/\xff\n") == ("/bin/\udcff", "")
    assert env_program("-S -u HOME python3 -u") == "python3"
    assert env_program("-i A=1 --chdir / python3") == "python3"
    assert env_program("-i") is None


def test_interpreters_nested_past_the_kernels_limit_are_refused(tmp_path):
    prev = "/bin/sh"
    for i in range(MAX_INTERPRETERS + 1):
        prev = str(_script(tmp_path / "lib", f"#!{prev}", name=f"level{i}")[0])
    prog, marker = _script(tmp_path / "bin", f"#!{prev}")
    res = _host(prog.parent, "/usr/bin", "/bin").run(["npu-smi", "info"])
    assert not marker.exists()
    assert res.status == "refused" and "nested #! interpreters" in res.error, res.error


# ---------------------------------------------------------------------------------------------
# the walk itself


def test_sticky_directories_and_root_group_write_are_trusted(tmp_path):
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    prog = sticky / "tool"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o775)  # group-writable, but the group is root's (or, unprivileged, ours)
    if AS_ROOT:
        os.chown(prog, 0, 0)
        verdict = verify_program(str(prog), (0,))
        assert verdict.ok and verdict.real == str(prog), verdict.refused
    else:
        prog.chmod(0o755)
        assert verify_program(str(prog), (0, os.geteuid())).ok


def test_a_link_in_a_sticky_directory_owned_by_another_user_is_refused(tmp_path):
    if not AS_ROOT:
        pytest.skip("a link owned by uid 65534 needs root to make")
    prog, _ = _planted(tmp_path / "bin")
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    link = sticky / "npu-smi"
    link.symlink_to(prog)
    os.lchown(link, NOBODY, NOBODY)  # in a sticky directory its owner may re-point it
    verdict = verify_program(str(link), (0,))
    assert not verdict.ok and f"the link {link} is owned by uid {NOBODY}" in verdict.why


@pytest.mark.parametrize("what", ["directory", "fifo", "not-executable", "loop", "relative"])
def test_what_is_not_a_regular_executable_is_refused(tmp_path, what):
    target = tmp_path / "x"
    if what == "directory":
        target.mkdir()
    elif what == "fifo":
        os.mkfifo(target)
    elif what == "not-executable":
        target.write_text("#!/bin/sh\n")
        target.chmod(0o644)
    elif what == "loop":
        target.symlink_to(tmp_path / "y")
        (tmp_path / "y").symlink_to(target)
    verdict = verify_program("x" if what == "relative" else str(target), (0, os.geteuid()))
    expected = {
        "directory": "is not a regular file (it is a dir)",
        "fifo": "is not a regular file (it is a other)",
        "not-executable": "is not executable (mode 0644)",
        "loop": "cannot be followed",
        "relative": "not an absolute path",
    }[what]
    assert not verdict.ok and expected in verdict.why, verdict.why


def test_the_interpreter_check_is_the_same_walk_links_included(tmp_path):
    """A venv's bin/python is a link: its target's directory is verified like a command's."""
    root = tmp_path / "node"
    real = root / "opt" / "py" / "bin"
    real.mkdir(parents=True)
    (real / "python3.11").write_text("")
    (real / "python3.11").chmod(0o755)
    venv = root / "srv" / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to("/opt/py/bin/python3.11")
    pdir = root / "proc" / "4242"
    pdir.mkdir(parents=True)
    (pdir / "exe").symlink_to("/opt/py/bin/python3.11")
    (pdir / "status").write_text("Name:\tpython\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n")
    proc = ProcessInfo(4242, "python", "", ("/srv/venv/bin/python", "-m", "vllm"), "root")
    host = LiveHost(str(root))
    assert serving_interpreter(host, proc).python == "/srv/venv/bin/python"
    real.chmod(0o777)
    found = serving_interpreter(host, proc)
    assert found.python is None
    assert "the directory /opt/py/bin is writable by every user" in found.refused


# ---------------------------------------------------------------------------------------------
# the refusal reaches the report


def _node(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "root"
    healthy_910b_node(root)
    (root / "etc").mkdir(exist_ok=True)
    (root / "etc" / "hccn.conf").write_text("address_0=192.0.2.80\n")
    bindir = tmp_path / "evil"
    return root, bindir


def test_a_refused_npu_smi_is_a_fail_naming_the_reason(tmp_path):
    root, bindir = _node(tmp_path)
    _, marker = _planted(bindir)
    bindir.chmod(0o777)
    report = run_node(root, bindir, only=("DRV-NPU-001",), layers=("driver",))
    r = next(x for x in report.results if x.id == "DRV-NPU-001")
    assert not marker.exists()
    assert r.status.value == "FAIL", r.summary
    assert r.summary.startswith(f"npu-smi was not run: refused {bindir}/npu-smi: "), r.summary
    assert f"the directory {bindir} is writable by every user" in r.summary
    ev = r.evidence[0]
    assert ev.values["status"] == "refused" and "writable by every user" in ev.values["error"]
    assert "namei -l" in (r.remediation or "")


def test_a_refused_hccn_tool_names_the_reason_once(tmp_path):
    root, bindir = _node(tmp_path)
    _planted(bindir, "npu-smi")  # refused too: the device ids come from /dev/davinci*
    _, marker = _planted(bindir, "hccn_tool")
    bindir.chmod(0o777)
    report = run_node(
        root,
        bindir,
        policy_text="[cluster]\nroce_required = true\n",
        only=("DRV-NET-001",),
        layers=("driver",),
    )
    r = next(x for x in report.results if x.id == "DRV-NET-001")
    assert not marker.exists()
    assert r.status.value == "FAIL", r.summary
    assert f"hccn_tool was not run: refused {bindir}/hccn_tool: " in r.summary, r.summary
    assert r.evidence and r.evidence[0].values["status"] == "refused"
    # said once, not once per device and subcommand
    assert r.summary.count("was not run") == 1 and len(NPU_BDFS) > 1


def test_a_python_given_with_dash_dash_python_is_verified_too(tmp_path):
    from ascend_audit.context import Context, Inputs
    from ascend_audit.gather.framework import probe
    from ascend_audit.policy import load_policy

    prog, marker = _planted(tmp_path / "venv" / "bin", "python3")
    prog.parent.chmod(0o777)
    ctx = Context(_host("/usr/bin", "/bin"), load_policy(None), Inputs(python=str(prog)))
    run = probe(ctx)
    assert not marker.exists(), "the planted --python was executed"
    assert run.result is not None and run.result.status == "refused"
    assert f"the directory {prog.parent} is writable by every user" in run.result.error


def _acl(*entries: tuple[int, int, int]) -> bytes:
    """A POSIX access ACL as the kernel stores it (version 2, then tag/perm/id entries)."""
    import struct

    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


def test_a_directory_an_acl_lets_another_user_write_is_refused(tmp_path):
    if not AS_ROOT:
        pytest.skip("a root-group directory (whose mode alone looks safe) needs root")
    prog, marker = _planted(tmp_path / "acl")
    os.chown(prog.parent, 0, 0)
    undefined = 0xFFFFFFFF
    try:  # user::rwx user:65534:rwx group::r-x mask::rwx other::r-x -> mode 0775, group root
        os.setxattr(
            prog.parent,
            "system.posix_acl_access",
            _acl(
                (1, 7, undefined),
                (2, 7, NOBODY),
                (4, 5, undefined),
                (16, 7, undefined),
                (32, 5, undefined),
            ),
        )
    except OSError as exc:
        pytest.skip(f"this filesystem keeps no POSIX ACLs ({exc.strerror})")
    assert prog.parent.stat().st_mode & 0o777 == 0o775
    res = _host(prog.parent).run(["npu-smi", "info"])
    assert not marker.exists(), "a program in a directory uid 65534 may write was executed"
    assert res.status == "refused"
    assert f"the directory {prog.parent} is writable by uid {NOBODY} through an ACL" in res.error
