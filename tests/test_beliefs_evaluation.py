"""Issue #12: `manage.py evaluate_beliefs` derives a log's checks through the real services
and scores p_right beside baselines of the same run; the simulated population it is
measured on has known truth."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command

from beliefs import evaluation
from beliefs.simulation import SETTINGS, Setting, forecast_at_cut, simulate
from concepts.models import Concept
from memory.models import Organization

pytestmark = pytest.mark.django_db

SMALL = replace(SETTINGS["default"], students=60, concepts=8)


def _seeded_rows(setting: Setting) -> list:
    """Seed 7's rows, checked to be the same every time, other than seed 8's, and to hold
    every verdict."""
    rows = simulate(7, setting)
    assert rows == simulate(7, setting)
    assert rows != simulate(8, setting)
    assert {r.verdict for r in rows} == {"right", "partial", "wrong"}
    return rows


def _steps(rows):
    """(previous, check) for each check after the first of its student-concept."""
    last = {}
    for r in rows:
        key = (r.student, r.concept)
        if key in last:
            yield last[key], r
        last[key] = r


def test_the_simulated_population_is_seeded_and_realistic():
    rows = _seeded_rows(SMALL)
    students = {r.student for r in rows}
    assert len(students) == 60
    # Several checks per session minutes apart, and gaps of days between sessions.
    by_student: dict[str, list] = {}
    for r in rows:
        by_student.setdefault(r.student, []).append(r.time)
    gaps = [b - a for times in by_student.values() for a, b in zip(times, times[1:], strict=False)]
    assert any(g < timedelta(minutes=10) for g in gaps)
    assert any(g > timedelta(days=3) for g in gaps)
    # Heterogeneous truth: students and concepts differ.
    assert max(r.p_true for r in rows) - min(r.p_true for r in rows) > 0.5


def test_under_the_mastery_rule_a_session_practises_a_concept_until_three_right_in_a_row():
    setting = replace(SETTINGS["mastery"], students=40, concepts=6)
    runs: dict[tuple[str, str], list[list[str]]] = {}
    last: dict[tuple[str, str], object] = {}
    for r in simulate(4, setting):
        key = (r.student, r.concept)
        if key not in last or r.time - last[key] > timedelta(hours=6):
            runs.setdefault(key, []).append([])
        runs[key][-1].append(r.verdict)
        last[key] = r.time
    every_run = [run for key_runs in runs.values() for run in key_runs]
    assert all(run[-3:] == ["right"] * 3 or len(run) == 10 for run in every_run)
    assert any(len(run) == 3 for run in every_run) and any(len(run) > 5 for run in every_run)


def test_forgetting_lowers_the_truth_after_a_long_break():
    setting = Setting(students=40, concepts=4, long_break_share=0.5, learning_rate=0.8)
    dropped = sum(
        r.p_true < before.p_true
        for before, r in _steps(simulate(3, setting))
        if r.time - before.time > timedelta(days=45)
    )
    assert dropped > 0


def _first_concepts(setting) -> dict[str, str]:
    """Each student's first concept."""
    first: dict[str, str] = {}
    for r in simulate(5, setting):
        first.setdefault(r.student, r.concept)
    return first


def test_in_the_shuffled_population_students_meet_the_concepts_in_orders_of_their_own():
    # One curriculum: every student starts with one of its first two concepts.
    assert set(_first_concepts(SMALL).values()) <= {"Concept 01", "Concept 02"}
    shuffled = replace(SETTINGS["shuffled"], students=60, concepts=8)
    assert len(set(_first_concepts(shuffled).values())) >= 6


def _fall_between_sittings(setting) -> float:
    """Mean fall of the truth from a sitting's last check of a concept to the first
    check of it in a later sitting."""
    falls = [
        before.p_true - r.p_true
        for before, r in _steps(simulate(2, setting))
        if r.time - before.time > timedelta(hours=1)
    ]
    return sum(falls) / len(falls)


