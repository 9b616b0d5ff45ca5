"""Small subjects written for the evaluation, in the students' languages (no copied text).

Each subject is a handful of concepts with a one-sentence definition and the concepts it
builds on. A definition names its prerequisites by their exact names (and no other concept
of the subject), so course notes written from it state the map's edges the way real notes
do: "Osmosis is the diffusion of water across the cell membrane" builds on Diffusion and
Cell membrane.

The phrasings are what students and tutors say in each language. They are content, not
cue lists: detection never reads them (cues live in `tutorbrain/language/data/`). Month
names are never typed here: they come from CLDR through Babel at run time.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ConceptSpec:
    name: str
    definition: str
    builds_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class SubjectTemplate:
    code: str
    language: str
    title: str
    concepts: tuple[ConceptSpec, ...]
    # file name -> the concepts it explains, in order (one concept per page)
    files: tuple[tuple[str, tuple[str, ...]], ...]
    # a nickname a class gives one concept, for teaching-form messages
    nicknames: dict[str, str] = field(default_factory=dict)

    def concept(self, name: str) -> ConceptSpec:
        for spec in self.concepts:
            if spec.name == name:
                return spec
        raise KeyError(name)


def _c(name: str, definition: str, *builds_on: str) -> ConceptSpec:
    return ConceptSpec(name=name, definition=definition, builds_on=tuple(builds_on))


EN_CELLS = SubjectTemplate(
    code="en-cells",
    language="en",
    title="Cell biology",
    concepts=(
        _c(
            "Cell",
            "A cell is the smallest unit of life that can carry out every process of a living thing.",
        ),
        _c(
            "Cell membrane",
            "The cell membrane is a thin flexible layer around the Cell that controls what enters and leaves.",
            "Cell",
        ),
        _c(
            "Cytoplasm",
            "The cytoplasm is the jelly-like fluid held inside the Cell membrane where most chemical reactions happen.",
            "Cell membrane",
        ),
        _c(
            "DNA",
            "DNA is the long molecule that carries the genetic instructions of the Cell.",
            "Cell",
        ),
        _c(
            "Nucleus",
            "The nucleus is the control centre of the Cell and keeps the DNA safe.",
            "Cell",
            "DNA",
        ),
        _c(
            "Diffusion",
            "Diffusion is the spreading of particles from a region of high concentration to a region of low concentration.",
        ),
        _c(
            "Osmosis",
            "Osmosis is the Diffusion of water through the Cell membrane from a dilute solution to a concentrated one.",
            "Diffusion",
            "Cell membrane",
        ),
        _c("Respiration", "Respiration is the chemical process that releases energy from glucose."),
        _c(
            "Mitochondria",
            "Mitochondria are small organelles floating in the Cytoplasm that carry out Respiration.",
            "Cytoplasm",
            "Respiration",
        ),
    ),
    files=(
        ("cells-unit-1.md", ("Cell", "Cell membrane", "Cytoplasm", "DNA", "Nucleus")),
        ("cells-unit-2.md", ("Diffusion", "Osmosis", "Respiration", "Mitochondria")),
    ),
    nicknames={"Mitochondria": "the powerhouse of the cell", "Nucleus": "the brain of the cell"},
)

EN_ALGEBRA = SubjectTemplate(
    code="en-algebra",
    language="en",
    title="Linear equations",
    concepts=(
        _c("Variable", "A variable is a letter that stands for a number we do not know yet."),
        _c(
            "Expression",
            "An expression combines numbers and a Variable with operations such as addition and multiplication.",
            "Variable",
        ),
        _c(
            "Equation",
            "An equation states that the value of one Expression is equal to the value of another.",
            "Expression",
        ),
        _c(
            "Inverse operation",
            "An inverse operation undoes another operation, the way subtraction undoes addition.",
        ),
        _c(
            "Solving equations",
            "Solving equations means finding the value of the Variable that makes an Equation true by applying an Inverse operation to both sides.",
            "Variable",
            "Equation",
            "Inverse operation",
        ),
        _c(
            "Slope",
            "The slope is the steepness of a line: the change in height divided by the change in run.",
        ),
        _c(
            "Linear function",
            "A linear function is a rule whose graph is a straight line with a constant Slope.",
            "Slope",
        ),
        _c(
            "Intercept",
            "The intercept is the point where the graph of a Linear function crosses the vertical axis.",
            "Linear function",
        ),
        _c(
            "Simultaneous equations",
            "Simultaneous equations are two conditions, each an Equation in the same Variable, that must hold at once.",
            "Equation",
            "Variable",
        ),
    ),
    files=(
        (
            "algebra-notes.md",
            ("Variable", "Expression", "Equation", "Inverse operation", "Solving equations"),
        ),
        ("graphs-notes.md", ("Slope", "Linear function", "Intercept", "Simultaneous equations")),
    ),
    nicknames={"Inverse operation": "the undo move", "Slope": "rise over run"},
)

ES_ECOLOGY = SubjectTemplate(
    code="es-ecologia",
    language="es",
    title="Ecología",
    concepts=(
        _c(
            "Ecosistema",
            "Un ecosistema es el conjunto de los seres vivos y el medio físico en el que viven.",
        ),
        _c(
            "Fotosíntesis",
            "La fotosíntesis es el proceso con el que las plantas transforman la luz en energía química.",
        ),
        _c(
            "Productor",
            "Un productor es un ser vivo que fabrica su propio alimento gracias a la Fotosíntesis.",
            "Fotosíntesis",
        ),
        _c(
            "Consumidor",
            "Un consumidor es un ser vivo que obtiene su energía comiendo a un Productor o a otros animales.",
            "Productor",
        ),
        _c(
            "Cadena alimentaria",
            "Una cadena alimentaria muestra cómo pasa la energía de un Productor a cada Consumidor.",
            "Productor",
            "Consumidor",
        ),
        _c(
            "Red trófica",
            "Una red trófica es el conjunto de cada Cadena alimentaria de un Ecosistema conectadas entre sí.",
            "Cadena alimentaria",
            "Ecosistema",
        ),
        _c(
            "Descomponedor",
            "Un descomponedor es un organismo que transforma la materia muerta en nutrientes para el suelo.",
        ),
        _c(
            "Ciclo del carbono",
            "El ciclo del carbono es el recorrido del carbono entre la atmósfera y los seres vivos por medio de la Fotosíntesis y de la respiración de cada Consumidor.",
            "Fotosíntesis",
            "Consumidor",
        ),
        _c(
            "Biodiversidad",
            "La biodiversidad es la variedad de especies que viven juntas en un Ecosistema.",
            "Ecosistema",
        ),
    ),
    files=(
        (
            "ecologia-tema-1.md",
            ("Ecosistema", "Fotosíntesis", "Productor", "Consumidor", "Cadena alimentaria"),
        ),
        (
            "ecologia-tema-2.md",
            ("Red trófica", "Descomponedor", "Ciclo del carbono", "Biodiversidad"),
        ),
    ),
    nicknames={
        "Descomponedor": "el equipo de limpieza del bosque",
        "Productor": "la fábrica de comida",
    },
)

PT_CHEMISTRY = SubjectTemplate(
    code="pt-quimica",
    language="pt",
    title="Química básica",
    concepts=(
        _c(
            "Átomo", "O átomo é a menor partícula da matéria, formada por um núcleo e por elétrons."
        ),
        _c(
            "Elétron",
            "O elétron é uma partícula com carga negativa que se move em volta do núcleo do Átomo.",
            "Átomo",
        ),
        _c(
            "Elemento químico",
            "Um elemento químico é uma substância formada por um só tipo de Átomo.",
            "Átomo",
        ),
        _c(
            "Ligação química",
            "Uma ligação química é a força que mantém unidos dois átomos graças a cada Elétron partilhado ou transferido.",
            "Elétron",
        ),
        _c(
            "Molécula",
            "Uma molécula é um grupo em que cada Átomo está preso aos outros por uma Ligação química.",
            "Átomo",
            "Ligação química",
        ),
        _c(
            "Classificação periódica",
            "A classificação periódica organiza cada Elemento químico pelo número de prótons no núcleo.",
            "Elemento químico",
        ),
        _c(
            "Reação química",
            "Uma reação química transforma reagentes em produtos quando uma Ligação química se quebra e outra se forma.",
            "Ligação química",
        ),
        _c(
            "Ácido",
            "Um ácido é uma substância que liberta íons de hidrogênio quando se dissolve na água.",
        ),
        _c(
            "Escala de pH",
            "A escala de pH mede quanto uma solução é ácida: quanto mais forte o Ácido, menor o valor.",
            "Ácido",
        ),
    ),
    files=(
        (
            "quimica-capitulo-1.md",
            ("Átomo", "Elétron", "Elemento químico", "Ligação química", "Molécula"),
        ),
        (
            "quimica-capitulo-2.md",
            ("Classificação periódica", "Reação química", "Ácido", "Escala de pH"),
        ),
    ),
    nicknames={"Elétron": "o viajante do átomo", "Ácido": "o azedinho"},
)

FR_ELECTRICITY = SubjectTemplate(
    code="fr-electricite",
    language="fr",
    title="Électricité",
    concepts=(
        _c(
            "Charge électrique",
            "La charge électrique est une propriété de la matière, positive ou négative.",
        ),
        _c(
            "Conducteur",
            "Un conducteur est un matériau qui laisse passer facilement les charges, comme le cuivre.",
        ),
        _c(
            "Courant électrique",
            "Le courant électrique est le déplacement ordonné de la Charge électrique dans un Conducteur.",
            "Charge électrique",
            "Conducteur",
        ),
        _c(
            "Circuit électrique",
            "Un circuit électrique est une boucle fermée de fils et d'appareils parcourue par le Courant électrique.",
            "Courant électrique",
        ),
        _c(
            "Tension",
            "La tension est la différence d'énergie entre deux points d'un Circuit électrique qui fait avancer le Courant électrique.",
            "Circuit électrique",
            "Courant électrique",
        ),
        _c(
            "Résistance",
            "La résistance mesure la difficulté qu'oppose un Conducteur au passage du Courant électrique.",
            "Conducteur",
            "Courant électrique",
        ),
        _c(
            "Loi d'Ohm",
            "La loi d'Ohm relie la Tension, la Résistance et l'intensité par la formule U = R × I.",
            "Tension",
            "Résistance",
        ),
        _c(
            "Puissance électrique",
            "La puissance électrique est le produit de la Tension par l'intensité du Courant électrique.",
            "Tension",
            "Courant électrique",
        ),
        _c(
            "Montage en série",
            "Un montage en série est un Circuit électrique à une seule boucle où chaque Résistance est traversée par le même Courant électrique.",
            "Circuit électrique",
            "Résistance",
            "Courant électrique",
        ),
    ),
    files=(
        (
            "electricite-chapitre-1.md",
            (
                "Charge électrique",
                "Conducteur",
                "Courant électrique",
                "Circuit électrique",
                "Tension",
            ),
        ),
        (
            "electricite-chapitre-2.md",
            ("Résistance", "Loi d'Ohm", "Puissance électrique", "Montage en série"),
        ),
    ),
    nicknames={"Tension": "la pression du courant", "Résistance": "le frein du circuit"},
)

AR_CELLS = SubjectTemplate(
    code="ar-khalia",
    language="ar",
    title="علم الخلية",
    concepts=(
        _c("الخلية", "الخلية هي أصغر وحدة حية قادرة على القيام بجميع وظائف الحياة."),
        _c(
            "الغشاء الخلوي",
            "الغشاء الخلوي طبقة رقيقة مرنة حول الخلية تتحكم في دخول المواد وخروجها.",
            "الخلية",
        ),
        _c(
            "السيتوبلازم",
            "السيتوبلازم سائل هلامي داخل الغشاء الخلوي تحدث فيه معظم التفاعلات الكيميائية.",
            "الغشاء الخلوي",
        ),
        _c(
            "الحمض النووي",
            "الحمض النووي جزيء طويل يحمل التعليمات الوراثية داخل الخلية.",
            "الخلية",
        ),
        _c(
            "النواة",
            "النواة مركز التحكم في الخلية وتحفظ الحمض النووي.",
            "الخلية",
            "الحمض النووي",
        ),
        _c("الانتشار", "الانتشار هو انتقال الجزيئات من منطقة تركيز مرتفع إلى منطقة تركيز منخفض."),
        _c(
            "الخاصية الأسموزية",
            "الخاصية الأسموزية هي الانتشار للماء عبر الغشاء الخلوي من المحلول المخفف إلى المحلول المركز.",
            "الانتشار",
            "الغشاء الخلوي",
        ),
        _c("التنفس الخلوي", "التنفس الخلوي عملية كيميائية تطلق الطاقة من سكر الجلوكوز."),
        _c(
            "الميتوكوندريا",
            "الميتوكوندريا عضيات صغيرة في السيتوبلازم تقوم بعملية التنفس الخلوي.",
            "السيتوبلازم",
            "التنفس الخلوي",
        ),
    ),
    files=(
        ("alkhalia-1.md", ("الخلية", "الغشاء الخلوي", "السيتوبلازم", "الحمض النووي", "النواة")),
        ("alkhalia-2.md", ("الانتشار", "الخاصية الأسموزية", "التنفس الخلوي", "الميتوكوندريا")),
    ),
    nicknames={"الميتوكوندريا": "محطة الطاقة في الخلية", "النواة": "عقل الخلية"},
)

TEMPLATES: tuple[SubjectTemplate, ...] = (
    EN_CELLS,
    EN_ALGEBRA,
    ES_ECOLOGY,
    PT_CHEMISTRY,
    FR_ELECTRICITY,
    AR_CELLS,
)


@dataclass(frozen=True)
class Phrasing:
    """What students and tutors say, per language ({c} = a concept, {d} = its definition)."""

    notes_title: str  # title line of a file of notes
    ask: tuple[str, ...]  # a student asking about a concept
    answer: str  # the tutor's answer summary
    answer_text: str
    check_summary: dict[str, str]  # verdict -> summary
    assessment: dict[str, str]  # verdict -> the tutor's assessment, naming {c}
    phrase_topics: tuple[str, ...]  # check topics that are phrases, not names
    utterance_topics: tuple[str, ...]  # check topics that read like utterances
    utterance_assessment: str  # an assessment that names no concept
    repeat_question: str  # the question one student keeps asking
    teach: str  # a teaching-form message: {c} is called {n}
    # benchmark and scenario questions
    wrong: tuple[str, ...]
    review_before: str
    explain: str
    month: str  # {month} {year}
    month_about: str  # {month} {year} {c}
    recall: str
    ordinary: str
    history: str
    narration: str  # the tutor narrating a month: {month}, {c}


PHRASINGS: dict[str, Phrasing] = {
    "en": Phrasing(
        notes_title="Course notes",
        ask=("Can you explain {c}?", "What is {c} exactly?", "I don't get {c}, can we go over it?"),
        answer="Explained {c}",
        answer_text="{d} Think of it step by step and look at the example in the notes.",
        check_summary={
            "right": "Check on {c}: right",
            "wrong": "Check on {c}: wrong",
            "partial": "Check on {c}: partly right",
        },
        assessment={
            "right": "Explained {c} correctly in their own words.",
            "wrong": "Confused the idea of {c}; needs to see it again.",
            "partial": "Partly right about {c} but missed a step.",
        },
        phrase_topics=("quick check before the quiz", "warm-up question", "end of lesson review"),
        utterance_topics=(
            "ask me the questions",
            "can you repeat that please",
            "ok now tell me again",
        ),
        utterance_assessment="Answered the practice questions quickly.",
        repeat_question="What is a cell?",
        teach="Remember that in our class we call {c} {n}.",
        wrong=(
            "What did I get wrong so far?",
            "Where did I go wrong so far?",
            "What have I got wrong?",
        ),
        review_before="What should I review before {c}?",
        explain="Explain {c} to me.",
        month="What did we see in {month} {year}?",
        month_about="What did we see in {month} {year} about {c}?",
        recall="What did we talk about {c} last time?",
        ordinary="How does {c} work?",
        history="What have we studied so far?",
        narration="In {month} we saw {c} together and you asked good questions about it.",
    ),
    "es": Phrasing(
        notes_title="Apuntes del curso",
        ask=(
            "¿Me puedes explicar {c}?",
            "¿Qué es exactamente {c}?",
            "No entiendo {c}, ¿lo repasamos?",
        ),
        answer="Explicación de {c}",
        answer_text="{d} Piensa paso a paso y mira el ejemplo de los apuntes.",
        check_summary={
            "right": "Control sobre {c}: correcto",
            "wrong": "Control sobre {c}: incorrecto",
            "partial": "Control sobre {c}: en parte",
        },
        assessment={
            "right": "Explicó {c} correctamente con sus palabras.",
            "wrong": "Confundió la idea de {c}; hay que verlo otra vez.",
            "partial": "En parte bien sobre {c}, pero le faltó un paso.",
        },
        phrase_topics=(
            "repaso rápido antes del examen",
            "pregunta de calentamiento",
            "repaso al final de la clase",
        ),
        utterance_topics=(
            "bueno ahora explícame todos los pasos",
            "hazme las preguntas",
            "dime otra vez",
        ),
        utterance_assessment="Contestó rápido las preguntas de práctica.",
        repeat_question="¿Qué es un ecosistema?",
        teach="Recuerda que en nuestra clase llamamos a {c} {n}.",
        wrong=(
            "¿En qué me equivoqué hasta ahora?",
            "¿Qué hice mal hasta ahora?",
            "¿Cuáles son mis errores?",
        ),
        review_before="¿Qué debo repasar antes de {c}?",
        explain="Explícame {c}.",
        month="¿Qué vimos en {month} de {year}?",
        month_about="¿Qué vimos en {month} de {year} sobre {c}?",
        recall="¿Qué hablamos sobre {c} la última vez?",
        ordinary="¿Cómo funciona {c}?",
        history="¿Qué hemos visto hasta ahora?",
        narration="En {month} vimos {c} juntos e hiciste buenas preguntas.",
    ),
    "pt": Phrasing(
        notes_title="Notas do curso",
        ask=("Pode me explicar {c}?", "O que é exatamente {c}?", "Não entendo {c}, podemos rever?"),
        answer="Explicação de {c}",
        answer_text="{d} Pense passo a passo e veja o exemplo nas notas.",
        check_summary={
            "right": "Verificação de {c}: certo",
            "wrong": "Verificação de {c}: errado",
            "partial": "Verificação de {c}: em parte",
        },
        assessment={
            "right": "Explicou {c} corretamente com as suas palavras.",
            "wrong": "Confundiu a ideia de {c}; precisa ver de novo.",
            "partial": "Em parte certo sobre {c}, mas faltou um passo.",
        },
        phrase_topics=(
            "revisão rápida antes da prova",
            "pergunta de aquecimento",
            "revisão no fim da aula",
        ),
        utterance_topics=("pode repetir a pergunta", "faça as perguntas", "me diga de novo"),
        utterance_assessment="Respondeu rápido às perguntas de prática.",
        repeat_question="O que é um átomo?",
        teach="Lembre que na nossa aula chamamos {c} de {n}.",
        wrong=("O que eu errei até agora?", "Onde eu errei até agora?", "Quais são os meus erros?"),
        review_before="O que devo rever antes de {c}?",
        explain="Explique {c} para mim.",
        month="O que vimos em {month} de {year}?",
        month_about="O que vimos em {month} de {year} sobre {c}?",
        recall="O que conversamos sobre {c} da última vez?",
        ordinary="Como funciona {c}?",
        history="O que estudamos até agora?",
        narration="Em {month} vimos {c} juntos e você fez boas perguntas.",
    ),
    "fr": Phrasing(
        notes_title="Notes de cours",
        ask=(
            "Tu peux m'expliquer {c} ?",
            "C'est quoi exactement {c} ?",
            "Je ne comprends pas {c}, on revoit ?",
        ),
        answer="Explication de {c}",
        answer_text="{d} Réfléchis étape par étape et regarde l'exemple des notes.",
        check_summary={
            "right": "Contrôle sur {c} : juste",
            "wrong": "Contrôle sur {c} : faux",
            "partial": "Contrôle sur {c} : en partie",
        },
        assessment={
            "right": "A expliqué {c} correctement avec ses mots.",
            "wrong": "A confondu l'idée de {c} ; il faut la revoir.",
            "partial": "En partie juste sur {c}, mais une étape manque.",
        },
        phrase_topics=(
            "petit contrôle avant le test",
            "question d'échauffement",
            "révision de fin de cours",
        ),
        utterance_topics=(
            "explique-moi encore",
            "pose-moi les questions",
            "dis-moi encore une fois",
        ),
        utterance_assessment="A répondu vite aux questions d'entraînement.",
        repeat_question="C'est quoi la tension ?",
        teach="Souviens-toi que dans notre classe on appelle {c} {n}.",
        wrong=(
            "Qu'est-ce que j'ai raté jusqu'ici ?",
            "Où me suis-je trompé jusqu'ici ?",
            "Quelles sont mes erreurs ?",
        ),
        review_before="Que dois-je revoir avant {c} ?",
        explain="Explique-moi {c}.",
        month="Qu'avons-nous vu en {month} {year} ?",
        month_about="Qu'avons-nous vu en {month} {year} sur {c} ?",
        recall="De quoi avons-nous parlé sur {c} la dernière fois ?",
        ordinary="Comment fonctionne {c} ?",
        history="Qu'avons-nous étudié jusqu'ici ?",
        narration="En {month} nous avons vu {c} ensemble et tu as posé de bonnes questions.",
    ),
    "ar": Phrasing(
        notes_title="ملاحظات الدرس",
        ask=("هل يمكنك أن تشرح {c}؟", "ما هو {c} بالضبط؟", "لا أفهم {c}، هل نراجعه؟"),
        answer="شرح {c}",
        answer_text="{d} فكر خطوة بخطوة وانظر إلى المثال في الملاحظات.",
        check_summary={
            "right": "اختبار في {c}: صحيح",
            "wrong": "اختبار في {c}: خطأ",
            "partial": "اختبار في {c}: صحيح جزئيا",
        },
        assessment={
            "right": "شرح {c} بشكل صحيح بكلماته.",
            "wrong": "خلط في فكرة {c} ويحتاج إلى مراجعتها.",
            "partial": "أصاب جزئيا في {c} لكنه نسي خطوة.",
        },
        phrase_topics=("مراجعة سريعة قبل الاختبار", "سؤال تمهيدي", "مراجعة نهاية الحصة"),
        utterance_topics=("اشرح لي مرة أخرى", "اسألني الأسئلة", "قل لي مرة ثانية"),
        utterance_assessment="أجاب بسرعة عن أسئلة التدريب.",
        repeat_question="ما هي الخلية؟",
        teach="تذكر أن في صفنا نسمي {c} {n}.",
        wrong=("ماذا أخطأت حتى الآن؟", "أين أخطأت حتى الآن؟", "ما هي أخطائي؟"),
        review_before="ماذا يجب أن أراجع قبل {c}؟",
        explain="اشرح لي {c}.",
        month="ماذا درسنا في {month} {year}؟",
        month_about="ماذا درسنا في {month} {year} عن {c}؟",
        recall="ماذا قلنا عن {c} في المرة الماضية؟",
        ordinary="كيف يعمل {c}؟",
        history="ماذا درسنا حتى الآن؟",
        narration="في {month} درسنا {c} معا وطرحت أسئلة جيدة.",
    ),
}


def month_name(language: str, month: int) -> str:
    """The month's wide name in the language, from CLDR (never typed by hand)."""
    from babel.dates import get_month_names

    return str(get_month_names("wide", context="format", locale=language)[month])


def notes_markdown(template: SubjectTemplate, file_name: str, *, revision: int = 0) -> str:
    """Course notes for one file: a heading and the definition per concept.

    `revision` > 0 writes a later version of the same notes (a file replaced mid-history),
    with an extra worked-example line, so its fingerprint differs.
    """
    names = dict(template.files)[file_name]
    phrasing = PHRASINGS[template.language]
    title = f"# {template.title} — {phrasing.notes_title}"
    if revision:
        title += f" (v{revision + 1})"
    lines = [title, ""]
    for name in names:
        spec = template.concept(name)
        lines += [f"## {spec.name}", "", f"**{spec.name}**: {spec.definition}", ""]
    return "\n".join(lines)
