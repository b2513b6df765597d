"""Tests for safetensors header checks, shard index checks, sampled hashes and manifests."""

from __future__ import annotations

import json
import os
import struct
import sys
from pathlib import Path

import pytest

from ascend_audit.facts.weights import (
    DTYPE_BITS,
    check_index,
    read_safetensors_header,
    sample_blocks,
    verify_manifest,
    write_manifest,
)

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _st(path: Path, tensors: dict, data: bytes | None = None, meta=None, hlen=None, raw=None):
    """Write a safetensors file; tensors = name -> (dtype, shape, begin, end)."""
    header = {
        n: {"dtype": d, "shape": s, "data_offsets": [b, e]} for n, (d, s, b, e) in tensors.items()
    }
    if meta is not None:
        header["__metadata__"] = meta
    blob = raw if raw is not None else json.dumps(header).encode()
    size = max((e for _d, _s, _b, e in tensors.values()), default=0)
    body = data if data is not None else bytes(i % 251 for i in range(size))
    path.write_bytes(struct.pack("<Q", len(blob) if hlen is None else hlen) + blob + body)
    return path


def _model(tmp_path: Path, shards: int = 2) -> Path:
    d = tmp_path / "model"
    d.mkdir()
    wm = {}
    total = 0
    for s in range(shards):
        name = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        _st(
            d / name,
            {f"w{s}.a": ("F16", [64, 64], 0, 8192), f"w{s}.b": ("F32", [10], 8192, 8232)},
            meta={"format": "pt"},
        )
        wm.update({f"w{s}.a": name, f"w{s}.b": name})
        total += 8232
    (d / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": wm})
    )
    (d / "config.json").write_text("{}")
    return d


# --------------------------------------------------------------------------------------------
# headers


def test_valid_header(tmp_path):
    p = _st(
        tmp_path / "a.safetensors",
        {"x": ("BF16", [2, 3], 0, 12), "y": ("I64", [1], 12, 20), "z": ("BOOL", [], 20, 21)},
        meta={"format": "pt"},
    )
    h = read_safetensors_header(p)
    assert h.ok, h.problems
    assert [t.name for t in h.tensors] == ["x", "y", "z"]
    assert h.tensor("x").shape == (2, 3) and h.tensor("x").nbytes == 12
    assert h.metadata == (("format", "pt"),) and h.data_size == 21
    assert h.file_size == 8 + h.header_len + 21 and len(h.header_sha256) == 64
    json.dumps(h.to_dict())


def test_dtype_sizes_including_fp8_and_sub_byte():
    assert {
        k: DTYPE_BITS[k] // 8
        for k in (
            "F64",
            "F32",
            "F16",
            "BF16",
            "I64",
            "I32",
            "I16",
            "I8",
            "U8",
            "BOOL",
            "F8_E4M3",
            "F8_E5M2",
        )
    } == {
        "F64": 8,
        "F32": 4,
        "F16": 2,
        "BF16": 2,
        "I64": 8,
        "I32": 4,
        "I16": 2,
        "I8": 1,
        "U8": 1,
        "BOOL": 1,
        "F8_E4M3": 1,
        "F8_E5M2": 1,
    }
    assert DTYPE_BITS["F4"] == 4


def test_truncated_file(tmp_path):
    p = _st(tmp_path / "t.safetensors", {"x": ("F32", [100], 0, 400)})
    data = p.read_bytes()
    p.write_bytes(data[:-100])
    h = read_safetensors_header(p)
    assert any("truncated" in m for m in h.problems)


def test_trailing_bytes(tmp_path):
    p = _st(tmp_path / "t.safetensors", {"x": ("F32", [4], 0, 16)}, data=bytes(20))
    assert any("bytes after the last tensor" in m for m in read_safetensors_header(p).problems)


@pytest.mark.parametrize("hlen", [2**40, 10**9, 5000])
def test_lying_header_length(tmp_path, hlen):
    p = _st(tmp_path / "l.safetensors", {"x": ("F32", [4], 0, 16)}, hlen=hlen)
    h = read_safetensors_header(p)
    assert not h.ok and h.tensors == ()
    assert "exceeds" in h.problems[0]


def test_overlapping_and_gapped_offsets(tmp_path):
    p = _st(tmp_path / "o.safetensors", {"a": ("F32", [4], 0, 16), "b": ("F32", [4], 8, 24)})
    assert any("overlaps" in m for m in read_safetensors_header(p).problems)
    g = _st(tmp_path / "g.safetensors", {"a": ("F32", [4], 0, 16), "b": ("F32", [4], 20, 36)})
    assert any("gap of 4 bytes" in m for m in read_safetensors_header(g).problems)