def test_a_warm_up_lifts_a_sitting_more_than_it_carries_into_the_next():
    warm = replace(SETTINGS["warmup"], students=60, concepts=8)
    assert _fall_between_sittings(warm) > _fall_between_sittings(replace(warm, warmup=0.0)) + 0.03


KNOWLEDGE = replace(SETTINGS["knowledge"], students=60, concepts=8)


def test_the_knowledge_population_is_seeded_and_its_learners_come_to_know_concepts():
    rows = _seeded_rows(KNOWLEDGE)
    # Where a student checked a concept six times or more, the truth of their first check
    # is lower, on average, than of their sixth and later: checks teach what was unknown.
    assert _practice_gain(rows) > 0.03
    assert _practice_gain(simulate(7, replace(KNOWLEDGE, transition=1e-9))) < 0.01
    # Known and unknown concepts, items of different difficulty: a wide truth.
    assert max(r.p_true for r in rows) - min(r.p_true for r in rows) > 0.6
    # The logistic populations draw nothing of it: their rows are as before the family.
    assert simulate(7, SMALL) == simulate(7, replace(SMALL, transition=0.9, item_sigma=2.0))


def _practice_gain(rows) -> float:
    truths: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        truths.setdefault((r.student, r.concept), []).append(r.p_true)
    long = [t for t in truths.values() if len(t) >= 6]
    first = sum(t[0] for t in long) / len(long)
    return sum(sum(t[5:]) / len(t[5:]) for t in long) / len(long) - first


def test_in_the_knowledge_population_a_long_break_loses_what_was_known():
    setting = replace(KNOWLEDGE, long_break_share=0.5, forgetting_half_life_days=20.0)
    # Known before the break (truth above 0.7), not after it (below 0.4).
    dropped = sum(
        before.p_true > 0.7 and r.p_true < 0.4
        for before, r in _steps(simulate(3, setting))
        if r.time - before.time > timedelta(days=45)
    )
    assert dropped > 0


def test_the_knowledge_population_has_no_forecast_and_is_scored_beside_its_truth(
    monkeypatch, tmp_path, capsys
):
    rows = simulate(1, KNOWLEDGE)
    split = evaluation.split_at_cuts(rows, history_share=0.7)
    with pytest.raises(ValueError, match="no forecast"):
        forecast_at_cut(1, KNOWLEDGE, history=split.history, targets=split.targets, cuts={})
    monkeypatch.setitem(SETTINGS, "small-knowledge", KNOWLEDGE)
    out = tmp_path / "scores.json"
    call_command(
        "evaluate_beliefs", "--simulate", "1", "--setting", "small-knowledge", "--json", str(out)
    )
    assert f"| {evaluation.FORECAST_NAME} |" not in capsys.readouterr().out
    scores = {s["name"]: s for s in json.loads(out.read_text())["scores"]}
    assert scores["beliefs (p_right)"]["auc"] < scores["truth (generating model)"]["auc"]


def test_auc_counts_ties_as_half_and_leaves_partials_out():
    assert evaluation.auc([0.9, 0.1], ["right", "wrong"]) == 1.0
    assert evaluation.auc([0.1, 0.9], ["right", "wrong"]) == 0.0
    assert evaluation.auc([0.5, 0.5], ["right", "wrong"]) == 0.5
    assert evaluation.auc([0.9, 0.2, 0.1], ["right", "partial", "wrong"]) == 1.0
    assert evaluation.auc([0.9, 0.8], ["right", "right"]) is None


