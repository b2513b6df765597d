"""Rebuild the packaged compatibility tables from the reference CSVs (by hand, not at audit time).

Usage: python -m ascend_audit.data.build_compat REFERENCE_COMPAT_DIR [--table-version YYYY-MM-DD]

The rows the project adds itself (compat_project.toml, each with its source and quoted words) are
appended to their table after the reference rows, marked `origin = project`; a project row that
lacks a source, names a version the Huawei grammar cannot read or contradicts a reference row
stops the build (project_problems).
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
PROJECT_FILE = HERE / "compat_project.toml"
KINDS = ("pairing", "minimum", "known-bad")
# Keys of a project row besides its table's own columns.
PROJECT_KEYS = ("kind", "product", "source", "quote", "note")
# Columns holding Huawei versions (facts.huawei_version); `/` and `;` separate alternatives,
# `X` is a wildcard part, `>=` a minimum.
HUAWEI_COLUMNS = {
    "cann_hdk": ("cann", "hdk"),
    "mindie": ("mindie", "cann", "hdk"),
    "vllm_ascend_release": ("stable_cann",),
}
# What a project row must state (a reference row's other key columns may stay "not stated").
_PROJECT_REQUIRED = {
    "cann_hdk": ("cann", "hdk"),
    "mindie": ("mindie", "cann"),
    "vllm_ascend_release": ("vllm_ascend", "stable_cann"),
}
_NOT_STATED = frozenset({"", "not stated", "n/a", "na", "none", "-"})
_HUAWEI_TEXT = re.compile(r"^[0-9A-Za-z]+(\.[0-9A-Za-z]+)*$")

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


def load_project(path: Path = PROJECT_FILE) -> dict[str, list[dict[str, str]]]:
    """The project's own rows by table (compat_project.toml); SystemExit on a malformed file."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out: dict[str, list[dict[str, str]]] = {}
    known = {table for table, _ in TABLES.values()}
    for table, rows in data.items():
        if table not in known or not isinstance(rows, list):
            raise SystemExit(f"{path}: [[{table}]] is not a table of {sorted(known)}")
        for n, row in enumerate(rows, 1):
            if not isinstance(row, dict) or not all(isinstance(v, str) for v in row.values()):
                raise SystemExit(f"{path}: [[{table}]] row {n}: every value must be a string")
        out[table] = [{k: v.strip() for k, v in row.items()} for row in rows]
    return out


def huawei_version_problems(cell: str) -> list[str]:
    """Why a table cell is not one or more Huawei versions (empty when it is, or not stated)."""
    from ascend_audit.facts import huawei_version as hv

    if cell.lower() in _NOT_STATED:
        return []
    out = []
    for alt in re.split(r"[/;]", cell):
        text = alt.strip().removeprefix(">=").strip()
        words = [t[2] for t in hv.tokens(text)]
        if not _HUAWEI_TEXT.match(text) or any(w and w != "x" for w in words):
            out.append(f"{alt.strip()!r} is not a Huawei version")
    return out


def _probes(cell: str) -> list[str]:
    """Concrete versions a cell stands for, to compare rows by: `25.5.X` -> 25.5.0, `>=8.0.RC1`
    -> 8.0.RC1, `a/b` -> both."""
    out = []
    for alt in re.split(r"[/;]", cell):
        text = alt.strip().removeprefix(">=").strip()
        if text:
            out.append(re.sub(r"(?i)(^|\.)x(?=\.|$)", r"\g<1>0", text))
    return out


def _hdk_flag(row: dict[str, str]) -> str:
    return "N" if row.get("kind") == "known-bad" else "Y"


def _below_minimums(cann: str, hdk: str, product: str, ref: list[dict[str, str]]) -> list[str]:
    """The reference minimums (of the same product, or of none) a compatible pair is below."""
    from ascend_audit.facts import huawei_version as hv

    out = []
    for r in ref:
        lo_c, lo_h, of = r["cann"], r["hdk"], r.get("product", "")
        if not (lo_c.startswith(">=") and lo_h.startswith(">=")):
            continue
        if of and of.lower() != product.lower():
            continue
        if hv.compare(cann, lo_c[2:]) < 0 or hv.compare(hdk, lo_h[2:]) < 0:
            out.append(f"CANN {cann} / HDK {hdk}: below the minimum {lo_c}, {lo_h} ({r['source']})")
    return out


