"""One keyed message catalog for every human-facing output: English and Simplified Chinese.

`t(key, lang, **fields)` gives a message (en.py is the reference table, zh.py its translation);
`check_text(check_id, field, lang)` gives a check's title or remediation in a language: from the
check's own metadata (`title_zh = …` beside it) or from checks.<lang>.toml here. The JSON report
keeps English: only renderers translate, so a report can be re-rendered in either language.
Each check translation records `en_digest(english)` of the text it translates; `stale_translations`
names those whose English changed since (tests/engine/test_i18n_digests.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

LANGS: tuple[str, ...] = ("en", "zh")
DEFAULT_LANG = "en"
CHECK_FIELDS: tuple[str, ...] = ("title", "remediation")  # translated for every built-in check


def detect_lang(environ: Mapping[str, str] | None = None) -> str:
    """The language the locale asks for: LC_ALL, else LC_MESSAGES, else LANG; zh_* → zh."""
    env = os.environ if environ is None else environ
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var)
        if value:
            return "zh" if value.lower().startswith("zh") else DEFAULT_LANG
    return DEFAULT_LANG


def normalise(lang: str | None) -> str:
    """A supported language code for LANG ('zh_CN.UTF-8' → 'zh'); English when unknown."""
    if not lang:
        return DEFAULT_LANG
    code = lang.strip().lower().replace("-", "_").split("_")[0].split(".")[0]
    return code if code in LANGS else DEFAULT_LANG


@cache
def messages(lang: str) -> dict[str, str]:
    """The message table of LANG."""
    if lang == "zh":
        from ascend_audit.i18n.zh import MESSAGES
    else:
        from ascend_audit.i18n.en import MESSAGES
    return MESSAGES


def t(key: str, lang: str = DEFAULT_LANG, **fields: Any) -> str:
    """Message KEY in LANG with FIELDS filled in; the English one when LANG lacks it."""
    text = messages(lang).get(key) or messages(DEFAULT_LANG)[key]
    return text.format(**fields) if fields else text


def status_word(status: Any, lang: str = DEFAULT_LANG) -> str:
    """PASS/WARN/… in LANG (the status value itself when unknown)."""
    value = getattr(status, "value", status)
    return messages(lang).get(f"status.{value}") or str(value)


def verdict_word(verdict: Any, lang: str = DEFAULT_LANG) -> str:
    """READY/NOT_READY/… in LANG (the verdict value itself when unknown)."""
    value = getattr(verdict, "value", verdict)
    return messages(lang).get(f"verdict.{value}") or str(value)


def layer_word(layer: str, lang: str = DEFAULT_LANG) -> str:
    return messages(lang).get(f"layer.{layer}") or layer


@cache
def _catalog_file(lang: str) -> dict[str, dict[str, Any]]:
    """checks.<lang>.toml as written: check id → {title, remediation, en_digest = {field: …}}."""
    from ascend_audit.registry import tomllib

    path = os.path.join(os.path.dirname(__file__), f"checks.{lang}.toml")
    if not os.path.isfile(path):
        return {}
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    return {cid: table for cid, table in data.items() if isinstance(table, dict)}


@cache
def check_catalog(lang: str) -> dict[str, dict[str, str]]:
    """Check id → {title, remediation} in LANG for the built-in checks (not for English)."""
    if lang == DEFAULT_LANG:
        return {}
    from ascend_audit.registry import load_registry

    out: dict[str, dict[str, str]] = {}
    for cid, table in _catalog_file(lang).items():
        out[cid] = {k: str(v).strip() for k, v in table.items() if isinstance(v, str)}
    try:
        registry = load_registry(entry_points=False, catalogue_only=True)
    except Exception:  # a broken metadata file must not break rendering; English is shown
        return out
    for spec in registry.all():
        for field in ("title", "rationale", "remediation"):
            own = spec.text(field, lang)
            if own:
                out.setdefault(spec.id, {})[field] = own
        if spec.id in out:  # to tell a node-specific fix from the check's generic one
            out[spec.id]["en_remediation"] = spec.remediation
    return out


def en_digest(text: str) -> str:
    """A short digest of an English text, blind to line breaks and indentation: a translation
    records the digest of the English it was made from (`en_digest`, `en_digest_zh`)."""
    import hashlib

    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:8]


def stale_translations(lang: str, specs: Iterable[Any] | None = None) -> list[str]:
    """Every translated field of the built-in checks (or SPECS) that is missing in LANG, or whose
    English changed since it was translated: one line each, naming the digest to record."""
    if specs is None:
        from ascend_audit.registry import load_registry

        specs = load_registry(entry_points=False, catalogue_only=True).all()
    book = _catalog_file(lang)
    out: list[str] = []
    for spec in specs:
        entry = book.get(spec.id, {})
        recorded = entry.get("en_digest")
        file_digests = recorded if isinstance(recorded, dict) else {}
        inline_digests = dict(spec.translated_from)
        for field in ("title", "rationale", "remediation"):
            english = str(getattr(spec, field, "") or "")
            inline = spec.text(field, lang)
            text = inline or str(entry.get(field, "") or "").strip()
            if not english.strip() or (field not in CHECK_FIELDS and not text):
                continue  # rationale: translated only where a check chose to
            where = f"en_digest_{lang}" if inline else f"checks.{lang}.toml en_digest"
            now = en_digest(english)
            made_from = inline_digests.get(f"{field}_{lang}") if inline else None
            if not inline:
                made_from = file_digests.get(field)
            if not text:
                out.append(f"{spec.id}.{field}: no {lang} translation (English {now})")
            elif made_from is None:
                out.append(
                    f"{spec.id}.{field}: {where} does not say which English it translates"
                    f" (English now {now})"
                )
            elif made_from != now:
                out.append(
                    f"{spec.id}.{field}: English changed since the {lang} text was written"
                    f" ({where} {made_from}, English now {now})"
                )
    return out


def check_text(check_id: str, field: str, lang: str, english: str = "") -> str:
    """A check's FIELD in LANG, else ENGLISH (what the report carries)."""
    if lang == DEFAULT_LANG:
        return english
    return check_catalog(lang).get(check_id, {}).get(field) or english


def reflow(text: str) -> str:
    """Metadata text as paragraphs: hard line breaks joined (without a space between CJK)."""
    paragraphs = []
    for block in text.strip().split("\n\n"):
        out = ""
        for line in (x.strip() for x in block.splitlines()):
            if not line:
                continue
            if out and not _joins_tight(out[-1], line[0]):
                out += " "
            out += line
        if out:
            paragraphs.append(out)
    return "\n\n".join(paragraphs)


def _is_wide(ch: str) -> bool:
    import unicodedata

    return unicodedata.east_asian_width(ch) in ("W", "F")


def _joins_tight(left: str, right: str) -> bool:
    """No space where a hard break was: between two CJK characters, or at full-width punctuation."""
    import unicodedata

    def punct(ch: str) -> bool:
        return _is_wide(ch) and unicodedata.category(ch).startswith("P")

    return (_is_wide(left) and _is_wide(right)) or punct(left) or punct(right)