def test_the_mean_error_says_whether_a_predictor_runs_high_or_low():
    # Outcomes 1, 0, ½ against predictions 0.8, 0.8, 0.5: 0.5 − 0.7 on average.
    high = evaluation.score("p", [0.8, 0.8, 0.5], ["right", "wrong", "partial"])
    assert high.mean_error == pytest.approx(-0.2)
    low = evaluation.score("p", [0.1, 0.3], ["right", "right"])
    assert low.mean_error == pytest.approx(0.8)
    report = evaluation.EvaluationReport(
        checks=3, students=1, concepts=1, history=0, targets=3, from_belief=0, scores=[high]
    )
    assert "| p | 0.500 | 0.200 | -0.200 |" in evaluation.format_report(report)


def test_each_student_is_cut_and_only_later_checks_are_predicted():
    rows = simulate(1, SMALL)
    split = evaluation.split_at_cuts(rows, history_share=0.7)
    for t in split.targets:
        assert t.time >= split.cuts[t.student]
    for h in split.history:
        assert h.student not in split.cuts or h.time < split.cuts[h.student]
    assert len(split.history) + len(split.targets) == len(rows)


def test_the_generating_models_forecast_from_the_checks_before_the_cut_ranks_below_the_truth():
    rows = simulate(1, SMALL)
    split = evaluation.split_at_cuts(rows, history_share=0.7)
    verdicts = [t.verdict for t in split.targets]

    def forecast(targets):
        return forecast_at_cut(
            1, SMALL, history=split.history, targets=targets, cuts=split.cuts, samples=2000
        )

    predicted = forecast(split.targets)
    assert predicted == forecast(split.targets)  # seeded
    # It reads the checks before the cut only: the verdicts after it change nothing.
    flipped = [
        replace(t, verdict="wrong" if t.verdict == "right" else "right") for t in split.targets
    ]
    assert forecast(flipped) == predicted
    # Knowing the population but only the student's history, it ranks well above the
    # per-student baselines and below the truth (which knows each latent state).
    beta = evaluation.baselines(split.history, split.targets)["Beta(4) on concept mean"]
    truth = [t.p_true for t in split.targets]
    assert evaluation.auc(beta, verdicts) + 0.03 < evaluation.auc(predicted, verdicts)
    assert evaluation.auc(predicted, verdicts) < evaluation.auc(truth, verdicts)
    assert all(0.0 < p < 1.0 for p in predicted)


def test_evaluate_beliefs_on_a_simulated_population_scores_its_generating_models_forecast(
    monkeypatch, tmp_path, capsys
):
    monkeypatch.setitem(SETTINGS, "small", SMALL)
    out = tmp_path / "scores.json"
    call_command("evaluate_beliefs", "--simulate", "2", "--setting", "small", "--json", str(out))
    assert f"| {evaluation.FORECAST_NAME} |" in capsys.readouterr().out
    scores = {s["name"]: s for s in json.loads(out.read_text())["scores"]}
    assert scores[evaluation.FORECAST_NAME]["auc"] < scores["truth (generating model)"]["auc"]


@pytest.fixture
def small_log(tmp_path):
    path = tmp_path / "checks.csv"
    evaluation.write_log(path, simulate(5, SMALL))
    return path