def test_size_mismatch_and_unknown_dtype_and_bad_entries(tmp_path):
    p = _st(tmp_path / "s.safetensors", {"a": ("F16", [4], 0, 16), "b": ("Q7", [1], 16, 17)})
    probs = read_safetensors_header(p).problems
    assert any("F16 x [4] needs 8 bytes, offsets give 16" in m for m in probs)
    assert any("unknown dtype 'Q7'" in m for m in probs)
    raw = json.dumps(
        {
            "a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]},
            "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]},
            "c": 5,
            "__metadata__": {"k": 1},
        }
    ).encode()
    q = _st(tmp_path / "q.safetensors", {}, data=b"", raw=raw)
    probs = read_safetensors_header(q).problems
    assert any("shape" in m for m in probs) and any("data_offsets" in m for m in probs)
    assert any("not an object" in m for m in probs) and any("__metadata__" in m for m in probs)


@pytest.mark.parametrize("raw", [b"not json at all", b"[1, 2]", b"\xff\xfe\x00\x01", b"{" * 5000])
def test_header_not_json(tmp_path, raw):
    p = _st(tmp_path / "n.safetensors", {}, data=b"", raw=raw)
    h = read_safetensors_header(p)
    assert not h.ok and h.tensors == ()


def test_tiny_empty_missing_and_directory(tmp_path):
    (tmp_path / "e.safetensors").write_bytes(b"")
    (tmp_path / "s.safetensors").write_bytes(b"\x01\x02")
    for name in ("e.safetensors", "s.safetensors", "absent.safetensors"):
        h = read_safetensors_header(tmp_path / name)
        assert not h.ok and isinstance(h.problems[0], str)
    assert "cannot read" in read_safetensors_header(tmp_path).problems[0]


def test_binary_garbage_file(tmp_path):
    import random

    rng = random.Random(1)
    for i in range(30):
        p = tmp_path / f"g{i}.safetensors"
        p.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4000))))
        h = read_safetensors_header(p)
        json.dumps(h.to_dict())


def test_truncated_at_random_points(tmp_path):
    import random

    p = _st(
        tmp_path / "full.safetensors", {"a": ("F32", [64], 0, 256), "b": ("I8", [10], 256, 266)}
    )
    data = p.read_bytes()
    rng = random.Random(2)
    for cut in sorted({rng.randrange(len(data)) for _ in range(40)}):
        q = tmp_path / f"cut{cut}.safetensors"
        q.write_bytes(data[:cut])
        assert not read_safetensors_header(q).ok


def test_many_tensors_is_linear(tmp_path):
    n = 50000
    tensors = {f"t{i}": ("U8", [4], 4 * i, 4 * i + 4) for i in range(n)}
    p = _st(tmp_path / "many.safetensors", tensors, data=bytes(4 * n))
    h = read_safetensors_header(p)
    assert h.ok and len(h.tensors) == n


# --------------------------------------------------------------------------------------------
# index


def test_index_ok_with_headers(tmp_path):
    d = _model(tmp_path)
    text = (d / "model.safetensors.index.json").read_text()
    headers = {p.name: read_safetensors_header(p) for p in d.glob("*.safetensors")}
    c = check_index(os.listdir(d), text, headers)
    assert c.ok and c.tensors == 4 and c.missing == () and c.extra == ()
    assert c.shards == ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    assert c.total_size == 2 * 8232
    json.dumps(c.to_dict())


def test_index_shard_missing_and_extra(tmp_path):
    d = _model(tmp_path, shards=3)
    (d / "model-00002-of-00003.safetensors").unlink()
    (d / "stray.safetensors").write_bytes(b"")
    c = check_index(sorted(d.iterdir()), (d / "model.safetensors.index.json").read_text())
    assert c.missing == ("model-00002-of-00003.safetensors",)
    assert c.extra == ("stray.safetensors",) and not c.ok


def test_index_header_disagreement_and_total_size(tmp_path):
    d = _model(tmp_path)
    idx = json.loads((d / "model.safetensors.index.json").read_text())
    idx["weight_map"]["ghost"] = "model-00001-of-00002.safetensors"
    del idx["weight_map"]["w1.b"]
    idx["metadata"]["total_size"] = 1
    headers = {p.name: read_safetensors_header(p) for p in d.glob("*.safetensors")}
    c = check_index(os.listdir(d), json.dumps(idx), headers)
    assert any("not in its header" in m and "ghost" in m for m in c.problems)
    assert any("not mapped to it" in m and "w1.b" in m for m in c.problems)
    assert any("total_size 1" in m for m in c.problems)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "nope",
        "[]",
        "{}",
        '{"weight_map": 3}',
        '{"weight_map": {"a": 5, "b": "../x"}}',
        b"\xff\xfe",
        '{"weight_map": {}, "metadata": {"total_size": "big"}}',
        "[" * 10000,
    ],
)
def test_index_hostile(text):
    c = check_index(["a.safetensors", 7], text)
    assert isinstance(c.problems, tuple)
    json.dumps(c.to_dict())


# --------------------------------------------------------------------------------------------
# sampled blocks and manifests


