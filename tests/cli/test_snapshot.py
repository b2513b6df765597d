"""Record and replay: `collect` then `run --snapshot` gives the same report; bad bundles refused."""

from __future__ import annotations

import io
import json
import os
import tarfile

from clirun import cli as run_cli
from fakenode import atlas_800_a2, npu_smi_outputs
from standins import node_env, standin


def audit(*args, env=None):
    return run_cli(*args, env=env or dict(os.environ))


def _fake_node(tmp_path):
    root, bindir = tmp_path / "root", tmp_path / "bin"
    (root / "dev").mkdir(parents=True)
    for i in range(8):
        (root / "dev" / f"davinci{i}").write_text("")
    standin(bindir, "npu-smi", npu_smi_outputs(atlas_800_a2()))
    return root, bindir


def _comparable(report: dict) -> dict:
    """The report without what legitimately differs between two runs: times and where it ran."""

    def strip(result):
        r = dict(result, duration_ms=0)
        r["evidence"] = [
            dict(e, values={k: v for k, v in e["values"].items() if k != "duration_ms"})
            for e in r["evidence"]
        ]
        return r

    return {
        "verdict": report["verdict"],
        "layers": report["layers"],
        "results": [strip(r) for r in report["results"]],
        "inventory": report["inventory"],
        "host": report["host"],
    }


def test_collect_then_replay_reproduces_the_report(tmp_path):
    root, bindir = _fake_node(tmp_path)
    env = node_env(bindir)
    live = audit("run", "--sysroot", str(root), "--json", str(tmp_path / "live.json"), env=env)
    bundle = tmp_path / "node.tar.gz"
    col = audit("collect", "--sysroot", str(root), "-o", str(bundle), env=env)
    assert col.returncode in (0, 1), col.stderr
    assert bundle.is_file() and "snapshot written" in col.stdout
    # Replay on a machine without the stand-ins: only the bundle answers.
    replay = audit(
        "run",
        "--snapshot",
        str(bundle),
        "--json",
        str(tmp_path / "replay.json"),
        env=dict(os.environ, PATH="/usr/bin:/bin"),
    )
    assert replay.returncode == live.returncode, replay.stdout + replay.stderr
    a = json.loads((tmp_path / "live.json").read_text())
    b = json.loads((tmp_path / "replay.json").read_text())
    assert _comparable(a) == _comparable(b)
    assert b["inputs"]["host"] == "snapshot"
    assert len(b["inventory"]["npus"]) == 8


def test_collect_to_a_directory_is_replayable(tmp_path):
    root, bindir = _fake_node(tmp_path)
    out = tmp_path / "bundle-dir"
    col = audit("collect", "--sysroot", str(root), "-o", str(out), env=node_env(bindir))
    assert (out / "manifest.json").is_file(), col.stderr
    replay = audit("run", "--snapshot", str(out), env=dict(os.environ, PATH="/usr/bin:/bin"))
    assert "8 NPUs / 8 chips" in replay.stdout


def test_run_records_its_bundle_in_the_same_audit(tmp_path):
    """`run --record` (the Ansible role's one audit): the report and the bundle of one run, and
    replaying the bundle gives that report."""
    root, bindir = _fake_node(tmp_path)
    env = node_env(bindir)
    bundle = tmp_path / "node.tar.gz"
    live = audit(
        "run",
        "--sysroot",
        str(root),
        "--json",
        str(tmp_path / "live.json"),
        "--record",
        str(bundle),
        "--prometheus",
        str(tmp_path / "a.prom"),
        env=env,
    )
    assert live.returncode in (0, 1), live.stdout + live.stderr
    assert bundle.is_file() and "snapshot written" in live.stdout
    assert (tmp_path / "a.prom").is_file()
    replay = audit(
        "run",
        "--snapshot",
        str(bundle),
        "--json",
        str(tmp_path / "replay.json"),
        env=dict(os.environ, PATH="/usr/bin:/bin"),
    )
    assert replay.returncode == live.returncode, replay.stdout + replay.stderr
    a = json.loads((tmp_path / "live.json").read_text())
    b = json.loads((tmp_path / "replay.json").read_text())
    assert _comparable(a) == _comparable(b)


def test_record_is_refused_on_a_replay(tmp_path):
    out = audit("run", "--example", "atlas-800t-a2-ready", "--record", str(tmp_path / "b.tar.gz"))
    assert out.returncode == 2 and "--record" in out.stderr
    assert not (tmp_path / "b.tar.gz").exists()


def _tar(path, members: dict[str, bytes], links=()):
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        for name, target in links:
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tf.addfile(info)


def _manifest(**extra) -> bytes:
    base = {"format": "ascend-audit-snapshot", "format_version": 1, "commands": [], "files": {}}
    base.update(extra)
    return json.dumps(base).encode()


def test_bad_bundles_are_refused_with_a_clear_message(tmp_path):
    cases = {
        "newer.tar.gz": ({"manifest.json": _manifest(format_version=99)}, (), "newer than this"),
        "escape.tar.gz": (
            {"manifest.json": _manifest(), "../evil": b"x"},
            (),
            "outside the bundle",
        ),
        "abs.tar.gz": ({"manifest.json": _manifest(), "/etc/evil": b"x"}, (), "outside the bundle"),
        "link.tar.gz": ({"manifest.json": _manifest()}, (("files/x", "/etc/shadow"),), "link"),
        "lies.tar.gz": (
            {"manifest.json": _manifest(files={"/etc/x": {"content": "files/etc/x"}})},
            (),
            "does not hold",
        ),
        "notjson.tar.gz": ({"manifest.json": b"{nope"}, (), "not valid JSON"),
    }
    for name, (members, links, needle) in cases.items():
        path = tmp_path / name
        _tar(path, members, links)
        out = audit("run", "--snapshot", str(path))
        assert out.returncode == 2, (name, out.stdout, out.stderr)
        assert needle in out.stderr, (name, out.stderr)
        assert not (tmp_path / "evil").exists()