def test_evaluate_beliefs_scores_p_right_beside_the_baselines_and_leaves_nothing(
    small_log, tmp_path, capsys
):
    organizations = Organization.objects.count()
    out = tmp_path / "scores.json"
    call_command("evaluate_beliefs", str(small_log), "--json", str(out))
    printed = capsys.readouterr().out
    for name in ("beliefs (p_right)", "concept mean", "Laplace", "Beta(4) on concept mean"):
        assert f"| {name} |" in printed
    assert "| truth (generating model) |" in printed
    assert "0.9–1.0" in printed
    assert "The next check only (the first after the cut of each student-concept" in printed
    assert "The next check of the student-concepts that had a belief at the cut" in printed
    numbers = json.loads(out.read_text())
    # Of the next checks, those a belief predicted: fewer (some pairs had only the prior).
    assert 0 < numbers["believed_next_checks"] < numbers["next_checks"]
    assert len(numbers["believed_next_check_scores"]) == len(numbers["next_check_scores"])
    scores = {s["name"]: s for s in numbers["scores"]}
    # Every later check split by whether a belief predicted it: the two parts make up
    # the whole (their mean errors, weighted by their counts, are the whole's).
    assert "Every later check of the student-concepts that had a belief at the cut" in printed
    assert "Every later check of the student-concepts that had none" in printed
    believed, total = numbers["predicted_by_a_belief"], numbers["predicted_checks"]
    for whole, part, rest in zip(
        numbers["scores"], numbers["believed_scores"], numbers["unbelieved_scores"], strict=True
    ):
        assert part["name"] == rest["name"] == whole["name"]
        mixed = (believed * part["mean_error"] + (total - believed) * rest["mean_error"]) / total
        assert mixed == pytest.approx(whole["mean_error"], abs=1e-9)
    beliefs = scores["beliefs (p_right)"]
    # Seeded data: the same numbers every run. p_right is calibrated and ranks at least
    # as well as the Beta baseline of the same run.
    assert beliefs["ece"] <= 0.05
    assert beliefs["auc"] >= scores["Beta(4) on concept mean"]["auc"]
    assert len(beliefs["bins"]) == 10
    # The scratch organization was rolled back.
    assert Organization.objects.count() == organizations


def test_an_import_derived_live_and_rederived_by_its_first_night_scores_like_the_rederivation(
    small_log, tmp_path
):
    organizations = Organization.objects.count()
    scores = {}
    for protocol, extra in (
        ("rederive", []),
        ("live", ["--live"]),
        ("no fit", ["--live", "--no-learning"]),
    ):
        out = tmp_path / f"{protocol}.json"
        call_command("evaluate_beliefs", str(small_log), "--json", str(out), *extra)
        by_name = {s["name"]: s for s in json.loads(out.read_text())["scores"]}
        scores[protocol] = by_name["beliefs (p_right)"]
    # The night's first fit re-derives the imported pairs with the learning model: the
    # same beliefs as re-deriving every pair twice (seeded: the same numbers), which rank
    # better than the live beliefs they replaced (the Beta posterior, the first students
    # leaning on nobody's beliefs).
    assert scores["live"]["auc"] == pytest.approx(scores["rederive"]["auc"], abs=0.002)
    assert scores["live"]["ece"] == pytest.approx(scores["rederive"]["ece"], abs=0.002)
    assert scores["live"]["auc"] > scores["no fit"]["auc"] + 0.02
    assert Organization.objects.count() == organizations


def test_the_next_check_is_the_first_target_of_each_student_concept_in_time_order():
    t = evaluation.LoggedCheck
    at = simulate(1, replace(SMALL, students=2))[0].time
    targets = [
        t("a", "x", "right", at + timedelta(days=2)),
        t("a", "x", "wrong", at + timedelta(days=1)),
        t("a", "y", "right", at + timedelta(days=3)),
        t("b", "x", "wrong", at + timedelta(days=5)),
        t("b", "x", "right", at + timedelta(days=6)),
    ]
    assert evaluation.next_check_indices(targets) == [1, 2, 3]


def test_a_jsonl_log_reads_like_the_csv(tmp_path):
    rows = simulate(2, replace(SMALL, students=5))
    path = tmp_path / "checks.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(
                {
                    "student": r.student,
                    "concept": r.concept,
                    "verdict": r.verdict,
                    "time": r.time.isoformat(),
                }
            )
            for r in rows
        )
    )
    read = evaluation.read_log(path)
    assert [(r.student, r.concept, r.verdict, r.time) for r in read] == [
        (r.student, r.concept, r.verdict, r.time) for r in rows
    ]