def _cann_hdk_conflicts(row: dict[str, str], ref: list[dict[str, str]]) -> list[str]:
    """Reference rows that say the opposite of a project CANN/HDK row, or already say it all."""
    from ascend_audit.facts.compat import cell_matches

    flag, out = _hdk_flag(row), []
    pairs = [(c, h) for c in _probes(row["cann"]) for h in _probes(row["hdk"])]
    said = 0
    for c, h in pairs:
        hits = [
            r
            for r in ref
            if not r["cann"].startswith(">=")
            and cell_matches(r["cann"], c)
            and cell_matches(r["hdk"], h)
        ]
        said += any(r["compatible"].upper() == flag for r in hits)
        for r in hits:
            if r["compatible"].upper() != flag:
                out.append(f"CANN {c} / HDK {h}: reference says {r['compatible']} ({r['source']})")
        if flag == "Y":
            out += _below_minimums(c, h, row["product"], ref)
    for r in ref:  # a wildcard project row may cover a reference row's versions
        if r["cann"].startswith(">="):
            continue
        for c in _probes(r["cann"]):
            for h in _probes(r["hdk"]):
                if (
                    cell_matches(row["cann"], c)
                    and cell_matches(row["hdk"], h)
                    and r["compatible"].upper() != flag
                ):
                    out.append(
                        f"covers CANN {c} / HDK {h}, which the reference says is {r['compatible']}"
                    )
    if pairs and said == len(pairs):
        out.append("every pair it names is already in the reference with the same verdict")
    return sorted(set(out))


def _same_release_conflicts(
    table: str, key: str, row: dict[str, str], ref: list[dict[str, str]]
) -> list[str]:
    """A project row may not restate or change a release the reference already lists."""
    from ascend_audit.facts.compat import version_tokens

    want = version_tokens(row.get(key, ""))
    return [
        f"{key} {row[key]} is already a reference row of {table} ({r.get('source', '')})"
        for r in ref
        if version_tokens(r.get(key, "")) == want
    ]


def project_problems(table: str, row: dict[str, str], ref: list[dict[str, str]]) -> list[str]:
    """Everything wrong with one project row of TABLE, given that table's reference rows."""
    columns = set(ref[0]) if ref else set()
    problems = []
    unknown = sorted(set(row) - columns - set(PROJECT_KEYS))
    if unknown:
        problems.append(f"unknown keys {unknown}")
    if row.get("kind") not in KINDS:
        problems.append(f"kind {row.get('kind')!r} is not one of {KINDS}")
    if not row.get("product"):
        problems.append("no product")
    if not re.match(r"^https?://\S+$", row.get("source", "")):
        problems.append("source is not an address")
    if not row.get("quote"):
        problems.append("no quoted words of the release note")
    keys = next(k for t, k in TABLES.values() if t == table)
    missing = [k for k in _PROJECT_REQUIRED.get(table, keys[:1]) if not row.get(k)]
    if missing:
        problems.append(f"empty {missing}")
    for col in HUAWEI_COLUMNS.get(table, ()):
        problems += huawei_version_problems(row.get(col, ""))
    if problems:
        return problems
    if table == "cann_hdk":
        return _cann_hdk_conflicts(row, ref)
    return _same_release_conflicts(table, keys[0], row, ref)


def project_row(table: str, row: dict[str, str], fields: list[str]) -> dict[str, str]:
    """A project row in its table's columns (plus origin and quote); unstated cells say so."""
    out = {f: row.get(f, "not stated") for f in fields}
    if table == "cann_hdk":
        out["compatible"] = _hdk_flag(row)
        out["kind"] = f"project row ({row['kind']}): {row.get('note') or row['product']}"
        out["scope"], out["product"] = row["kind"], row["product"]
    out["source"], out["origin"], out["quote"] = row["source"], "project", row["quote"]
    return out


def _pin_source(row: dict[str, str]) -> str:
    """The tag-pin table has no source column: its rows come from the tag's own files."""
    return f"vllm-project/vllm-ascend tag {row['vllm_ascend_tag']}: requirements.txt and Dockerfile"


def build(
    ref_dir: Path, out_dir: Path, table_version: str | None, project: Path = PROJECT_FILE
) -> dict[str, object]:
    """Copy every reference row (with its source) into out_dir/compat_<table>.csv, then the
    project's own rows; return meta."""
    meta: dict[str, object] = {"tables": {}}
    dates: list[str] = []
    extra = load_project(project)
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
        ours = extra.get(table, [])
        bad = {n: p for n, r in enumerate(ours, 1) if (p := project_problems(table, r, rows))}
        if bad:
            raise SystemExit(
                "\n".join(f"{project}: [[{table}]] row {n}: {'; '.join(p)}" for n, p in bad.items())
            )
        if ours:
            for row in rows:
                row["origin"], row["quote"] = "reference", ""
            rows += [project_row(table, r, fields) for r in ours]
            fields += ["origin", "quote"]
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
            "project_rows": len(ours),
        }
    meta["project"] = {
        "file": project.name,
        "rows": sum(len(r) for r in extra.values()),
        "sha256": hashlib.sha256(project.read_bytes()).hexdigest(),
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
