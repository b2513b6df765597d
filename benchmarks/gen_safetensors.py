"""Write a synthetic safetensors model (shards + model.safetensors.index.json) quickly.

Real bytes are written, but from one repeated 4 MiB block (its first 8 bytes carry a counter
so sampled block hashes differ), so generating a few GB is bounded by disk speed, not CPU.

    python benchmarks/gen_safetensors.py OUT_DIR --gb 2 --shards 4
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import time
from pathlib import Path

_BLOCK = 4 * 1024 * 1024
_TENSOR_BYTES = 64 * 1024 * 1024  # BF16 [4096, 8192]


def _write_shard(path: Path, names: list[str], per_tensor: int, block: bytearray) -> int:
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    off = 0
    for name in names:
        elems = per_tensor // 2
        header[name] = {
            "dtype": "BF16",
            "shape": [elems // 4096, 4096],
            "data_offsets": [off, off + per_tensor],
        }
        off += per_tensor
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # pad like safetensors does
    counter = 0
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        left = off
        while left > 0:
            struct.pack_into("<Q", block, 0, counter)
            counter += 1
            n = min(left, len(block))
            f.write(block if n == len(block) else bytes(block[:n]))
            left -= n
    return off


def generate(
    out_dir: str | os.PathLike[str], gb: float = 2.0, shards: int = 4
) -> dict[str, object]:
    """Write shards totalling about `gb` GiB of tensor data plus the index; return a summary."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    total = int(gb * (1 << 30))
    per_shard = max(_TENSOR_BYTES, total // shards)
    tensors_per_shard = max(1, per_shard // _TENSOR_BYTES)
    block = bytearray(os.urandom(_BLOCK))
    weight_map: dict[str, str] = {}
    data_total = 0
    t0 = time.perf_counter()
    for s in range(shards):
        fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        names = [f"model.layers.{s}.w{i}.weight" for i in range(tensors_per_shard)]
        data_total += _write_shard(out / fname, names, _TENSOR_BYTES, block)
        weight_map.update({n: fname for n in names})
    index = {"metadata": {"total_size": data_total}, "weight_map": weight_map}
    (out / "model.safetensors.index.json").write_text(json.dumps(index, indent=2))
    (out / "config.json").write_text(json.dumps({"model_type": "synthetic", "shards": shards}))
    return {
        "dir": str(out),
        "bytes": data_total,
        "shards": shards,
        "seconds": time.perf_counter() - t0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--gb", type=float, default=2.0)
    ap.add_argument("--shards", type=int, default=4)
    a = ap.parse_args()
    print(json.dumps(generate(a.out_dir, a.gb, a.shards)))


if __name__ == "__main__":
    main()