def test_a_log_in_another_spelling_reads_like_ours(tmp_path):
    """Real logs write correctness as 1/0 or true/false and times without a zone or as
    Unix seconds: read as right/wrong and UTC."""
    ours = tmp_path / "ours.csv"
    ours.write_text(
        "student,concept,verdict,time\n"
        "s,c,right,2026-01-01T10:00:00+00:00\n"
        "s,c,wrong,2026-01-01T10:01:00+00:00\n"
        "s,c,partial,2026-01-01T10:02:00+00:00\n"
        "s,c,right,2026-01-01T10:03:00+00:00\n"
    )
    theirs = tmp_path / "theirs.csv"
    theirs.write_text(
        "student,concept,verdict,time\n"
        "s,c,1,2026-01-01 10:00:00\n"
        "s,c,False,2026-01-01T10:01:00\n"
        "s,c,0.5,1767261720\n"
        "s,c,Correct,1767261780.0\n"
    )
    assert evaluation.read_log(theirs) == evaluation.read_log(ours)


def test_partial_credit_reads_as_partial_and_a_hint_as_a_wrong_first_attempt(tmp_path):
    ours = tmp_path / "ours.csv"
    ours.write_text(
        "student,concept,verdict,time\n"
        "s,c,partial,2026-01-01T10:00:00+00:00\n"
        "s,c,partial,2026-01-01T10:01:00+00:00\n"
        "s,c,wrong,2026-01-01T10:02:00+00:00\n"
        "s,c,wrong,2026-01-01T10:03:00+00:00\n"
    )
    theirs = tmp_path / "theirs.csv"
    theirs.write_text(
        "student,concept,verdict,time\n"
        "s,c,0.25,2026-01-01T10:00:00Z\n"
        "s,c,0.8,2026-01-01T10:01:00Z\n"
        "s,c,HINT,2026-01-01T10:02:00Z\n"
        "s,c,Bug,2026-01-01T10:03:00Z\n"
    )
    assert evaluation.read_log(theirs) == evaluation.read_log(ours)
    out_of_range = tmp_path / "out.csv"
    out_of_range.write_text("student,concept,verdict,time\ns,c,1.5,2026-01-01T10:00:00Z\n")
    with pytest.raises(evaluation.LogError, match="line 2: field 'verdict'"):
        evaluation.read_log(out_of_range)


def test_a_latin_1_log_reads_like_its_utf_8_copy(tmp_path):
    # Some public learner logs are saved in Latin-1: "Área" is one byte 0xC1 there.
    text = "student,concept,verdict,time\ns,Área,right,2026-01-01T10:00:00Z\n"
    utf8, latin = tmp_path / "utf8.csv", tmp_path / "latin.csv"
    utf8.write_bytes(text.encode("utf-8"))
    latin.write_bytes(text.encode("latin-1"))
    assert evaluation.read_log(latin) == evaluation.read_log(utf8)
    assert evaluation.read_log(latin)[0].concept == "Área"


def test_a_spreadsheet_or_database_export_reads_like_ours(tmp_path):
    """A tab-separated export with capitalised column names, a byte order mark, times in
    Unix milliseconds and correctness written 1.00/0.00 reads as our own CSV."""
    ours = tmp_path / "ours.csv"
    ours.write_text(
        "student,concept,verdict,time\n"
        "s,c,right,2026-01-01T10:00:00+00:00\n"
        "s,c,wrong,2026-01-01T10:01:00.500000+00:00\n"
    )
    export = tmp_path / "export.tsv"
    export.write_text(
        "\ufeffStudent\tConcept\tVerdict\t Time\n"
        "s\tc\t1.00\t1767261600000\n"
        "s\tc\t0.00\t1767261660500\n",
        encoding="utf-8",
    )
    assert evaluation.read_log(export) == evaluation.read_log(ours)


