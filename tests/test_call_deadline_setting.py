"""The call deadline a test run may lower, and only lower: the spec's ten seconds unless told, never more."""
import pytest

from service.cli import main
from service.config import TEST_CALL_DEADLINE_VARIABLE, Config
from service.limits import CALL_DEADLINE_SECONDS

REFUSAL = f"{TEST_CALL_DEADLINE_VARIABLE} must be a number of seconds above 0 and at most 10 (it only lowers the " \
          "call deadline, for tests)"


def test_unset_it_is_the_specs_ten_seconds():
    assert Config.from_env({}).call_deadline_seconds == CALL_DEADLINE_SECONDS == 10


@pytest.mark.parametrize("text, seconds", [("3", 3.0), ("0.5", 0.5), ("10", 10.0), (" ", 10.0)])
def test_a_test_run_may_lower_it(text, seconds):
    assert Config.from_env({TEST_CALL_DEADLINE_VARIABLE: text}).call_deadline_seconds == seconds


@pytest.mark.parametrize("text", ["10.5", "60", "0", "-1", "nan", "inf", "soon"])
def test_it_is_never_raised_and_nonsense_is_refused(text):
    with pytest.raises(ValueError) as refused:
        Config.from_env({TEST_CALL_DEADLINE_VARIABLE: text})
    assert str(refused.value) == f"{REFUSAL}; got {text!r}."


def test_a_command_names_the_variable_rather_than_failing_with_a_traceback(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv(TEST_CALL_DEADLINE_VARIABLE, "30")
    assert main(["migrate", "--database", f"sqlite:///{tmp_path / 'untouched.db'}"]) == 2
    assert capsys.readouterr().err == f"Error: {REFUSAL}; got '30'.\n"
    assert not (tmp_path / "untouched.db").exists()  # refused before anything was done


def test_the_conformance_kit_lowers_it_through_the_same_variable():
    from conformance.platform import launch

    assert launch.TEST_CALL_DEADLINE_VARIABLE == TEST_CALL_DEADLINE_VARIABLE  # the kit cannot import the service
