"""Make the sample report builders importable and offer them as a fixture."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from report_samples import SAMPLES

from ascend_audit.model import Report


@pytest.fixture(params=sorted(SAMPLES))
def sample(request: pytest.FixtureRequest) -> tuple[str, Report]:
    """Each sample report by name."""
    return request.param, SAMPLES[request.param]()
