"""A translation cannot lag its English silently: each records the digest of the English it says."""

from __future__ import annotations

import dataclasses

import pytest

from ascend_audit.i18n import LANGS, en_digest, stale_translations
from ascend_audit.registry import RegistryError, load_registry

_SPECS = load_registry(entry_points=False, catalogue_only=True).all()


def _spec(check_id: str):
    return next(s for s in _SPECS if s.id == check_id)


@pytest.mark.parametrize("lang", [x for x in LANGS if x != "en"])
def test_every_translation_says_the_english_of_now(lang: str) -> None:
    """Every layer's checks. On a failure: translate the English again, then write the digest
    the line names into `en_digest` (checks.<lang>.toml) or `en_digest_<lang>` (beside it)."""
    stale = stale_translations(lang)
    assert stale == [], "translations behind their English:\n" + "\n".join(stale)


def test_the_digest_ignores_reflowing_but_not_words() -> None:
    text = "Install the driver\n  and firmware."
    assert en_digest(text) == en_digest("Install the driver and firmware.")
    assert en_digest(text) != en_digest("Install the driver and the firmware.")
    assert len(en_digest(text)) == 8 and en_digest("") == en_digest("  \n")


def test_a_changed_english_remediation_is_named_with_its_new_digest() -> None:
    """From the catalog file (DRV-VER-001) and from a check's own table (DRV-HBM-001)."""
    for check_id, where in (("DRV-VER-001", "checks.zh.toml"), ("DRV-HBM-001", "en_digest_zh")):
        spec = _spec(check_id)
        changed = dataclasses.replace(spec, remediation=spec.remediation + " Then reboot.")
        stale = stale_translations("zh", [changed])
        assert len(stale) == 1, stale
        assert stale[0].startswith(f"{check_id}.remediation: English changed") and where in stale[0]
        assert en_digest(changed.remediation) in stale[0]
        assert stale_translations("zh", [spec]) == []


def test_a_check_without_translation_or_digest_is_named() -> None:
    spec = _spec("DRV-HBM-001")
    new = dataclasses.replace(spec, id="DRV-NEW-001", translations=(), translated_from=())
    assert [line.split(":")[0] for line in stale_translations("zh", [new])] == [
        "DRV-NEW-001.title",
        "DRV-NEW-001.remediation",
    ]
    undated = dataclasses.replace(spec, translated_from=())
    stale = stale_translations("zh", [undated])
    assert len(stale) == 2 and all("does not say which English" in s for s in stale)


def test_a_digest_table_of_the_wrong_shape_is_refused(tmp_path) -> None:
    (tmp_path / "mine.toml").write_text(
        '["X-DIG-001"]\nlayer = "driver"\ntitle = "t"\nen_digest_zh = "abc"\n', encoding="utf-8"
    )
    (tmp_path / "mine.py").write_text(
        "from ascend_audit.registry import check\n\n"
        "@check('X-DIG-001')\ndef f(ctx):\n    return None\n",
        encoding="utf-8",
    )
    with pytest.raises(RegistryError, match="en_digest_zh must map fields to digests"):
        load_registry(builtins=False, entry_points=False, checks_dirs=[tmp_path])
