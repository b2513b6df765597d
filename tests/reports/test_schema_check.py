"""reports/schema_check.py judges reports as the JSON Schema does (jsonschema is the referee)."""

from __future__ import annotations

import copy
import json
import random

import jsonschema
import pytest
from ascend_audit.reports.json_report import report_json, schema
from ascend_audit.reports.schema_check import schema_problem
from report_samples import SAMPLES

SCHEMA = schema()
ODD = [None, "", "x", 0, -1, 1.5, True, [], {}, ["a"], {"k": 1}]


def _doc(name: str) -> dict:
    return json.loads(report_json(SAMPLES[name]()))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_sample_conforms(name):
    assert schema_problem(_doc(name), SCHEMA) is None


@pytest.mark.parametrize(
    ("change", "found"),
    [
        (lambda d: d.pop("verdict"), "$: missing 'verdict'"),
        (lambda d: d.update(verdict="GREEN"), "$.verdict: 'GREEN' is not one of"),
        (lambda d: d["results"][0].update(summary=3), "$.results[0].summary: expected string"),
        (lambda d: d["results"][0].update(duration_ms=-1), "$.results[0].duration_ms: -1 is below"),
        (lambda d: d["host"].update(extra=[1]), "$.host.extra: expected string or number"),
        (lambda d: d.update(schema_version="2.0"), "does not match"),
        (lambda d: d["layers"][0].update(blocked_by=[1]), "$.layers[0].blocked_by[0]"),
    ],
)
def test_each_violation_is_named_with_its_path(change, found):
    doc = _doc("mixed")
    change(doc)
    problem = schema_problem(doc, SCHEMA)
    assert problem is not None and found in problem


def _mutate(node, rng: random.Random) -> None:
    if isinstance(node, dict):
        for key in list(node):
            r = rng.random()
            if r < 0.03:
                del node[key]
            elif r < 0.08:
                node[key] = copy.deepcopy(rng.choice(ODD))
            else:
                _mutate(node[key], rng)
    elif isinstance(node, list):
        for item in node:
            _mutate(item, rng)


@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_jsonschema_on_mutated_reports(seed):
    rng = random.Random(seed)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    agreed = 0
    for name in sorted(SAMPLES):
        for _ in range(25):
            doc = _doc(name)
            _mutate(doc, rng)
            ours = schema_problem(doc, SCHEMA) is None
            theirs = validator.is_valid(doc)
            assert ours == theirs, (name, schema_problem(doc, SCHEMA))
            agreed += 1
    assert agreed == 25 * len(SAMPLES)
