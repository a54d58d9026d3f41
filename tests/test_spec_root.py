"""The tests that hold our words to the spec's text cannot pass unseen: without the spec they skip, under CI they fail."""
import pytest

from tests.support import spec as helpers


def test_the_spec_is_found_in_the_first_root_holding_every_file(tmp_path, monkeypatch):
    empty, full = tmp_path / "empty", tmp_path / "full"
    for name in helpers.SPEC_FILES:
        (full / name).parent.mkdir(parents=True, exist_ok=True)
        (full / name).write_text("text", encoding="utf-8")
    (empty / "spec").mkdir(parents=True)
    (empty / helpers.SPEC_FILES[0]).write_text("only one of them", encoding="utf-8")
    monkeypatch.setattr(helpers, "SPEC_ROOTS", [empty, full])
    assert helpers.spec_root() == full


@pytest.mark.parametrize("ci, outcome", [("", pytest.skip.Exception), ("1", pytest.fail.Exception),
                                         ("true", pytest.fail.Exception)])
def test_without_the_spec_a_test_skips_but_fails_under_ci(tmp_path, monkeypatch, ci, outcome):
    monkeypatch.setattr(helpers, "SPEC_ROOTS", [tmp_path])
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="the spec's text is not in any of"):
        helpers.spec_root()