def test_sample_blocks_positions_are_deterministic(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(os.urandom(10 * 1024 + 7))
    blocks = sample_blocks(p, block_size=1024, samples=5)
    size = p.stat().st_size
    assert [o for o, _ in blocks] == [
        0,
        (size - 1024) // 4,
        (size - 1024) // 2,
        3 * (size - 1024) // 4,
        size - 1024,
    ]
    assert blocks == sample_blocks(p, block_size=1024, samples=5)
    import hashlib

    data = p.read_bytes()
    assert blocks[-1][1] == hashlib.sha256(data[-1024:]).hexdigest()
    assert sample_blocks(p, block_size=1 << 20, samples=8) == [
        (0, hashlib.sha256(data).hexdigest())
    ]
    assert sample_blocks(tmp_path / "absent") == []
    (tmp_path / "empty").write_bytes(b"")
    assert sample_blocks(tmp_path / "empty") == []


def test_manifest_round_trip(tmp_path):
    d = _model(tmp_path)
    m = write_manifest(d, block_size=1024, samples=4)
    assert set(m["files"]) == {
        "config.json",
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
        "model.safetensors.index.json",
    }
    assert m["files"]["config.json"] == {
        "size": 2,
        "blocks": [[0, m["files"]["config.json"]["blocks"][0][1]]],
    }
    assert m["problems"] == [] and m["bytes_read"] > 0
    json.dumps(m)
    c = verify_manifest(d, json.loads(json.dumps(m)))
    assert c.ok and c.files_checked == 4 and c.bytes_read > 0
    assert c.throughput_bytes_per_s is None or c.throughput_bytes_per_s > 0
    json.dumps(c.to_dict())


def test_manifest_detects_changes(tmp_path):
    d = _model(tmp_path, shards=3)
    m = write_manifest(d, block_size=512, samples=4)
    shard1 = d / "model-00001-of-00003.safetensors"
    data = bytearray(shard1.read_bytes())
    data[-1] ^= 0xFF  # last block always sampled
    shard1.write_bytes(bytes(data))
    (d / "model-00002-of-00003.safetensors").unlink()
    shard3 = d / "model-00003-of-00003.safetensors"
    shard3.write_bytes(shard3.read_bytes()[:-10])
    (d / "new.txt").write_text("x")
    c = verify_manifest(d, m)
    assert c.missing == ("model-00002-of-00003.safetensors",)
    assert c.extra == ("new.txt",)
    assert set(c.mismatched) == {
        "model-00001-of-00003.safetensors",
        "model-00003-of-00003.safetensors",
    }
    text = "\n".join(c.findings)
    assert "block at offset" in text and "size" in text and "truncated" in text
    assert not c.ok


def test_manifest_header_change_same_size(tmp_path):
    d = _model(tmp_path, shards=1)
    m = write_manifest(d)
    p = d / "model-00001-of-00001.safetensors"
    data = bytearray(p.read_bytes())
    i = data.index(b'"pt"')
    data[i + 1 : i + 3] = b"PT"
    p.write_bytes(bytes(data))
    c = verify_manifest(d, m)
    assert any("header differs" in f for f in c.findings)


def test_full_hash_mode_catches_unsampled_change(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    p = d / "big.bin"
    p.write_bytes(bytes(64 * 1024))
    sampled = write_manifest(d, block_size=1024, samples=2)
    full = write_manifest(d, block_size=1024, samples=2, full=True)
    data = bytearray(p.read_bytes())
    data[30000] = 1  # between the first and the last sampled block
    p.write_bytes(bytes(data))
    assert verify_manifest(d, sampled).ok
    assert any("full sha256 differs" in f for f in verify_manifest(d, full).findings)


@pytest.mark.parametrize(
    "manifest",
    [
        {},
        None,
        [],
        {"files": 3},
        {"files": {"a": 3}},
        {"files": {"../etc/passwd": {"size": 1}}},
        {"version": 1, "files": {"config.json": {"size": 2, "blocks": [[0]]}}},
    ],
)
def test_verify_hostile_manifests(tmp_path, manifest):
    d = _model(tmp_path, shards=1)
    c = verify_manifest(d, manifest)
    assert not c.ok
    json.dumps(c.to_dict())


def test_missing_model_dir(tmp_path):
    m = write_manifest(tmp_path / "absent")
    assert m["files"] == {} and m["problems"]
    assert not verify_manifest(tmp_path / "absent", {"version": 1, "files": {}}).ok


# --------------------------------------------------------------------------------------------
# generator used by the benchmark


def test_generator_writes_a_valid_model(tmp_path):
    sys.path.insert(0, str(BENCH))
    try:
        from gen_safetensors import generate
    finally:
        sys.path.remove(str(BENCH))
    out = generate(tmp_path / "gen", gb=0.125, shards=2)
    d = Path(out["dir"])
    headers = {p.name: read_safetensors_header(p) for p in d.glob("*.safetensors")}
    assert len(headers) == 2 and all(h.ok for h in headers.values())
    c = check_index(os.listdir(d), (d / "model.safetensors.index.json").read_text(), headers)
    assert c.ok, c.problems
    m = write_manifest(d)
    assert verify_manifest(d, m).ok
    blocks = m["files"]["model-00001-of-00002.safetensors"]["blocks"]
    assert len({h for _o, h in blocks}) == len(blocks)
