"""The conformance kit's rule vectors, shared with these tests so both check the same data."""
import json
from pathlib import Path

VECTORS = json.loads((Path(__file__).parents[2] / "conformance" / "data" / "rule_vectors.json").read_text())["vectors"]
REFUSED = [v for v in VECTORS if v["violations"]]
ACCEPTED = [v for v in VECTORS if not v["violations"]]


def as_set(violations):
    return sorted((v["field"], v["rule"], v["message"]) for v in violations)
