"""The driver layer's verdicts on nodes built around the real field outputs (tests/fieldnodes.py).

Each scenario states what its fixture's *.source.txt says was true; a wrong verdict fails here.
`python tests/fieldnodes_report.py` prints the same table without pytest.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fieldnodes import SCENARIOS, Scenario, audit, judge
from shared_fixtures import FIXTURES


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_field_verdict(scenario: Scenario, tmp_path: Path) -> None:
    missing = [f for f in scenario.fixtures if not (FIXTURES / f).is_file()]
    if missing:
        pytest.skip(f"real fixture ../shared/fixtures/{missing[0]} is not beside this checkout")
    wrong = judge(scenario, audit(scenario, tmp_path))
    if scenario.pending:
        assert wrong, f"{scenario.name} is right now: drop its pending note"
        pytest.xfail(f"{scenario.pending}: {wrong[0]}")
    assert wrong == []
