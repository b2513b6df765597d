"""Hostile snapshot bundles are refused with exit 2 and a message naming the problem, and nothing
is written anywhere: not beside the bundle, not where `../` or an absolute path points, and no
unpacked temp directory is left behind (TMPDIR is checked)."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest
from hardening.helpers import REPO, audit, no_traceback, tree_state

from ascend_audit.host import bundle as bundle_format
from ascend_audit.host.bundle import SnapshotError, extract_bundle
from ascend_audit.host.snapshot import SnapshotHost

EXAMPLE = REPO / "examples" / "atlas-800t-a2-ready"


def _manifest() -> dict:
    return json.loads((EXAMPLE / "manifest.json").read_text())


def _add_bytes(tf: tarfile.TarFile, name: str, data: bytes, **kw) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for k, v in kw.items():
        setattr(info, k, v)
    tf.addfile(info, io.BytesIO(data))


def _bundle(path: Path, extra=None, manifest: dict | None = None) -> Path:
    """The example bundle as a .tar.gz, plus hostile members from `extra(tf)`."""
    with tarfile.open(path, "w:gz") as tf:
        for p in sorted(EXAMPLE.rglob("*")):
            rel = p.relative_to(EXAMPLE).as_posix()
            if p.is_file() and rel != "manifest.json":
                tf.add(p, arcname=rel, recursive=False)
        _add_bytes(tf, "manifest.json", json.dumps(manifest or _manifest()).encode())
        if extra:
            extra(tf)
    return path


def _dotdot(tf):
    _add_bytes(tf, "../escaped.txt", b"pwned")


def _dotdot_inner(tf):
    _add_bytes(tf, "files/../../escaped.txt", b"pwned")


def _absolute(tf, target: str = "/tmp/ascend-audit-hardening-escaped.txt"):
    _add_bytes(tf, target, b"pwned")


def _symlink(tf):
    info = tarfile.TarInfo("files/etc/shadow")
    info.type, info.linkname = tarfile.SYMTYPE, "/etc/shadow"
    tf.addfile(info)


def _hardlink(tf):
    info = tarfile.TarInfo("files/hard")
    info.type, info.linkname = tarfile.LNKTYPE, "/etc/passwd"
    tf.addfile(info)


def _device(tf):
    info = tarfile.TarInfo("files/dev/sda")
    info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 8, 0
    tf.addfile(info)


def _fifo(tf):
    info = tarfile.TarInfo("files/fifo")
    info.type = tarfile.FIFOTYPE
    tf.addfile(info)


class _Zeros(io.RawIOBase):
    def __init__(self, n):
        self.left = n

    def readable(self):
        return True

    def readinto(self, b):
        n = min(len(b), self.left)
        b[:n] = bytes(n)
        self.left -= n
        return n


def _bomb(tf):
    # 80 MiB of zeros packs into well under 1 MiB: a ratio above 200 beyond 64 MiB is a bomb.
    info = tarfile.TarInfo("inputs/bomb.bin")
    info.size = 80 * 1024 * 1024
    tf.addfile(info, io.BufferedReader(_Zeros(info.size)))


HOSTILE = {
    "dotdot": (_dotdot, "points outside the bundle"),
    "dotdot_inner": (_dotdot_inner, "points outside the bundle"),
    "absolute": (_absolute, "points outside the bundle"),
    "symlink": (_symlink, "link or device file"),
    "hardlink": (_hardlink, "link or device file"),
    "device": (_device, "link or device file"),
    "fifo": (_fifo, "link or device file"),
    "bomb": (_bomb, "looks like a bomb"),
}


def _run_refused(tmp_path: Path, bundle: Path, words: str):
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    outdir = tmp_path / "out"
    outdir.mkdir()
    before = tree_state(tmp_path)
    env = dict(os.environ, TMPDIR=str(tmpdir))
    proc = audit("run", "--snapshot", str(bundle), "--json", str(outdir / "r.json"), env=env)
    no_traceback(proc)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert words in proc.stderr and str(bundle) in proc.stderr, proc.stderr
    assert tree_state(tmp_path) == before, "the refused bundle wrote files"
    assert not list(tmpdir.iterdir()), "an unpacked temp dir was left behind"
    assert not (tmp_path.parent / "escaped.txt").exists()
    return proc


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_bundle_is_refused_naming_the_problem(tmp_path, kind):
    build, words = HOSTILE[kind]
    bundle = _bundle(tmp_path / f"{kind}.tar.gz", build)
    escaped = Path("/tmp/ascend-audit-hardening-escaped.txt")
    escaped.unlink(missing_ok=True)
    _run_refused(tmp_path, bundle, words)
    assert not escaped.exists()


def test_bomb_by_declared_size_is_refused_before_unpacking(tmp_path, monkeypatch):
    """A member declaring more than MAX_BUNDLE_BYTES is refused before a byte is written."""
    monkeypatch.setattr(bundle_format, "MAX_BUNDLE_BYTES", 1024 * 1024)
    bundle = tmp_path / "big.tar.gz"
    with tarfile.open(bundle, "w:gz") as tf:
        info = tarfile.TarInfo("inputs/big.bin")
        info.size = 2 * 1024 * 1024
        tf.addfile(info, io.BufferedReader(_Zeros(info.size)))
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(SnapshotError, match="bomb"):
        extract_bundle(str(bundle), str(dest))
    assert not list(dest.iterdir())


def test_member_longer_than_declared_is_refused(tmp_path, monkeypatch):
    """A stream that yields more than the header declares (a lying tar) stops the extraction."""
    bundle = _bundle(tmp_path / "b.tar.gz")
    real = tarfile.TarFile.extractfile

    def longer(self, member):
        f = real(self, member)
        if f is None or not member.name.startswith("commands/"):
            return f
        return io.BufferedReader(io.BytesIO(f.read() + b"x" * (member.size + 10)))

    monkeypatch.setattr(tarfile.TarFile, "extractfile", longer)
    with pytest.raises(SnapshotError, match="larger than declared"):
        extract_bundle(str(bundle), str(tmp_path / "dest"))


LYING = {
    "missing_member": (
        lambda m: m["commands"][0].update(stdout="commands/9999.out"),
        "which the bundle does not hold",
    ),
    "escaping_member": (
        lambda m: m["commands"][0].update(stdout="../../../../etc/passwd"),
        "outside the bundle",
    ),
    "absolute_member": (
        lambda m: m["files"].update({"/x": {"content": "/etc/passwd"}}),
        "outside the bundle",
    ),
    "dir_as_content": (
        lambda m: m["commands"][0].update(stdout="commands"),
        "which the bundle does not hold",
    ),
    "newer_format": (lambda m: m.update(format_version=99), "newer than this ascend-audit"),
    "not_a_snapshot": (lambda m: m.update(format="something-else"), "not an ascend-audit snapshot"),
    "commands_not_list": (lambda m: m.update(commands={"a": 1}), "commands is not a list"),
    "argv_not_strings": (lambda m: m["commands"][0].update(argv=[1, 2]), "not a list of strings"),
    "stats_garbage": (
        lambda m: m.update(stats={"/dev/davinci0": {"mode": 5}}),
        "not a stat record",
    ),
    "rc_not_int": (lambda m: m["commands"][0].update(rc="0"), "rc is not an integer"),
    "duration_not_number": (
        lambda m: m["commands"][0].update(duration_ms="fast"),
        "duration_ms is not a number",
    ),
    "files_not_object": (lambda m: m.update(files=[1]), "files is not an object"),
    "file_record_garbage": (
        lambda m: m["files"].update({"/etc/os-release": 7}),
        "is not a file record",
    ),
    "dir_names_garbage": (lambda m: m.update(dirs={"/dev": [1]}), "is not a list of names"),
    "link_not_string": (lambda m: m.update(links={"/a": 5}), "is not a string"),
    "processes_garbage": (lambda m: m.update(processes=[{"pid": "x"}]), "not a process record"),
    "gaps_not_list": (lambda m: m.update(process_gaps={"a": 1}), "process_gaps is not a list"),
    "udev_garbage": (lambda m: m.update(udev={"pci": [1]}), "is not a list of devices"),
    "facts_not_object": (lambda m: m.update(cached_facts=[1]), "cached_facts is not an object"),
    "policy_not_string": (lambda m: m.update(policy=5), "policy/sysroot is not a string"),
}


@pytest.mark.parametrize("kind", sorted(LYING))
def test_lying_manifest_is_refused(tmp_path, kind):
    change, words = LYING[kind]
    m = _manifest()
    change(m)
    bundle = _bundle(tmp_path / f"{kind}.tar.gz", manifest=m)
    _run_refused(tmp_path, bundle, words)
    # the same manifest in a bundle directory is refused the same way, in-process
    d = tmp_path / "dir"
    shutil.copytree(EXAMPLE, d)
    (d / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(SnapshotError, match=words.split()[0]):
        SnapshotHost(str(d))


def test_symlinked_member_in_a_bundle_directory_is_refused(tmp_path):
    d = tmp_path / "dir"
    shutil.copytree(EXAMPLE, d)
    m = _manifest()
    target = d / m["commands"][0]["stdout"]
    target.unlink()
    target.symlink_to("/etc/passwd")
    with pytest.raises(SnapshotError, match="does not hold"):
        SnapshotHost(str(d))


@pytest.mark.parametrize(
    "content",
    [b"", b"not a tarball", gzip.compress(b"x" * 1000, mtime=0)],
    ids=["empty", "text", "gzip-not-tar"],  # stable ids: xdist workers must collect alike
)
def test_garbage_files_are_refused(tmp_path, content):
    bundle = tmp_path / "garbage.tar.gz"
    bundle.write_bytes(content)
    _run_refused(tmp_path, bundle, "snapshot")


def test_a_good_bundle_still_replays(tmp_path):
    """The control: the same builder without hostile members gives a report (exit 0 or 1)."""
    bundle = _bundle(tmp_path / "good.tar.gz")
    proc = audit("run", "--snapshot", str(bundle), "-q")
    no_traceback(proc)
    assert proc.returncode in (0, 1), proc.stderr
