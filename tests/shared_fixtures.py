"""Shared test helpers: where the real fixtures live, and how to skip when they are absent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FIXTURES = SHARED / "fixtures"
REFERENCE = SHARED / "reference"
DATA = Path(__file__).resolve().parent / "data"


def fixture_files(subdir: str, pattern: str = "*") -> list[Path]:
    """Real fixture files under ../shared/fixtures/SUBDIR (source sidecars excluded)."""
    base = FIXTURES / subdir
    if not base.is_dir():
        return []
    return sorted(
        p for p in base.glob(pattern) if p.is_file() and not p.name.endswith(".source.txt")
    )


def fixture_cases(subdir: str, pattern: str = "*") -> list[Any]:
    """fixture_files as parametrize cases: when there are none, one case that skips, saying which
    real fixtures are not beside this checkout (never pytest's bare "got empty parameter set";
    pyproject's empty_parameter_set_mark = fail_at_collect refuses an empty list)."""
    found = fixture_files(subdir, pattern)
    if found:
        return [pytest.param(p, id=p.name) for p in found]
    reason = f"no real fixtures ../shared/fixtures/{subdir}/{pattern} beside this checkout"
    return [pytest.param(None, id="absent", marks=pytest.mark.skip(reason=reason))]


def fixture(path: str) -> Path:
    """One real fixture by relative path; skips the test with a stated reason when absent."""
    p = FIXTURES / path
    if not p.is_file():
        pytest.skip(f"real fixture ../shared/fixtures/{path} is not beside this checkout")
    return p


def read_fixture(path: str) -> str:
    return fixture(path).read_text(encoding="utf-8", errors="replace")


def data_file(directory: Path, prefix: str) -> Path:
    """The one project data file in DIRECTORY whose name starts with PREFIX_ (an issue id)."""
    (path,) = sorted(directory.glob(prefix + "_*"))
    return path
