"""Rebuild the packaged compatibility tables from the reference CSVs (by hand, not at audit time).

Usage: python -m ascend_audit.data.build_compat REFERENCE_COMPAT_DIR [--table-version YYYY-MM-DD]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# reference file -> (packaged table name, key columns that must be non-empty)
TABLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "torch_npu_matrix.csv": ("torch_npu", ("torch_npu", "torch", "cann")),
    "vllm_ascend_release_matrix.csv": ("vllm_ascend_release", ("vllm_ascend", "vllm")),
    "vllm_ascend_tag_pins.csv": ("vllm_ascend_tag_pins", ("vllm_ascend_tag",)),
    "cann_hdk_matrix.csv": ("cann_hdk", ("cann", "hdk", "compatible")),
    "mindie_matrix.csv": ("mindie", ("mindie", "cann")),
}
_DATE_RE = re.compile(r"\b(20\d\d-\d\d-\d\d)\b")
_PRODUCTS = (
    ("mindsdk", "MindSDK"),
    ("mindie", "MindIE"),
    ("mindcluster", "MindCluster"),
    ("mind-cluster", "MindCluster"),
    ("deployer", "ascend-deployer"),
)


def scope_of(row: dict[str, str]) -> tuple[str, str]:
    """(scope, product) of a CANN / HDK row: `pairing`, `minimum` or `known-bad`, and the product
    whose documentation states it (empty: the CANN / HDK release notes themselves)."""
    kind = row.get("kind", "").lower()
    text = f"{kind} {row.get('source', '')}".lower()
    product = next((name for word, name in _PRODUCTS if word in text), "")
    if "minimum" in kind and "not minimum" not in kind:
        return "minimum", product
    if row.get("compatible", "").upper() == "N":
        return "known-bad", product
    return "pairing", product


def _pin_source(row: dict[str, str]) -> str:
    """The tag-pin table has no source column: its rows come from the tag's own files."""
    return f"vllm-project/vllm-ascend tag {row['vllm_ascend_tag']}: requirements.txt and Dockerfile"


def build(ref_dir: Path, out_dir: Path, table_version: str | None) -> dict[str, object]:
    """Copy every reference row (with its source) into out_dir/compat_<table>.csv; return meta."""
    meta: dict[str, object] = {"tables": {}}
    dates: list[str] = []
    for fname, (table, keys) in TABLES.items():
        src = ref_dir / fname
        with src.open(newline="", encoding="utf-8") as fh:
            rows = [
                {k.strip(): (v or "").strip() for k, v in r.items()} for r in csv.DictReader(fh)
            ]
        if not rows:
            raise SystemExit(f"{src}: no rows")
        for n, row in enumerate(rows, 2):
            if table == "vllm_ascend_tag_pins":
                row["source"] = _pin_source(row)
                if row.get("tag_commit_date"):
                    dates.append(row["tag_commit_date"])
            missing = [k for k in (*keys, "source") if not row.get(k)]
            if missing:
                raise SystemExit(f"{src}:{n}: empty {missing}")
            dates.extend(_DATE_RE.findall(row["source"]))
        if table == "cann_hdk":
            for row in rows:
                row["scope"], row["product"] = scope_of(row)
        fields = list(rows[0].keys())
        out = out_dir / f"compat_{table}.csv"
        with out.open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        meta["tables"][table] = {  # type: ignore[index]
            "file": out.name,
            "rows": len(rows),
            "built_from": fname,
            "sha256_of_reference": hashlib.sha256(src.read_bytes()).hexdigest(),
        }
    meta["table_version"] = table_version or max(dates)
    (out_dir / "compat_meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reference_dir", type=Path)
    ap.add_argument("--out", type=Path, default=HERE)
    ap.add_argument(
        "--table-version",
        help="date of the reference snapshot (default: newest date in the sources)",
    )
    args = ap.parse_args(argv)
    meta = build(args.reference_dir, args.out, args.table_version)
    print(json.dumps(meta, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
