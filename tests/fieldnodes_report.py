"""Print each field scenario's wrong verdicts: `python tests/fieldnodes_report.py`."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fieldnodes import SCENARIOS, audit, judge


def main() -> int:
    wrong_total = 0
    for s in SCENARIOS:
        with tempfile.TemporaryDirectory() as tmp:
            wrong = judge(s, audit(s, Path(tmp)))
        wrong_total += bool(wrong)
        print(f"{'WRONG' if wrong else 'right'}  {s.name}")
        for w in wrong:
            print(f"         {w}")
    print(f"{wrong_total} of {len(SCENARIOS)} scenarios judged wrong")
    return 1 if wrong_total else 0


if __name__ == "__main__":
    raise SystemExit(main())