def test_a_learner_log_with_its_own_column_names_reads_like_ours(tmp_path):
    """Tutoring-system exports name the columns user_id, skill_name, correct, timestamp:
    each read as ours; where two aliases are present the preferred one (the skill's name,
    not its id) is read."""
    ours = tmp_path / "ours.csv"
    ours.write_text(
        "student,concept,verdict,time\n"
        "u7,Fractions,right,2026-01-01T10:00:00+00:00\n"
        "u7,Fractions,wrong,2026-01-01T10:01:00+00:00\n"
    )
    export = tmp_path / "export.csv"
    export.write_text(
        "order_id,User_ID,skill_id,Skill_Name,correct,timestamp\n"
        "1,u7,12,Fractions,1,1767261600\n"
        "2,u7,12,Fractions,0,1767261660\n"
    )
    jsonl = tmp_path / "export.jsonl"
    jsonl.write_text(
        '{"user_id": "u7", "skill": "Fractions", "is_correct": true, '
        '"start_time": "2026-01-01 10:00:00"}\n'
        '{"user_id": "u7", "skill": "Fractions", "is_correct": false, '
        '"start_time": "2026-01-01 10:01:00"}\n'
    )
    assert evaluation.read_log(export) == evaluation.read_log(ours)
    assert evaluation.read_log(jsonl) == evaluation.read_log(ours)
    # Year-first dates with slashes, and a zone written as a word, as exports write them.
    slashed = tmp_path / "slashed.csv"
    slashed.write_text(
        "user_id,skill_name,correct,timestamp\n"
        "u7,Fractions,1,2026/1/1 10:00:00\n"
        "u7,Fractions,0,2026-01-01 10:01:00 UTC\n"
    )
    assert evaluation.read_log(slashed) == evaluation.read_log(ours)
    # A step-level export of a cognitive tutor (KC, first attempt, first transaction).
    steps = tmp_path / "steps.tsv"
    steps.write_text(
        "Row\tAnon Student Id\tKC(Default)\tCorrect First Attempt\tFirst Transaction Time\n"
        "1\tu7\tFractions\t1\t2026-01-01 10:00:00.0\n"
        "2\tu7\tFractions\t0\t2026-01-01 10:01:00.0\n"
    )
    assert evaluation.read_log(steps) == evaluation.read_log(ours)


