"""History questions (SPEC R-5.7) as students really phrase them, in five languages."""

from __future__ import annotations

import pytest

from tutorbrain.block.message import is_history_question

HISTORY = [
    ("en", "What topics have we gone over?"),
    ("en", "What did we go over last week?"),
    ("en", "Remind me what we talked about"),
    ("en", "What was I struggling with?"),
    ("en", "Which questions did I get wrong?"),
    ("en", "What have I gotten wrong?"),
    ("en", "Where am I weak?"),
    ("en", "Summarize our previous sessions"),
    ("en", "What have I been working on?"),
    ("en", "What did we discuss yesterday?"),
    ("en", "What were my mistakes?"),
    ("en", "How am I doing?"),
    ("en", "What did we work on in July?"),
    ("en", "Can you recap what we did?"),
    ("en", "What have we talked about?"),
    ("es", "¿Qué temas hemos visto?"),
    ("es", "¿Qué repasamos la semana pasada?"),
    ("es", "¿De qué hablamos ayer?"),
    ("es", "¿En qué fallé?"),
    ("es", "¿Qué preguntas respondí mal?"),
    ("es", "¿Cómo me va?"),
    ("es", "¿Qué tengo que repasar?"),
    ("es", "Recuérdame lo que vimos"),
    ("es", "¿Qué aprendimos?"),
    ("es", "¿Qué hemos aprendido?"),
    ("es", "¿En qué me he equivocado?"),
    ("es", "¿Qué trabajamos en julio?"),
    ("es", "¿Qué hemos hecho hasta ahora?"),
    ("pt", "O que já vimos até agora?"),
    ("pt", "Quais foram meus erros?"),
    ("pt", "Onde estou errando?"),
    ("pt", "Do que falamos ontem?"),
    ("pt", "O que revisamos?"),
    ("pt", "O que aprendemos?"),
    ("pt", "Como eu estou indo?"),
    ("pt", "O que eu preciso revisar?"),
    ("pt", "Que temas já estudamos?"),
    ("pt", "Em que errei?"),
    ("pt", "Me lembra o que a gente viu"),
    ("pt", "O que a gente fez em julho?"),
    ("pt", "Sobre o que falamos na última aula?"),
    ("fr", "Qu'est-ce qu'on a fait la semaine dernière ?"),
    ("fr", "On a vu quoi en juillet ?"),
    ("fr", "Où est-ce que je me suis trompé ?"),
    ("fr", "Quelles sont mes erreurs ?"),
    ("fr", "Qu'est-ce que j'ai appris ?"),
    ("fr", "Qu'est-ce que je dois réviser ?"),
    ("fr", "De quoi avons-nous parlé ?"),
    ("fr", "De quoi on a parlé hier ?"),
    ("fr", "Où j'en suis ?"),
    ("fr", "Qu'avons-nous révisé ?"),
    ("fr", "Qu'est-ce qu'on a étudié en mars ?"),
    ("ar", "ما الأخطاء التي ارتكبتها؟"),
    ("ar", "ما الذي تعلمته؟"),
    ("ar", "ماذا ناقشنا؟"),
    ("ar", "عن ماذا تحدثنا؟"),
    ("ar", "ما الذي يجب أن أراجعه؟"),
    ("ar", "كيف مستواي؟"),
    ("ar", "ماذا راجعنا؟"),
    ("ar", "ما الذي فعلناه في الجلسة السابقة؟"),
    ("ar", "ماذا درسنا حتى الآن؟"),
]

ORDINARY = [
    "What is osmosis?",
    "Can you recap osmosis?",
    "How does the heart work?",
    "What did Caroline research?",
    "¿Qué es la ósmosis?",
    "¿Cómo funciona el corazón?",
    "O que é osmose?",
    "Como funciona o coração?",
    "Qu'est-ce que l'osmose ?",
    "Comment fonctionne le cœur ?",
    "ما هو التناضح؟",
    "كيف يعمل القلب؟",
    "Explain the previous example again",
    "What did Melanie paint?",
    "Where is the weak point of this argument?",
]


@pytest.mark.parametrize(("language", "message"), HISTORY)
def test_a_question_about_the_students_own_record_is_a_history_question(language, message):
    assert is_history_question(message), language


@pytest.mark.parametrize("message", ORDINARY)
def test_a_question_about_the_subject_or_someone_else_is_not(message):
    assert not is_history_question(message)
