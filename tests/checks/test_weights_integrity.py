"""FWK-WGT-002 through the CLI: index, headers, manifests; snapshots keep results, not files."""

from __future__ import annotations

import json
import os
import struct
import subprocess
from pathlib import Path
from typing import Any

from clirun import cli as run_cli


def shard(path: Path, names: list[str], n: int = 4096) -> None:
    """A valid safetensors file with F32 tensors of n elements each."""
    header, off = {}, 0
    for name in names:
        header[name] = {"dtype": "F32", "shape": [n], "data_offsets": [off, off + 4 * n]}
        off += 4 * n
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + os.urandom(off))


def model(tmp_path: Path) -> Path:
    d = tmp_path / "model"
    d.mkdir()
    shard(d / "model-00001-of-00002.safetensors", ["a", "b"])
    shard(d / "model-00002-of-00002.safetensors", ["c"])
    index = {
        "metadata": {"total_size": 3 * 4 * 4096},
        "weight_map": {
            "a": "model-00001-of-00002.safetensors",
            "b": "model-00001-of-00002.safetensors",
            "c": "model-00002-of-00002.safetensors",
        },
    }
    (d / "model.safetensors.index.json").write_text(json.dumps(index))
    (d / "config.json").write_text("{}")
    return d


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args)


def wgt(tmp_path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / "r.json"
    cli(
        "run",
        "--sysroot",
        str(tmp_path),
        "--layers",
        "framework",
        "--only",
        "FWK-WGT-002",
        "--no-gate",
        "--json",
        str(out),
        *args,
    )
    return json.loads(out.read_text())["results"][0]


def test_intact_model_passes_with_metrics(tmp_path):
    r = wgt(tmp_path, "--model-dir", str(model(tmp_path)))
    assert r["status"] == "PASS", r["summary"]
    assert r["metrics"]["shards"] == 2 and r["metrics"]["throughput_mb_s"] is not None


def test_missing_shard_fails(tmp_path):
    d = model(tmp_path)
    (d / "model-00002-of-00002.safetensors").unlink()
    r = wgt(tmp_path, "--model-dir", str(d))
    assert r["status"] == "FAIL"
    assert "shard model-00002-of-00002.safetensors named by the index is missing" in r["summary"]


def test_truncated_shard_fails(tmp_path):
    d = model(tmp_path)
    p = d / "model-00001-of-00002.safetensors"
    p.write_bytes(p.read_bytes()[:-100])
    r = wgt(tmp_path, "--model-dir", str(d))
    assert r["status"] == "FAIL"
    assert "model-00001-of-00002.safetensors" in r["summary"]


def test_no_model_dir_skips_and_absent_dir_fails(tmp_path):
    assert wgt(tmp_path)["status"] == "SKIP"
    r = wgt(tmp_path, "--model-dir", str(tmp_path / "nope"))
    assert r["status"] == "FAIL" and "does not exist" in r["summary"]


def test_manifest_verify_passes_then_catches_a_flipped_block(tmp_path):
    d = model(tmp_path)
    man = tmp_path / "m.json"
    proc = cli("weights-manifest", str(d), "-o", str(man), "--block-size", "4096")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(man.read_text())["files"]
    r = wgt(tmp_path, "--model-dir", str(d), "--verify-weights", "--weights-manifest", str(man))
    assert r["status"] == "PASS", r["summary"]
    assert "sampled hashes match" in r["summary"]
    p = d / "model-00002-of-00002.safetensors"
    data = bytearray(p.read_bytes())
    data[-10] ^= 0xFF
    p.write_bytes(bytes(data))
    r = wgt(tmp_path, "--model-dir", str(d), "--verify-weights", "--weights-manifest", str(man))
    assert r["status"] == "FAIL"
    assert "model-00002-of-00002.safetensors: block at offset" in r["summary"]


def test_manifest_in_model_dir_is_found_and_ignored_as_a_file(tmp_path):
    d = model(tmp_path)
    cli("weights-manifest", str(d), "-o", str(d / "ascend-audit-manifest.json"))
    r = wgt(tmp_path, "--model-dir", str(d), "--verify-weights")
    assert r["status"] == "PASS", r["summary"]


def test_verify_without_manifest_is_an_error(tmp_path):
    r = wgt(tmp_path, "--model-dir", str(model(tmp_path)), "--verify-weights")
    assert r["status"] == "ERROR"
    assert "no manifest" in r["summary"]


def test_snapshot_keeps_the_result_not_the_weights(tmp_path):
    d = model(tmp_path)
    bundle = tmp_path / "snap"
    proc = cli("collect", "-o", str(bundle), "--sysroot", str(tmp_path), "--model-dir", str(d))
    assert bundle.is_dir(), proc.stdout + proc.stderr
    sizes = [p.stat().st_size for p in bundle.rglob("*") if p.is_file()]
    assert not any(p.name.endswith(".safetensors") for p in bundle.rglob("*"))
    assert max(sizes) < 2_000_000
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert any(k.startswith("weights_integrity:") for k in manifest["cached_facts"])
    (d / "model-00001-of-00002.safetensors").unlink()  # replay must not look at the node again
    out = tmp_path / "replay.json"
    cli(
        "run",
        "--snapshot",
        str(bundle),
        "--layers",
        "framework",
        "--only",
        "FWK-WGT-002",
        "--no-gate",
        "--json",
        str(out),
    )
    r = json.loads(out.read_text())["results"][0]
    assert r["status"] == "PASS", r["summary"]
