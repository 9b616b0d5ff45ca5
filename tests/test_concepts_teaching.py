"""Teaching the map (R-3): explicit teaching forms in five languages, questions never
teach, a sentence naming nothing makes a short-named taught node, teachers teach."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from concepts.models import READINESS_TAUGHT, Concept, TaughtNote
from concepts.naming import concept_key
from concepts.selectors import map_for_block
from concepts.services import concept_teach, map_recompute
from memory.errors import InvalidInput
from memory.models import Episode
from memory.services import episode_append


@pytest.fixture
def mitochondria(pair):
    concept = Concept.objects.create(
        subject=pair.subject,
        name="Mitochondria",
        key=concept_key("Mitochondria"),
        # The names the files used for it, merged into this node.
        aliases=["mitocondria", "mitochondrie", concept_key("الميتوكوندريا")],
    )
    Concept.objects.create(subject=pair.subject, name="Cell", key="cell")
    map_recompute(subject=pair.subject)
    return concept


def _say(pair, text, capture):
    with capture(execute=True):
        return episode_append(pair=pair, kind="question", summary=text[:300], text=text)


@pytest.mark.parametrize(
    "message",
    [
        "remember that in our class we call the mitochondria the powerhouse of the cell",
        "Recuerda que en nuestra clase llamamos a la mitocondria la central energética de la célula",
        "Lembre-se de que na nossa aula chamamos a mitocôndria de usina de energia da célula",
        "Souviens-toi que dans notre classe on appelle la mitochondrie la centrale de la cellule",
        "تذكر أن في صفنا نسمي الميتوكوندريا محطة الطاقة في الخلية",
    ],
)
def test_a_teaching_form_in_each_language_attaches_to_mitochondria(
    pair, mitochondria, message, django_capture_on_commit_callbacks
):
    _say(pair, message, django_capture_on_commit_callbacks)
    note = TaughtNote.objects.get()
    assert note.concept == mitochondria
    assert note.note == message
    assert note.student == pair.student
    mitochondria.refresh_from_db()
    assert mitochondria.taught and mitochondria.readiness == READINESS_TAUGHT
    taught = Episode.objects.get(pair=pair, kind="taught")
    assert note.episode == taught and taught.concepts == ["Mitochondria"]
    line = {c.name: c for c in map_for_block(subject=pair.subject).concepts}["Mitochondria"]
    assert line.taught_note == message


@pytest.mark.parametrize(
    "message",
    [
        "What do mitochondria do in the cell?",
        "remember that the mitochondria make ATP?",
        "¿Recuerda que la mitocondria produce ATP?",
        "The mitochondria is the powerhouse of the cell",
    ],
)
def test_a_question_or_plain_statement_about_mitochondria_does_not_teach(
    pair, mitochondria, message, django_capture_on_commit_callbacks
):
    _say(pair, message, django_capture_on_commit_callbacks)
    assert not TaughtNote.objects.exists()
    assert not Episode.objects.filter(kind="taught").exists()
    mitochondria.refresh_from_db()
    assert not mitochondria.taught


def test_a_teaching_sentence_naming_no_concept_creates_a_short_named_taught_node(
    pair, mitochondria, django_capture_on_commit_callbacks
):
    message = "remember that the Golgi apparatus is the post office of the cell"
    _say(pair, message, django_capture_on_commit_callbacks)
    node = TaughtNote.objects.get().concept
    assert node.name == "Golgi apparatus"
    assert node.layer == Concept.Layer.TAUGHT
    assert node.readiness == READINESS_TAUGHT
    assert len(node.name.split()) <= 3 and node.name != message


def test_a_portuguese_and_is_no_copula_in_what_a_teaching_sentence_is_about():
    from concepts.teaching import subject_words, teaching_form

    form = teaching_form("Lembre-se de que ácidos e bases são substâncias opostas")
    assert form is not None and subject_words(form) == ["acidos", "e", "bases"]
    form = teaching_form("Lembre-se de que a osmose é a difusão da água")
    assert form is not None and subject_words(form) == ["a", "osmose"]


def test_the_same_teaching_message_applied_twice_writes_one_note(
    pair, mitochondria, django_capture_on_commit_callbacks
):
    from concepts.services import concept_teach_from_episode

    episode = _say(
        pair, "remember that mitochondria have their own DNA", django_capture_on_commit_callbacks
    )
    concept_teach_from_episode(episode=episode)
    assert TaughtNote.objects.count() == 1
    assert Episode.objects.filter(kind="taught").count() == 1


def test_a_teacher_teaches_an_existing_concept_and_a_new_one(pair, mitochondria):
    teacher = get_user_model().objects.create_user("teacher", password="x")
    concept_teach(
        subject=pair.subject,
        concept=mitochondria,
        note="We call it the powerhouse.",
        teacher=teacher,
    )
    new = concept_teach(
        subject=pair.subject, name="lysosome", note="The cell's recycling centre.", teacher=teacher
    )
    assert new.concept.name == "Lysosome" and new.concept.layer == Concept.Layer.TAUGHT
    mitochondria.refresh_from_db()
    assert mitochondria.readiness == READINESS_TAUGHT
    assert TaughtNote.objects.filter(teacher=teacher).count() == 2


def test_a_teacher_cannot_create_a_node_named_like_furniture_or_a_sentence(pair, mitochondria):
    with pytest.raises(InvalidInput) as error:
        concept_teach(subject=pair.subject, name="Summary", note="x")
    assert error.value.field == "name"
    assert not TaughtNote.objects.exists()


def test_a_teaching_message_logged_through_the_episodes_api_teaches(
    api, pair, mitochondria, django_capture_on_commit_callbacks
):
    message = "remember that in our class we call the mitochondria the powerhouse of the cell"
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/v1/episodes/",
            {
                "student": pair.student.external_id,
                "subject": pair.subject.external_id,
                "kind": "question",
                "summary": "Student message",
                "text": message,
            },
            format="json",
        )
    assert response.status_code in (200, 201), response.json()
    assert TaughtNote.objects.get().concept == mitochondria


def test_a_new_taught_node_gets_its_name_vector_after_commit(
    pair, mitochondria, django_capture_on_commit_callbacks
):
    _say(
        pair,
        "remember that the Golgi apparatus is the post office",
        django_capture_on_commit_callbacks,
    )
    node = Concept.objects.get(subject=pair.subject, key="golgi apparatus")
    assert node.embedding is not None and node.embedding_model


@pytest.mark.parametrize(
    "message, name",
    [
        ("in our class we call the ATP synthase the turbine", "ATP synthase"),
        ("treat the Krebs cycle as optional this term", "Krebs cycle"),
        ("remember that the Golgi apparatus is the post office of the cell", "Golgi apparatus"),
    ],
)
def test_a_sentence_that_defines_or_names_something_new_creates_a_short_node(
    pair, mitochondria, message, name, django_capture_on_commit_callbacks
):
    _say(pair, message, django_capture_on_commit_callbacks)
    assert TaughtNote.objects.get().concept.name == name


def test_a_teaching_form_that_names_nothing_and_defines_nothing_teaches_nothing(
    pair, mitochondria, django_capture_on_commit_callbacks
):
    _say(pair, "remember that I hate Mondays", django_capture_on_commit_callbacks)
    assert not TaughtNote.objects.exists()
    assert not Concept.objects.filter(layer=Concept.Layer.TAUGHT).exists()


def test_the_taught_episode_is_dated_when_the_student_said_it_not_when_it_was_applied(
    pair, mitochondria, django_capture_on_commit_callbacks
):
    from datetime import UTC, datetime

    said_at = datetime(2026, 4, 15, 10, 30, tzinfo=UTC)
    with django_capture_on_commit_callbacks(execute=True):
        episode_append(
            pair=pair,
            kind="question",
            summary="remember that mitochondria have their own DNA",
            occurred_at=said_at,
            now=datetime(2026, 11, 29, 9, 0, tzinfo=UTC),
        )
    assert Episode.objects.get(pair=pair, kind="taught").occurred_at == said_at
