"""What every renderer shows of a result or a layer, in the report's language.

The Report (and its JSON) is English; a renderer asks here for the title, the fix, the one-line
finding and the layer's reason in LANG. Check metadata comes from the message catalog
(ascend_audit.i18n); findings the checks wrote stay as written, they quote the node.
"""

from __future__ import annotations

from typing import Any

from ascend_audit.i18n import check_catalog, reflow, t

FAILING = ("FAIL", "ERROR")


def _get(obj: Any, name: str, default: Any = "") -> Any:
    """Attribute or key: renderers work on Report objects and on report dicts alike."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _value(x: Any) -> str:
    return str(getattr(x, "value", x))


def title(r: Any, lang: str) -> str:
    """The check's title in LANG."""
    english = str(_get(r, "title") or "")
    if lang == "en":
        return english
    return check_catalog(lang).get(str(_get(r, "id")), {}).get("title") or english


def remediation(r: Any, lang: str) -> str:
    """The fix in LANG as paragraphs; a node-specific fix the check wrote is kept beside it."""
    english = reflow(str(_get(r, "remediation") or ""))
    if lang == "en" or not english:
        return english
    entry = check_catalog(lang).get(str(_get(r, "id")), {})
    translated = reflow(entry.get("remediation", ""))
    if not translated:
        return english
    generic = reflow(entry.get("en_remediation", ""))
    if generic and english != generic:  # the check wrote a fix for this node: show it too
        return f"{translated}\n\n{t('fix.specific', lang, text=english)}"
    return translated


def summary(r: Any, lang: str) -> str:
    """The one-line finding; the engine's own notes (blocked) are translated."""
    status = _value(_get(r, "status"))
    blocked_by = list(_get(r, "blocked_by", []) or [])
    if status == "BLOCKED" and blocked_by and lang != "en":
        return t("result.blocked", lang, ids=", ".join(blocked_by))
    return str(_get(r, "summary") or "")


def layer_reason(layer: Any, results: list[Any], lang: str) -> str:
    """Why a layer has its verdict, rebuilt in LANG from the report's structure."""
    english = str(_get(layer, "reason") or "")
    if layer is None:
        return t("reason.not_judged", lang)
    if lang == "en":
        return english
    name = _get(layer, "name")
    mine = [r for r in results if _get(r, "layer") == name]
    verdict = _value(_get(layer, "verdict"))
    blockers = list(_get(layer, "blocked_by", []) or [])
    if verdict == "BLOCKED":
        return t("reason.blocked_by", lang, ids=", ".join(blockers))
    bad = [str(_get(r, "id")) for r in mine if _value(_get(r, "status")) in FAILING]
    warn = [str(_get(r, "id")) for r in mine if _value(_get(r, "status")) == "WARN"]
    skipped = [str(_get(r, "id")) for r in mine if _value(_get(r, "status")) == "SKIP"]
    if verdict == "NOT_READY" and bad:
        reason = t("reason.failing", lang, ids=", ".join(bad))
    elif verdict == "DEGRADED" and warn:
        reason = t("reason.warnings", lang, ids=", ".join(warn))
    elif verdict == "MISSING":
        reason = (
            t("reason.nothing_skipped", lang, ids=", ".join(skipped))
            if skipped
            else t("reason.nothing", lang)
        )
    elif verdict == "READY":
        reason = ""
    else:
        return english  # a verdict the structure does not explain (a required check skipped)
    if blockers and "broken layer" in english:
        reason = "；".join(
            x for x in (reason, t("reason.broken_layer", lang, ids=", ".join(blockers))) if x
        )
    return reason


def tally(results: list[Any], lang: str) -> list[tuple[str, int]]:
    """(status word in LANG, count) in the order statuses first appear."""
    from ascend_audit.i18n import status_word

    counts: dict[str, int] = {}
    for r in results:
        s = _value(_get(r, "status"))
        counts[s] = counts.get(s, 0) + 1
    return [(status_word(s, lang), n) for s, n in counts.items()]
