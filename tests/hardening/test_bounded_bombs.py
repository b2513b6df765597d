"""Item 7: bundle bombs (huge GNU long names and PAX headers, too many members, duplicate
manifests) and a gigantic single-line CSV are refused or read in bounded memory; 64 hung NPUs
end within 3 x --timeout + 5 s."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import tarfile
import time
from pathlib import Path

import pytest
from fakenode import FakeNpu, npu_smi_outputs
from hardening.helpers import PY, REPO, audit_process, fake_node

BOMB = 256 * 1024 * 1024
RSS_BOUND_MB = 200  # an unpacker that reads one 256 MiB header whole is far above this
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "atlas-800t-a2-ready"


_LAUNCHER = """
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
out = p.stdout.read()
_, status, usage = os.wait4(p.pid, 0)
sys.stdout.buffer.write(b"%d %d\\n" % (usage.ru_maxrss, os.waitstatus_to_exitcode(status)) + out)
"""


def _peak_rss_mb(args: list[str]) -> tuple[float, int, str]:
    """(peak RSS MiB, exit code, output) of `python -m ascend_audit ARGS`, started by a small
    launcher so the child's peak is its own, not that of a large test process it forked from."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    res = subprocess.run(
        [PY, "-c", _LAUNCHER, PY, "-m", "ascend_audit", *args],
        capture_output=True,
        env=env,
        cwd=str(REPO),
        timeout=600,
    )
    head, _, out = res.stdout.partition(b"\n")
    rss, rc = (int(x) for x in head.split())
    return rss / 1024, rc, out.decode(errors="replace")


def _header(name: bytes, size: int, kind: bytes) -> bytes:
    h = bytearray(512)
    h[0 : len(name)] = name
    h[100:108] = b"0000644\0"
    h[108:116] = h[116:124] = b"0000000\0"
    h[124:136] = f"{size:011o}\0".encode()
    h[136:148] = b"00000000000\0"
    h[156:157] = kind
    h[257:265] = b"ustar  \0"  # GNU
    h[148:156] = b" " * 8
    h[148:156] = f"{sum(h):06o}\0 ".encode()
    return bytes(h)


def _write(path: Path, chunks) -> Path:
    with gzip.open(path, "wb", compresslevel=1) as gz:
        for c in chunks:
            gz.write(c)
        gz.write(b"\0" * 1024)
    return path


def _zeros(n: int):
    block = b"\0" * (1 << 20)
    while n > 0:
        yield block[: min(n, len(block))]
        n -= len(block)


def _long_name_bomb(tmp: Path) -> Path:
    return _write(
        tmp / "longname.tar.gz",
        [_header(b"././@LongLink", BOMB, b"L"), *_zeros(BOMB), _header(b"x", 0, b"0")],
    )


def _pax_bomb(tmp: Path) -> Path:
    return _write(
        tmp / "pax.tar.gz",
        [_header(b"././@PaxHeader", BOMB, b"x"), *_zeros(BOMB), _header(b"x", 0, b"0")],
    )


def _many_members(tmp: Path) -> Path:
    return _write(
        tmp / "members.tar.gz",
        (_header(f"f{i:07d}".encode(), 0, b"0") for i in range(100_001)),
    )


def _two_manifests(tmp: Path) -> Path:
    path = tmp / "dup.tar.gz"
    data = (EXAMPLE / "manifest.json").read_bytes()
    with tarfile.open(path, "w:gz") as tf:
        for arc in ("manifest.json", "./manifest.json"):
            info = tarfile.TarInfo(arc)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize(
    "build, words",
    [
        (_long_name_bomb, "extended header"),
        (_pax_bomb, "extended header"),
        (_many_members, "more than 100000 members"),
        (_two_manifests, "appears twice"),
    ],
    ids=["gnu-long-name", "pax-header", "member-count", "duplicate-manifest"],
)
def test_bundle_bombs_are_refused_in_bounded_memory(tmp_path, build, words):
    bomb = build(tmp_path)
    t0 = time.monotonic()
    rss, rc, out = _peak_rss_mb(["run", "--snapshot", str(bomb)])
    assert rc == 2, out[-600:]
    assert str(bomb) in out and words in out, out[-600:]
    assert rss < RSS_BOUND_MB, f"peak RSS {rss:.0f} MB"
    print(f"{bomb.name}: peak RSS {rss:.0f} MB, {time.monotonic() - t0:.1f} s")


def test_a_gigantic_single_line_csv_is_read_in_bounded_memory(tmp_path):
    trace = tmp_path / "big_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    trace.mkdir(parents=True)
    with (trace / "kernel_details.csv").open("wb") as fh:
        fh.write(b"Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n")
        for chunk in _zeros(BOMB):
            fh.write(chunk.replace(b"\0", b"A"))  # one field, no newline, 256 MiB
    args = ["run", "--sysroot", str(tmp_path), "--layers", "operator", "--no-gate"]
    rss, rc, out = _peak_rss_mb([*args, "--trace", str(trace.parent)])
    assert rc in (0, 1), out[-800:]
    assert "Traceback" not in out
    assert rss < RSS_BOUND_MB, f"peak RSS {rss:.0f} MB"
    print(f"single-line CSV of {BOMB >> 20} MiB: peak RSS {rss:.0f} MB")


def test_64_hung_npus_end_within_three_timeouts_and_five_seconds(tmp_path):
    npus = [FakeNpu(i, f"0000:{0x10 + i:02X}:00.0") for i in range(64)]
    answers: dict = {"info": npu_smi_outputs(npus)["info"], "*": {"sleep": 600}}
    root, _bindir, env = fake_node(tmp_path, answers)
    timeout = 1.0
    t0 = time.monotonic()
    res = audit_process(
        "run", "--sysroot", str(root), "--timeout", str(timeout), "--json", "-", env=env
    )
    wall = time.monotonic() - t0
    assert res.returncode == 1, res.stderr[-800:]
    report = json.loads(res.stdout)
    assert any("did not finish" in json.dumps(r) for r in report["results"])
    assert wall < 3 * timeout + 5, f"{wall:.1f} s"
    print(f"64 hung NPUs at --timeout {timeout:g}: {wall:.1f} s")
