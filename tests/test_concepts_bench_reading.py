"""bench_reading's cost model (issue 13, item 7): a file's reading time as a fixed part
plus a part per concept found, and what per-concept cost a last / first ratio needs."""

from __future__ import annotations

import pytest

from concepts.management.commands.bench_reading import CostFit, cost_fit


def test_the_fit_recovers_a_fixed_and_a_per_concept_cost_leaving_the_model_load_out():
    found = [0, 5, 10, 20, 40, 3]
    seconds = [(25 + 1.5 * n) / 1000 for n in found]
    seconds[0] = 1.2  # the worker loading its embedding model: no reading cost
    fit = cost_fit(seconds, found)
    assert fit is not None
    assert fit.fixed_ms == pytest.approx(25.0)
    assert fit.per_concept_ms == pytest.approx(1.5)


def test_what_a_ratio_needs_of_the_per_concept_cost():
    fit = CostFit(fixed_ms=25.0, per_concept_ms=1.3)
    # Files finding 6 concepts against files finding 35: 1.5x needs 0.5 x 25 / (35 - 9).
    assert fit.per_concept_ms_for(6, 35) == pytest.approx(12.5 / 26)
    # Late files finding no more than 1.5x as many concepts meet it at any cost.
    assert fit.per_concept_ms_for(6, 8) is None


def test_no_fit_without_enough_files_or_spread():
    assert cost_fit([0.03, 0.04], [1, 2]) is None
    assert cost_fit([0.03, 0.04, 0.05], [4, 4, 4]) is None
