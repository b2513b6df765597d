"""Time write_manifest / verify_manifest on a generated 2 GB safetensors model.

Each measurement is a fresh subprocess (peak RSS from resource.getrusage there). Reports
sampled verify (default manifest) and full-hash verify (`full=True`), then the whole CLI path:
`ascend-audit run --model-dir M --verify-weights --weights-manifest F` (FWK-WGT-002). Files
were just written, so reads mostly come from the page cache: this measures the auditor, not
the disk.

    python benchmarks/bench_weights.py [--gb 2] [--shards 4] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from gen_safetensors import generate  # noqa: E402

CHILD = r"""
import json, resource, sys, time
from ascend_audit.facts.weights import verify_manifest, write_manifest
model, mode = sys.argv[1], sys.argv[2]
full = mode == "full"
t0 = time.perf_counter()
manifest = write_manifest(model, full=full)
t1 = time.perf_counter()
check = verify_manifest(model, manifest)
t2 = time.perf_counter()
print(json.dumps({
    "mode": mode,
    "write_s": t1 - t0,
    "verify_wall_s": t2 - t1,
    "verify_bytes_read": check.bytes_read,
    "verify_throughput_mb_s": (check.throughput_bytes_per_s or 0) / 1e6,
    "model_bytes": manifest["total_bytes"],
    "model_mb_per_s": manifest["total_bytes"] / (t2 - t1) / 1e6,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "ok": check.ok,
    "findings": list(check.findings)[:5],
}))
"""


def run(model: str, mode: str) -> dict[str, object]:
    """One measurement in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, model, mode],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    return json.loads(out.stdout)


CLI_CHILD = r"""
import json, resource, subprocess, sys, time
model, manifest, out = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()
subprocess.run([sys.executable, "-m", "ascend_audit", "weights-manifest", model, "-o", manifest],
               check=True, capture_output=True)
t1 = time.perf_counter()
proc = subprocess.run([sys.executable, "-m", "ascend_audit", "run", "--layers", "framework",
                       "--only", "FWK-WGT-002", "--no-gate", "--model-dir", model,
                       "--verify-weights", "--weights-manifest", manifest, "--json", out],
                      capture_output=True, text=True)
t2 = time.perf_counter()
r = json.load(open(out))["results"][0]
print(json.dumps({
    "mode": "cli run --verify-weights",
    "manifest_s": t1 - t0,
    "run_wall_s": t2 - t1,
    "status": r["status"],
    "metrics": r["metrics"],
    "peak_rss_mb_children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
}))
"""


def run_cli(model: str, tmp: str) -> dict[str, object]:
    """The CLI path in a fresh interpreter (peak RSS of the ascend-audit children)."""
    out = subprocess.run(
        [sys.executable, "-c", CLI_CHILD, model, f"{tmp}/manifest.json", f"{tmp}/report.json"],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=2.0)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--dir", default=None, help="where to write the model (default: a tmp dir)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=a.dir) as tmp:
        gen = generate(Path(tmp) / "model", a.gb, a.shards)
        print(json.dumps({"generated": gen}))
        for mode in ("sampled", "full"):
            print(json.dumps(run(str(Path(tmp) / "model"), mode)))
        print(json.dumps(run_cli(str(Path(tmp) / "model"), tmp)))


if __name__ == "__main__":
    main()
