"""A remediation never tells people to do something destructive without saying so (issue 28).

Resetting a chip kills whatever holds it; a reboot or power cycle stops every service on the node;
unloading the driver takes every NPU away. Every built-in check's fix, in English and Chinese,
that names such a step also carries a ⚠ sentence saying what it destroys.
"""

from __future__ import annotations

import re

import pytest

from ascend_audit.i18n import check_text
from ascend_audit.registry import load_registry

DESTRUCTIVE = re.compile(r"\breset\b|\breboot|power-cycle|power cycle|rmmod|\bkill\b", re.I)
SAYS_SO = {
    "en": re.compile(r"⚠[^.]*\b(kills?|stops?|drops?|takes?)\b", re.I),
    "zh": re.compile(r"⚠[^。]*(杀掉|停掉|中断|丢失)"),
}
SPECS = load_registry(entry_points=False, catalogue_only=True).all()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_destructive_steps_say_what_they_destroy(lang):
    """Judged on the English fix (the reference text); its translation carries the ⚠ too."""
    unmarked = []
    seen = 0
    for spec in SPECS:
        if not DESTRUCTIVE.search(spec.remediation):
            continue
        seen += 1
        fix = check_text(spec.id, "remediation", lang, spec.remediation)
        if not SAYS_SO[lang].search(fix):
            unmarked.append(spec.id)
    assert seen >= 4  # reset/reboot fixes exist (DRV-NPU-001/002/003, DRV-VER-001)
    assert unmarked == [], f"{lang}: destructive fix without a ⚠ warning: {unmarked}"


def test_the_guard_sees_an_unmarked_reset():
    assert DESTRUCTIVE.search("reset the chip (`npu-smi set -t reset`)")
    assert not SAYS_SO["en"].search("reset the chip (`npu-smi set -t reset`)")
    assert SAYS_SO["en"].search("⚠ A reset kills every process on the chip")