def test_a_month_or_day_first_date_is_refused_as_ambiguous(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("student,concept,verdict,time\ns,c,right,01/02/2026 10:00\n")
    with pytest.raises(evaluation.LogError, match="line 2: field 'time' is not an ISO 8601"):
        evaluation.read_log(path)


def test_a_log_without_a_column_or_an_alias_of_it_names_the_column(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("user_id,skill,timestamp\nu7,Fractions,1767261600\n")
    with pytest.raises(evaluation.LogError, match="the header has no column verdict$"):
        evaluation.read_log(path)


def test_concept_names_that_fold_to_one_key_are_one_concept(tmp_path, capsys):
    path = tmp_path / "log.csv"
    rows = ["student,concept,verdict,time"]
    for student in range(4):
        for minute, name in enumerate(["Fraction", "fraction", "Área", "Area", "FRACTION"]):
            verdict = "right" if (student + minute) % 2 else "wrong"
            rows.append(f"s{student},{name},{verdict},2026-01-01T00:0{minute}:00Z")
    path.write_text("\n".join(rows) + "\n")
    assert {c.concept for c in evaluation.read_log(path)} == {"Fraction", "Área"}
    call_command("evaluate_beliefs", str(path))
    assert "20 checks, 4 students, 2 concepts" in capsys.readouterr().out


def test_concept_names_longer_than_a_concept_name_are_cut_and_stay_apart(tmp_path, capsys):
    # A tutoring system's skill rules can run past Concept.name's 200 characters.
    rule = "[SkillRule: Select Multiply; " + "MT fraction coeff; " * 12
    path = tmp_path / "log.csv"
    rows = ["student,concept,verdict,time"]
    for student in range(4):
        names = [rule + "one]", rule + "two]", "Fraction", rule + "one]", "Fraction"]
        for minute, name in enumerate(names):
            verdict = "right" if (student + minute) % 2 else "wrong"
            rows.append(f"s{student},{name},{verdict},2026-01-01T00:0{minute}:00Z")
    path.write_text("\n".join(rows) + "\n")
    names = {c.concept for c in evaluation.read_log(path)}
    assert len(names) == 3
    assert max(len(n) for n in names) == Concept._meta.get_field("name").max_length
    call_command("evaluate_beliefs", str(path))
    assert "20 checks, 4 students, 3 concepts" in capsys.readouterr().out


def _cut_log(tmp_path, cut_column: bool):
    """Two students, four checks each, an hour apart; student a cut after their first."""
    lines = ["student,concept,verdict,time" + (",cut" if cut_column else "")]
    for student in ("a", "b"):
        for hour in range(4):
            cut = ",2026-01-01T01:00:00Z" if cut_column and student == "a" else ","
            lines.append(
                f"{student},c,{'right' if hour % 2 else 'wrong'},2026-01-01T0{hour}:00:00Z"
                + (cut if cut_column else "")
            )
    path = tmp_path / "log.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("cut_column", [True, False])
def test_a_cut_the_log_gives_splits_that_student_there(tmp_path, cut_column):
    path = _cut_log(tmp_path, cut_column)
    cuts = None
    if not cut_column:
        cuts = tmp_path / "cuts.csv"
        cuts.write_text("student,cut\na,2026-01-01T01:00:00+00:00\n")
    split = evaluation.split_at_cuts(evaluation.read_log(path, cuts), history_share=0.7)
    # a: the given cut, one check before it; b: the share rule, ceil(0.7 * 4) = 3 before.
    assert split.cuts["a"].hour == 1 and split.cuts["b"].hour == 3
    assert sorted((c.student, c.time.hour) for c in split.targets) == [
        ("a", 1),
        ("a", 2),
        ("a", 3),
        ("b", 3),
    ]


def test_evaluate_beliefs_says_how_many_cuts_the_log_gave(tmp_path, capsys):
    call_command("evaluate_beliefs", str(_cut_log(tmp_path, True)))
    assert "Cuts: 1 given by the log, 1 by the share of each student's checks." in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize(
    ("cuts", "message"),
    [
        ("student,cut\nz,2026-01-01T01:00:00Z\n", "field 'student': no student of the file"),
        ("student,cut\na,soon\n", "line 2: field 'cut' is not an ISO 8601 time"),
        ("student\na\n", "the header has no column cut"),
        ("student,cut\na,2026-01-01T01:00:00Z\na,2026-01-01T02:00:00Z\n", "a second"),
    ],
)
def test_a_bad_file_of_cuts_exits_with_one_line_naming_the_field(tmp_path, cuts, message):
    path = tmp_path / "cuts.csv"
    path.write_text(cuts)
    organizations = Organization.objects.count()
    with pytest.raises(CommandError, match=message):
        call_command("evaluate_beliefs", str(_cut_log(tmp_path, False)), "--cuts", str(path))
    assert Organization.objects.count() == organizations


def test_a_cut_for_a_student_with_no_check_in_the_log_is_left_out_and_said(tmp_path, capsys):
    # A file of cuts made for a whole class, read against a log of part of it.
    path = tmp_path / "cuts.csv"
    path.write_text("student,cut\na,2026-01-01T01:00:00Z\nz,2026-01-01T01:00:00Z\n")
    uncut: list[str] = []
    checks = evaluation.read_log(_cut_log(tmp_path, False), path, uncut=uncut)
    assert {c.student: c.cut for c in checks}["a"].hour == 1
    assert len(uncut) == 1 and uncut[0].endswith("line 3 ('z')")
    call_command("evaluate_beliefs", str(_cut_log(tmp_path, False)), "--cuts", str(path))
    captured = capsys.readouterr()
    assert "left out 1 cuts of students with no check in the log" in captured.err
    assert "Cuts: 1 given by the log, 1 by the share" in captured.out


def test_a_cut_column_may_come_by_a_common_name(tmp_path):
    log = _cut_log(tmp_path, True)
    log.write_text(log.read_text().replace(",cut\n", ",cut_time\n", 1))
    assert {c.student: c.cut for c in evaluation.read_log(log)}["a"].hour == 1
    cuts = tmp_path / "cuts.csv"
    cuts.write_text("user_id,cutoff\na,2026-01-01T02:00:00Z\n")
    checks = evaluation.read_log(_cut_log(tmp_path, False), cuts)
    assert {c.student: c.cut for c in checks}["a"].hour == 2


def test_a_cut_column_that_differs_between_a_students_rows_is_refused(tmp_path):
    path = _cut_log(tmp_path, True)
    path.write_text(
        path.read_text().replace(
            "a,c,right,2026-01-01T03:00:00Z,2026-01-01T01",
            "a,c,right,2026-01-01T03:00:00Z,2026-01-01T02",
        )
    )
    with pytest.raises(CommandError, match="field 'cut' differs between the rows of 'a'"):
        call_command("evaluate_beliefs", str(path))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("student,concept,time\ns,c,2026-01-01T00:00:00+00:00\n", "no column verdict"),
        (
            "student,concept,verdict,time\ns,c,maybe,2026-01-01T00:00:00+00:00\n",
            "line 2: field 'verdict'",
        ),
        ("student,concept,verdict,time\ns,c,right,yesterday\n", "line 2: field 'time'"),
        (
            "student,concept,verdict,time\ns,,right,2026-01-01T00:00:00+00:00\n",
            "field 'concept' is missing",
        ),
        (
            "student,concept,verdict,time\ns,$$,right,2026-01-01T00:00:00+00:00\n",
            "line 2: field 'concept' holds no letter or digit",
        ),
    ],
)
def test_a_bad_log_exits_with_one_line_naming_the_field(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    organizations = Organization.objects.count()
    with pytest.raises(CommandError, match=message):
        call_command("evaluate_beliefs", str(path))
    assert Organization.objects.count() == organizations


def test_rows_that_name_no_skill_are_left_out_only_when_asked_and_counted(tmp_path, capsys):
    # A real export tags some items with no skill: its rows leave the concept empty.
    rows = ["user_id,skill_name,correct,timestamp"]
    for student in range(4):
        for minute in range(6):
            skill = "" if minute == 2 else ("Fractions" if minute % 2 else "Area")
            rows.append(f"u{student},{skill},{(student + minute) % 2},2026-01-01T00:0{minute}:00Z")
    path = tmp_path / "export.csv"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(
        CommandError, match="line 4: field 'concept' is missing .*--skip-incomplete"
    ):
        call_command("evaluate_beliefs", str(path))
    incomplete: list[str] = []
    checks = evaluation.read_log(path, incomplete=incomplete)
    assert len(checks) == 20 and all(c.concept for c in checks)
    assert incomplete == [f"{path} line {4 + 6 * student}" for student in range(4)]
    call_command("evaluate_beliefs", str(path), "--skip-incomplete")
    captured = capsys.readouterr()
    assert "20 checks, 4 students, 2 concepts" in captured.out
    assert f"left out 4 rows that miss a field (the first: {path} line 4)" in captured.err
    # A value that is there but wrong is still an error, flag or not.
    path.write_text("\n".join([*rows, "u9,Area,maybe,2026-01-01T00:09:00Z"]) + "\n")
    with pytest.raises(CommandError, match="line 26: field 'verdict'"):
        call_command("evaluate_beliefs", str(path), "--skip-incomplete")


def test_skip_incomplete_goes_with_a_file():
    with pytest.raises(CommandError, match="go with a FILE"):
        call_command("evaluate_beliefs", "--simulate", "1", "--skip-incomplete")


def test_exactly_one_source_is_required():
    with pytest.raises(CommandError, match="exactly one of"):
        call_command("evaluate_beliefs")
