"""The scenario runner passes in the test suite (R-8.1), and fails loudly when it should."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from tutorbrain.evaluation.scenarios import SCENARIO_LANGUAGES, scenarios_run, scenarios_table


@pytest.mark.django_db(transaction=True)
def test_every_scenario_passes_in_every_language(organization):
    results = scenarios_run(organization=organization)
    table = scenarios_table(results)
    assert len(results) == sum(len(v) for v in SCENARIO_LANGUAGES.values())
    assert all(r.passed for r in results), table


def test_every_scenario_runs_in_more_than_one_language():
    assert all(len(set(languages)) >= 2 for languages in SCENARIO_LANGUAGES.values())
    assert {"july", "empty_month"} <= set(SCENARIO_LANGUAGES)


@pytest.mark.django_db(transaction=True)
def test_the_command_prints_the_table_and_exits_zero_when_all_pass(capsys):
    call_command("scenarios", only=["empty_month"])
    out = capsys.readouterr().out
    assert "empty_month" in out and "3/3 passed" in out


@pytest.mark.django_db
def test_the_command_exits_non_zero_when_a_scenario_fails(monkeypatch, capsys):
    from tutorbrain.evaluation import scenarios

    def failing(organization, language):
        raise scenarios.ScenarioFailed("July ids [1, 2] not all recalled; recalled []")

    monkeypatch.setitem(scenarios.SCENARIOS, "july", failing)
    with pytest.raises(SystemExit) as exit_info:
        call_command("scenarios", only=["july"])
    assert exit_info.value.code == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "0/3 passed" in out


def test_a_crashing_scenario_is_a_failure_that_names_its_cause(monkeypatch):
    from tutorbrain.evaluation import scenarios

    def crashing(organization, language):
        raise KeyError("no such concept")

    monkeypatch.setitem(scenarios.SCENARIOS, "july", crashing)
    results = scenarios.scenarios_run(organization=None, only=["july"])
    assert [r.passed for r in results] == [False, False, False]
    assert "KeyError" in results[0].detail
