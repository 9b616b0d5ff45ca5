"""The memory block's retrieval on the real database (SPEC R-5.2–R-5.8, R-6.1)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from beliefs.models import Belief
from concepts.models import Concept
from memory.models import Episode
from memory.services import EventSpec, episode_append, episode_append_batch, subject_file_register
from tests.factories import OrganizationFactory, PairFactory
from tutorbrain.block.build import memory_block_build
from tutorbrain.block.format import STALE_CITATION_LABEL, BudgetTooSmall
from tutorbrain.block.models import WorkingSet, WorkingSetEpisode, concept_key, word_key
from tutorbrain.block.tokens import count_tokens
from tutorbrain.block.working_set import working_set_rebuild
from tutorbrain.embedder import embed

NOW = datetime(2026, 9, 20, 12, 0, tzinfo=UTC)
BUDGET = 900


def build(pair, message, *, now=NOW, budget=BUDGET, **kwargs):
    return memory_block_build(
        organization=pair.subject.organization,
        student_external_id=pair.student.external_id,
        subject_external_id=pair.subject.external_id,
        message=message,
        now=now,
        budget=budget,
        **kwargs,
    )


def add(pair, kind, summary, when, *, embed_it=True, **fields):
    return episode_append(
        pair=pair, kind=kind, summary=summary, occurred_at=when, now=when, embed=embed_it, **fields
    )


def add_many(pair, specs: list[EventSpec], *, embed_it=False):
    out = []
    for start in range(0, len(specs), 500):
        out.extend(
            episode_append_batch(
                pair=pair, events=specs[start : start + 500], now=NOW, embed=embed_it
            )
        )
    return out


def filler(count: int, *, start: datetime, step: timedelta, topic_words=("weather", "lunch")):
    return [
        EventSpec(
            kind="question",
            summary=f"Small talk number {i} about the {topic_words[i % len(topic_words)]}",
            occurred_at=start + i * step,
        )
        for i in range(count)
    ]


def concept(subject, name, *, centrality=0.1, summary="", readiness=0.6):
    from concepts.naming import concept_key

    return Concept.objects.create(
        subject=subject,
        name=name,
        key=concept_key(name),
        summary=summary or f"What {name.lower()} is",
        centrality=centrality,
        readiness=readiness,
        embedding=embed([name])[0],
    )


def belief(pair, concept_row, claim, confidence):
    return Belief.objects.create(
        pair=pair,
        concept=concept_row,
        claim=claim,
        confidence=confidence,
        reason=Belief.Reason.EVIDENCE,
        check_count=1,
        created_at=NOW - timedelta(days=3),
    )


def recalled_ids(result) -> set[int]:
    return {r.id for r in result.recalled}


@pytest.fixture
def pair(db):
    return PairFactory(student__timezone="Europe/Madrid")


# ---- widen first, R-5.3 match filter ---------------------------------------------------


def test_a_matching_march_episode_beats_500_newer_non_matching_ones(pair):
    march = add(
        pair,
        "check",
        "Check on osmosis: wrong",
        datetime(2026, 3, 10, 9, tzinfo=UTC),
        verdict="wrong",
        topic="osmosis",
        text="The student thought water moves towards less solute.",
    )
    add_many(pair, filler(500, start=datetime(2026, 4, 1, tzinfo=UTC), step=timedelta(hours=8)))

    result = build(pair, "Why does osmosis make the cell burst?")

    assert march.pk in recalled_ids(result)
    assert "Check on osmosis: wrong" in result.text


def test_with_a_matching_message_non_matching_recent_episodes_are_absent(pair):
    match = add(pair, "question", "What is the mitochondria for?", NOW - timedelta(days=90))
    recent = add_many(
        pair, filler(20, start=NOW - timedelta(days=2), step=timedelta(hours=1)), embed_it=True
    )

    result = build(pair, "Tell me about the mitochondria")

    assert recalled_ids(result) == {match.pk}
    assert not ({e.pk for e in recent} & recalled_ids(result))


def test_with_nothing_matching_the_recent_past_is_offered(pair):
    recent = add_many(pair, filler(5, start=NOW - timedelta(days=2), step=timedelta(hours=1)))

    result = build(pair, "What about photosynthesis in cacti?")

    assert recalled_ids(result) == {e.pk for e in recent}


def test_with_no_message_recency_alone_ranks(pair):
    old = add_many(pair, filler(30, start=NOW - timedelta(days=300), step=timedelta(hours=1)))
    new = add_many(pair, filler(10, start=NOW - timedelta(days=1), step=timedelta(minutes=5)))

    result = build(pair, "", budget=400)

    ids = recalled_ids(result)
    assert ids, result.text
    assert ids <= {e.pk for e in old + new}
    newest_shown = max(e.occurred_at for e in Episode.objects.filter(pk__in=ids))
    assert newest_shown == new[-1].occurred_at
    assert result.mode == "ordinary"


def test_nine_identical_questions_appear_once_with_their_count(pair):
    for i in range(9):
        add(pair, "question", "What is a cell?", datetime(2026, 6, 1 + 7 * i % 28, tzinfo=UTC))

    result = build(pair, "what is a cell")

    assert result.text.count("What is a cell?") == 1
    assert "(and 8 more times like it)" in result.text
    assert len(result.recalled) == 1
    assert result.recalled[0].repeats == 8


# ---- time windows, R-5.6 narrations ------------------------------------------------------


@pytest.fixture
def july_history(pair):
    june = add(pair, "question", "What is diffusion?", datetime(2026, 6, 20, 10, tzinfo=UTC))
    july = [
        add(pair, "question", "What are ribosomes?", datetime(2026, 7, 3, 10, tzinfo=UTC)),
        add(
            pair,
            "check",
            "Check on ribosomes: right",
            datetime(2026, 7, 15, 10, tzinfo=UTC),
            verdict="right",
            topic="ribosomes",
        ),
        add(pair, "answer", "Explained the Golgi apparatus", datetime(2026, 7, 28, 10, tzinfo=UTC)),
    ]
    august = add(pair, "question", "What is osmosis?", datetime(2026, 8, 5, 10, tzinfo=UTC))
    return june, july, august


@pytest.mark.parametrize(
    "message",
    [
        "What did we see in July?",
        "¿Qué vimos en julio?",
        "o que vimos em julho?",
        "qu'avons-nous vu en juillet ?",
        "ماذا درسنا في يوليو",
    ],
)
def test_a_july_question_in_any_language_restricts_recall_to_july(july_history, pair, message):
    june, july, august = july_history

    result = build(pair, message)

    assert recalled_ids(result) == {e.pk for e in july}
    assert result.window is not None and result.window.label == "July 2026"
    assert "July 2026" in result.text


@pytest.mark.parametrize(
    "message",
    ["What did we see in July?", "¿Qué vimos en julio?", "ماذا درسنا في يوليو"],
)
def test_an_empty_july_says_there_is_no_record_and_lists_no_session(pair, message):
    add(pair, "question", "What is diffusion?", datetime(2026, 6, 20, 10, tzinfo=UTC))
    add(pair, "question", "What is osmosis?", datetime(2026, 8, 5, 10, tzinfo=UTC))

    result = build(pair, message)

    assert "No record of work with this student in July 2026." in result.text
    assert result.recalled == []
    assert "EARLIER WORK" not in result.text
    assert "diffusion" not in result.text and "osmosis" not in result.text


def test_july_is_read_in_the_students_time_zone(db):
    pair = PairFactory(student__timezone="Pacific/Auckland")
    # 30 June 14:00 UTC is already 1 July in Auckland.
    edge = add(pair, "question", "What is a vacuole?", datetime(2026, 6, 30, 14, tzinfo=UTC))

    result = build(pair, "What did we see in July?")

    assert recalled_ids(result) == {edge.pk}


def test_a_september_answer_narrating_july_is_not_recalled_as_a_july_memory(july_history, pair):
    june, july, august = july_history
    narration = add(
        pair,
        "answer",
        "In July we saw ribosomes and the Golgi apparatus",
        datetime(2026, 9, 2, 10, tzinfo=UTC),
        text="In July we saw ribosomes, and you got the check on ribosomes right.",
        recalled_ids=[july[0].pk, july[1].pk],
    )
    late_july_recap = add(
        pair,
        "answer",
        "Recap: last time we saw ribosomes",
        datetime(2026, 7, 30, 10, tzinfo=UTC),
        text="Last time we saw ribosomes; today we go on.",
    )

    for message in ("What did we see in July?", "What did we see in July about ribosomes?"):
        result = build(pair, message)
        ids = recalled_ids(result)
        assert narration.pk not in ids
        assert late_july_recap.pk not in ids
        assert {july[0].pk, july[1].pk} <= ids


def test_a_narrating_answer_is_still_an_ordinary_memory_of_its_own_day(july_history, pair):
    june, july, august = july_history
    narration = add(
        pair,
        "answer",
        "In July we saw ribosomes",
        datetime(2026, 9, 2, 10, tzinfo=UTC),
        recalled_ids=[july[0].pk],
    )

    result = build(pair, "explain ribosomes again")

    assert narration.pk in recalled_ids(result)


# ---- history questions -----------------------------------------------------------------


@pytest.fixture
def record(pair):
    subject = pair.subject
    osmosis = concept(subject, "Osmosis", centrality=0.4)
    cytoplasm = concept(subject, "Cytoplasm", centrality=0.2)
    belief(pair, osmosis, "struggles", 0.7)
    belief(pair, cytoplasm, "understands", 0.72)
    episodes = [
        add(
            pair, "question", "Can we go over eukaryotic cells?", datetime(2026, 7, 12, tzinfo=UTC)
        ),
        add(pair, "answer", "Explained eukaryotic cells", datetime(2026, 7, 12, 0, 5, tzinfo=UTC)),
        add(
            pair,
            "check",
            "Check on osmosis: wrong",
            datetime(2026, 8, 2, tzinfo=UTC),
            verdict="wrong",
            topic="osmosis",
            concepts=["Osmosis"],
        ),
        add(
            pair,
            "check",
            "Check on cytoplasm: right",
            datetime(2026, 9, 18, tzinfo=UTC),
            verdict="right",
            topic="cytoplasm",
            concepts=["Cytoplasm"],
        ),
    ]
    return episodes


@pytest.mark.parametrize("message", ["What did I get wrong so far?", "ماذا أخطأت"])
def test_a_history_question_puts_beliefs_and_earlier_work_first_with_the_explicit_line(
    record, pair, message
):
    result = build(pair, message)
    lines = result.text.splitlines()

    assert result.mode == "history"
    assert lines[1].startswith("THE STUDENT IS ASKING ABOUT THEIR OWN RECORD.")
    beliefs_at = result.text.index("WHAT YOU CURRENTLY BELIEVE")
    work_at = result.text.index("EARLIER WORK WITH THIS STUDENT")
    map_at = result.text.index("SUBJECT MAP (")
    assert beliefs_at < work_at < map_at
    assert "- struggles with Osmosis (0.70)" in result.text
    kinds = {r.kind for r in result.recalled}
    assert {"question", "answer", "check"} <= kinds  # the conversation, not only checks
    assert "student: Can we go over eukaryotic cells?" in result.text


@pytest.mark.parametrize("message", ["What did I get wrong so far?", "¿En qué me equivoqué?"])
def test_asking_what_one_got_wrong_recalls_an_old_miss_before_many_newer_successes(pair, message):
    miss = add(
        pair,
        "check",
        "Check on enzymes: wrong",
        datetime(2026, 3, 2, tzinfo=UTC),
        verdict="wrong",
        topic="enzymes",
        embed_it=False,
    )
    add_many(
        pair,
        [
            EventSpec(
                kind="check",
                summary=f"Check on topic number {i}: right",
                verdict="right",
                topic=f"topic number {i}",
                occurred_at=datetime(2026, 9, 1, tzinfo=UTC) + timedelta(hours=i),
            )
            for i in range(60)
        ],
    )

    result = build(pair, message, budget=250)

    assert result.mode == "history"
    assert miss.pk in recalled_ids(result)


def test_an_ordinary_question_puts_the_map_first(record, pair):
    result = build(pair, "How does osmosis work?")

    assert result.mode == "ordinary"
    assert "THE STUDENT IS ASKING ABOUT THEIR OWN RECORD" not in result.text
    assert result.text.index("SUBJECT MAP (") < result.text.index("WHAT YOU CURRENTLY BELIEVE")
    assert (
        "SUBJECT MAP (2 concepts; readiness of the material 0%, from its files, checks and "
        "teaching; NOT the student's mastery):"
    ) in result.text


def test_a_message_in_another_language_reaches_episodes_through_its_routed_concept(record, pair):
    osmosis_check = next(e for e in record if e.summary == "Check on osmosis: wrong")

    result = build(pair, "¿Qué es la ósmosis?")

    assert osmosis_check.pk in recalled_ids(result)
    assert "Osmosis" in result.routed_concepts


def test_the_map_line_of_a_leaf_the_message_names_leads_the_map_whatever_its_centrality(pair):
    from concepts.models import Prerequisite

    subject = pair.subject
    hubs = [concept(subject, f"Hub topic {i}", centrality=0.9 - i * 0.01) for i in range(30)]
    leaf = concept(subject, "Turgor pressure", centrality=0.001)
    Prerequisite.objects.create(subject=subject, concept=leaf, prerequisite=hubs[0])
    add(pair, "question", "What is the weather like?", NOW - timedelta(days=1), embed_it=False)

    for message in (
        "What should I review before turgor pressure?",
        "How does turgor pressure work?",
    ):
        result = build(pair, message, budget=300)
        map_section = result.text[result.text.index("SUBJECT MAP (") :].splitlines()
        assert map_section[1].startswith("- Turgor pressure:"), (message, map_section[:3])
        assert "builds on: Hub topic 0" in map_section[1]


# ---- format, R-6 stale citations --------------------------------------------------------


def test_a_recalled_answer_whose_cited_file_was_replaced_carries_the_stale_label(pair):
    file = subject_file_register(
        subject=pair.subject, name="cells.md", content=b"# Cells\nversion one", now=NOW
    )
    answer = add(
        pair,
        "answer",
        "Explained the nucleus from the notes",
        NOW - timedelta(days=30),
        citations=[{"file_id": file.pk, "pages": [1]}],
    )
    kept = add(
        pair,
        "answer",
        "Explained the nucleus membrane",
        NOW - timedelta(days=20),
        citations=[{"file_id": file.pk}],
    )
    before = build(pair, "what is the nucleus")
    assert STALE_CITATION_LABEL not in before.text

    subject_file_register(
        subject=pair.subject, name="cells.md", content=b"# Cells\nversion two", now=NOW
    )
    after = build(pair, "what is the nucleus")

    line = next(li for li in after.text.splitlines() if "nucleus from the notes" in li)
    assert line.endswith(STALE_CITATION_LABEL)
    by_id = {r.id: r for r in after.recalled}
    assert by_id[answer.pk].verification == "changed"
    assert by_id[kept.pk].verification == "changed"


def test_a_conversation_memory_is_unverifiable_not_holds(pair):
    question = add(pair, "question", "What is the nucleus?", NOW - timedelta(days=1))

    result = build(pair, "nucleus")

    assert {r.id: r.verification for r in result.recalled} == {question.pk: "unverifiable"}


def test_a_student_with_no_history_gets_a_short_honest_block(pair):
    result = build(pair, "What is osmosis?")

    assert "none on record" in result.text
    assert result.recalled == []
    assert result.tokens < 200
    assert len(result.text.splitlines()) <= 6


def test_an_unknown_student_gets_an_honest_empty_block_and_nothing_is_created(pair):
    from memory.models import Pair, Student

    students, pairs = Student.objects.count(), Pair.objects.count()

    result = memory_block_build(
        organization=pair.subject.organization,
        student_external_id="never-seen",
        subject_external_id=pair.subject.external_id,
        message="What is osmosis?",
        now=NOW,
        budget=BUDGET,
    )

    assert result.known_pair is False
    assert result.recalled == []
    assert "===== END OF MEMORY =====" in result.text
    assert (Student.objects.count(), Pair.objects.count()) == (students, pairs)


def test_another_organizations_student_reads_as_unknown_and_leaks_nothing(pair):
    add(pair, "question", "My secret question about osmosis", NOW - timedelta(days=1))
    other = OrganizationFactory()

    result = memory_block_build(
        organization=other,
        student_external_id=pair.student.external_id,
        subject_external_id=pair.subject.external_id,
        message="osmosis",
        now=NOW,
        budget=BUDGET,
    )

    assert result.known_pair is False
    assert "secret" not in result.text
    assert result.recalled == []


def test_the_block_build_runs_a_bounded_number_of_queries(
    record, pair, django_assert_max_num_queries
):
    file = subject_file_register(subject=pair.subject, name="n.md", content=b"x", now=NOW)
    add(
        pair,
        "answer",
        "Explained osmosis with the notes",
        NOW - timedelta(days=1),
        citations=[{"file_id": file.pk}],
    )
    add_many(pair, filler(300, start=NOW - timedelta(days=200), step=timedelta(hours=3)))
    vector = embed(["How does osmosis work in the cytoplasm?"])[0]
    build(pair, "warm up", vector=vector)

    # The lookup (with the self-model's figures), the candidates, the beliefs and the
    # cited file's status; the map and the session settings were read by the first build.
    with django_assert_max_num_queries(4):
        result = build(pair, "How does osmosis work in the cytoplasm?", vector=vector)

    assert result.recalled


# ---- the budget on real histories (property-based) ----------------------------------------

summary_text = st.text(
    alphabet=st.sampled_from(list("abcdefghijklmnop osmiscell ÁéñçØ مرحبا 0123 ,.?")),
    min_size=1,
    max_size=300,
).filter(lambda s: s.strip())


@hyp_settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    budget=st.integers(min_value=60, max_value=1500),
    summaries=st.lists(summary_text, max_size=25),
    message=st.sampled_from(
        ["", "what is osmosis", "What did I get wrong so far?", "¿Qué vimos en julio?"]
    ),
)
def test_a_built_block_never_exceeds_its_budget(db, budget, summaries, message):
    pair = PairFactory()
    kinds = ["question", "answer", "check", "taught"]
    add_many(
        pair,
        [
            EventSpec(
                kind=kinds[i % 4],
                summary=s,
                verdict="wrong" if kinds[i % 4] == "check" else "",
                occurred_at=NOW - timedelta(days=11 * i),
            )
            for i, s in enumerate(summaries)
        ],
    )
    try:
        result = build(pair, message, budget=budget)
    except BudgetTooSmall as error:
        assert budget < error.minimum
        return
    assert result.tokens == count_tokens(result.text) <= budget


# ---- the working set (R-7.5) -----------------------------------------------------------------


def test_the_working_set_changes_the_speed_not_the_block(record, pair):
    add_many(
        pair, filler(40, start=NOW - timedelta(days=60), step=timedelta(hours=5)), embed_it=True
    )
    messages = ["How does osmosis work?", "What did I get wrong so far?", "cytoplasm", ""]
    before = [build(pair, m).text for m in messages]

    working_set_rebuild(pair=pair)
    working_set_rebuild(pair=pair)  # idempotent

    assert WorkingSetEpisode.objects.filter(pair=pair).count() == pair.episodes.count()
    assert [build(pair, m).text for m in messages] == before


def test_episodes_appended_after_the_working_set_was_built_are_still_recalled(record, pair):
    working_set_rebuild(pair=pair)
    later = add(
        pair,
        "check",
        "Check on osmosis: partial",
        NOW - timedelta(hours=2),
        verdict="partial",
        concepts=["Osmosis"],
    )

    result = build(pair, "¿Qué es la ósmosis?")

    assert later.pk in recalled_ids(result)
    assert WorkingSet.objects.get(pair=pair).max_seq < later.seq


def test_a_block_built_for_a_past_moment_does_not_remember_what_came_after(pair):
    before = add(pair, "question", "What is osmosis?", NOW - timedelta(days=10))
    after = add(pair, "question", "What is osmosis really?", NOW + timedelta(days=1))

    for message in ("osmosis", "", "What did I get wrong so far?"):
        ids = recalled_ids(build(pair, message))
        assert before.pk in ids
        assert after.pk not in ids


def test_a_working_set_row_keys_its_words_and_concepts_by_its_own_pair(pair):
    other = PairFactory()
    mine = add(pair, "check", "Osmosis moves water", NOW, verdict="wrong", concepts=["Osmosis"])
    add(other, "question", "Osmosis moves water", NOW)

    working_set_rebuild(pair=pair)
    working_set_rebuild(pair=other)

    keys = set(WorkingSetEpisode.objects.get(episode_id=mine.pk).keys)
    assert {word_key(pair.pk, "osmosi"), word_key(pair.pk, "water")} <= keys
    assert concept_key(pair.pk, "Osmosis") in keys
    assert not any(key.startswith(f"{other.pk}:") for key in keys)
    # The same words in another pair's episode are under that pair's keys only.
    assert (
        WorkingSetEpisode.objects.filter(keys__contains=[word_key(pair.pk, "osmosi")]).count() == 1
    )


def test_a_word_the_text_search_parser_would_split_has_no_key_and_is_searched_by_scan():
    assert word_key(7, "osmosi") == "7:osmosi"
    assert word_key(7, "co2") == "7:co2"
    assert word_key(7, "well-known") is None
    assert word_key(7, "snake_case") is None
    assert word_key(7, "Osmosi") is None


def test_the_working_set_catches_up_incrementally_and_gives_the_same_block(record, pair):
    working_set_rebuild(pair=pair)
    first = WorkingSet.objects.get(pair=pair)
    later = add(pair, "question", "Why does osmosis need a membrane?", NOW - timedelta(hours=1))
    unembedded = add(
        pair, "question", "Osmosis once more", NOW - timedelta(minutes=30), embed_it=False
    )
    before = build(pair, "How does osmosis work?").text

    working_set_rebuild(pair=pair)

    after = WorkingSet.objects.get(pair=pair)
    assert after.max_seq == unembedded.seq > first.max_seq
    assert after.episode_count == pair.episodes.count()
    rows = {w.episode_id: w for w in WorkingSetEpisode.objects.filter(pair=pair)}
    assert rows[later.pk].signature is not None
    assert rows[unembedded.pk].signature is None  # no vector yet: other pools still see it
    assert build(pair, "How does osmosis work?").text == before


def _append_committed(pair, count, capture, *, start):
    """`count` questions through the append service, each committed (its receivers run)."""
    for i in range(count):
        with capture(execute=True):
            add(pair, "question", f"Why does osmosis need water, take {i}?", start + timedelta(i))


def test_a_busy_pairs_working_set_is_extended_each_time_its_chain_crosses_the_step(
    pair, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr("tutorbrain.block.working_set.EXTEND_EVERY", 5)
    _append_committed(pair, 2, django_capture_on_commit_callbacks, start=NOW - timedelta(30))
    working_set_rebuild(pair=pair)  # covers seq 1-2, as the night would

    _append_committed(pair, 2, django_capture_on_commit_callbacks, start=NOW - timedelta(20))
    assert WorkingSet.objects.get(pair=pair).max_seq == 2  # 3, 4: no multiple of 5 crossed

    _append_committed(pair, 1, django_capture_on_commit_callbacks, start=NOW - timedelta(10))
    assert WorkingSet.objects.get(pair=pair).max_seq == 5
    assert WorkingSetEpisode.objects.filter(pair=pair).count() == 5

    # A batch that jumps over a multiple (6-11 crosses 10) extends the set too.
    with django_capture_on_commit_callbacks(execute=True):
        add_many(pair, filler(6, start=NOW - timedelta(days=5), step=timedelta(hours=1)))
    assert WorkingSet.objects.get(pair=pair).max_seq == 11


def test_appends_create_no_working_set_for_a_pair_the_night_has_not_given_one(
    pair, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr("tutorbrain.block.working_set.EXTEND_EVERY", 2)
    _append_committed(pair, 4, django_capture_on_commit_callbacks, start=NOW - timedelta(9))

    assert not WorkingSet.objects.filter(pair=pair).exists()
    assert not WorkingSetEpisode.objects.filter(pair=pair).exists()


def test_a_failed_extension_is_logged_and_the_append_still_stands(
    pair, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    working_set_rebuild(pair=pair)
    monkeypatch.setattr("tutorbrain.block.working_set.EXTEND_EVERY", 1)

    def broken(*, pair):
        raise RuntimeError("disk full")

    monkeypatch.setattr("tutorbrain.block.working_set.working_set_rebuild", broken)
    with django_capture_on_commit_callbacks(execute=True):
        episode = add(pair, "question", "What is osmosis?", NOW)

    assert Episode.objects.filter(pk=episode.pk).exists()
    assert WorkingSet.objects.get(pair=pair).max_seq == 0
    assert "extending the working set of pair" in caplog.text
