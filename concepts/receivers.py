"""Reacting to the episode log: a student's message in a teaching form teaches (R-3)."""

from __future__ import annotations

from memory.models import Episode


def on_episodes_appended(sender, episode_ids, pair_id, kinds=None, **kwargs) -> None:
    """Queue the teaching of each new `question` episode that is a teaching form.

    The cheap check (does the text start with a teaching cue?) runs here; the work runs
    in a task so a slow embedding never holds up the chat service's request.
    """
    from concepts.tasks import concept_teach_task
    from concepts.teaching import teaching_form

    if kinds is not None and Episode.Kind.QUESTION not in kinds:
        return  # no question among them: no query at all
    rows = Episode.objects.filter(pk__in=episode_ids, kind=Episode.Kind.QUESTION).values_list(
        "pk", "text", "summary"
    )
    for episode_id, text, summary in rows:
        if teaching_form(text or summary) is not None:
            concept_teach_task.delay(episode_id)
