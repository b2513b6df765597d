"""The message catalog: every message in both languages, every check translated, JSON English."""

from __future__ import annotations

import json
import os
import string

import pytest
from clirun import cli as run_cli

from ascend_audit.i18n import CHECK_FIELDS, LANGS, check_catalog, detect_lang, messages, t
from ascend_audit.registry import load_registry


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("lang", [x for x in LANGS if x != "en"])
def test_every_message_exists_in_every_language_with_the_same_fields(lang: str) -> None:
    en, other = messages("en"), messages(lang)
    assert sorted(set(en) - set(other)) == [], f"missing in {lang}"
    assert sorted(set(other) - set(en)) == [], f"only in {lang}, not in en"
    wrong = {
        k: (_fields(en[k]), _fields(other[k])) for k in en if _fields(en[k]) != _fields(other[k])
    }
    assert wrong == {}
    assert all(other[k].strip() for k in other), "empty translation"


@pytest.mark.parametrize("lang", [x for x in LANGS if x != "en"])
def test_every_builtin_check_has_a_translated_title_and_remediation(lang: str) -> None:
    """A new check needs its `title_zh` / `remediation_zh` (beside it, or in
    ascend_audit/i18n/checks.zh.toml); this names the ones that lack them."""
    specs = load_registry(entry_points=False, catalogue_only=True).all()
    catalog = check_catalog(lang)
    missing = [
        f"{s.id}.{field}"
        for s in specs
        for field in CHECK_FIELDS
        if getattr(s, field) and not catalog.get(s.id, {}).get(field)
    ]
    assert missing == [], f"checks without a {lang} translation: {', '.join(missing)}"
    known = {s.id for s in specs}
    stale = sorted(set(catalog) - known)
    assert stale == [], f"translations of checks that no longer exist: {stale}"


@pytest.mark.parametrize(
    ("env", "lang"),
    [
        ({"LANG": "zh_CN.UTF-8"}, "zh"),
        ({"LC_ALL": "zh_CN.GB18030", "LANG": "en_US.UTF-8"}, "zh"),
        ({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({}, "en"),
    ],
)
def test_language_from_the_locale(env: dict[str, str], lang: str) -> None:
    assert detect_lang(env) == lang


def test_message_formatting_and_fallback() -> None:
    assert t("reason.failing", "zh", ids="DRV-VER-001") == "失败：DRV-VER-001"
    assert t("reason.failing", "en", ids="X") == "failing: X"


def test_json_keeps_english_and_records_the_language(tmp_path) -> None:
    path = tmp_path / "r.json"
    run_cli(
        "run",
        "--example",
        "firmware-mismatch",
        "-q",
        "--lang",
        "zh",
        "--json",
        str(path),
        env=dict(os.environ),
    )
    report = json.loads(path.read_text(encoding="utf-8"))
    assert report["lang"] == "zh"
    assert report["verdict"] == "NOT_READY"
    r = next(x for x in report["results"] if x["id"] == "DRV-VER-001")
    assert r["status"] == "FAIL" and r["title"].startswith("Driver and firmware")
