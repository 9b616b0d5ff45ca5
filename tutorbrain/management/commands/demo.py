"""`manage.py demo` (run by `make demo`): the product working, end to end, in one command.

1. the demo organization, its API key and the admin login (printed);
2. the sample subject: the concept-map helper's cell-biology files, read into the map;
3. several months of history for two students (English and Spanish) from the seeded
   generator, logged through the episode log's services (beliefs and teaching follow
   from the real signal handlers);
4. the nightly cycle for every day those students were active;
5. the memory block for an ordinary question and for a history question (real builds);
6. the scenario table (R-8.1), run in a scratch database that is dropped afterwards;
7. the admin URL and login, and how to call the endpoint with curl.

Idempotent: a second run reuses the subject, its map and the histories (nothing is
logged twice; the nightly cycle skips days it has done) and keeps the admin password and
the API key (kept in the git-ignored `.demo-credentials.json`, 0600, since the database
holds only the key's hash): the login and the key printed last time still work.
`--new-credentials` revokes the key and sets a new password. The scenarios leave nothing
in the database. A part of the product that is not installed is reported as missing;
nothing is imitated.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command, get_commands
from django.core.management.base import BaseCommand
from django.db import connection
from django.utils import timezone
from tqdm import tqdm

from memory.models import ApiKey, Organization, Pair
from memory.services import api_key_create, api_key_hash, api_key_revoke, organization_create
from tutorbrain.evaluation import integration

DEMO_ORG_SLUG = "demo"
DEMO_ADMIN = "admin"
DEMO_KEY_NAME = "demo"
DEMO_SUBJECT = "cell-biology"
SAMPLE_DIR = Path(settings.BASE_DIR) / "tests" / "data" / "cell-biology"
SAMPLE_SUFFIXES = (".md", ".pdf")
ORDINARY_QUESTION = "Can you explain the mitochondria again?"
HISTORY_QUESTION = "What did I get wrong so far?"
HISTORY_QUESTION_ES = "¿En qué me equivoqué hasta ahora?"
DEMO_BUDGET = settings.TUTORBRAIN_DEFAULT_TOKEN_BUDGET
CREDENTIALS_FILE = Path(settings.BASE_DIR) / ".demo-credentials.json"
SCENARIO_ORG_SLUG = "scenarios"


def credentials_load(organization: Organization) -> tuple[str, str] | None:
    """The key and password of the last run, if both still work on this database."""
    try:
        saved = json.loads(CREDENTIALS_FILE.read_text())
        raw_key, password = saved["api_key"], saved["password"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    key_alive = ApiKey.objects.filter(
        organization=organization,
        name=DEMO_KEY_NAME,
        key_hash=api_key_hash(raw_key),
        revoked_at__isnull=True,
    ).exists()
    user = get_user_model().objects.filter(username=DEMO_ADMIN, is_active=True).first()
    if not key_alive or user is None or not user.check_password(password):
        return None
    return raw_key, password


def credentials_save(raw_key: str, password: str) -> None:
    # Written owner-only, then filled: the key never sits in a world-readable file.
    fd = os.open(CREDENTIALS_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump({"api_key": raw_key, "password": password}, out)


class Command(BaseCommand):
    help = "Prepare and show the demo: sample subject, histories, nightly cycle, blocks, scenarios."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", default="8000")
        parser.add_argument(
            "--skip-scenarios", action="store_true", help="do not run the scenario table"
        )
        parser.add_argument(
            "--new-credentials",
            action="store_true",
            help="revoke the demo API key and set a new admin password (a second run keeps them)",
        )

    def handle(self, *args, **options):
        # One process plays the whole story: background tasks run here, in order.
        with integration.tasks_inline():
            self.run(options)

    def run(self, options):
        self.base = f"http://{options['host']}:{options['port']}"
        self.missing: list[str] = []
        db = connection.settings_dict
        self.title(1, f"database ready: PostgreSQL {db['HOST']}:{db['PORT']} / {db['NAME']}")
        organization, raw_key, password = self.accounts(new=options["new_credentials"])
        subject = self.sample_subject(organization)
        pairs = self.histories(organization, subject) if subject is not None else []
        self.nightly(pairs)
        self.blocks(pairs)
        if not options["skip_scenarios"]:
            self.scenarios()
        self.finish(raw_key, password)

    # ---- steps --------------------------------------------------------------------------

    def title(self, number: int, text: str) -> None:
        self.stdout.write(self.style.MIGRATE_HEADING(f"[{number}/7] {text}"))

    def accounts(self, *, new: bool = False):
        self.title(2, "demo organization, API key, admin login")
        organization = Organization.objects.filter(slug=DEMO_ORG_SLUG).first()
        if organization is None:
            organization = organization_create(name="Demo school", slug=DEMO_ORG_SLUG)
        if Organization.objects.filter(slug=SCENARIO_ORG_SLUG).exists():
            self.stdout.write(
                self.style.WARNING(
                    "    an older demo left its scenario runs in this database (organization "
                    f"'{SCENARIO_ORG_SLUG}'); the log is append-only, so to start clean: "
                    "make db-stop && rm -rf .pgdata && make demo"
                )
            )
        kept = None if new else credentials_load(organization)
        if kept is not None:
            self.stdout.write(
                "    same login and API key as the last run (--new-credentials to change)"
            )
            return organization, *kept
        # The database keeps only the key's hash: revoke the previous demo key.
        for old in ApiKey.objects.filter(
            organization=organization, name=DEMO_KEY_NAME, revoked_at__isnull=True
        ):
            api_key_revoke(api_key=old)
        _, raw_key = api_key_create(organization=organization, name=DEMO_KEY_NAME)
        password = secrets.token_urlsafe(12)
        User = get_user_model()
        user = User.objects.filter(username=DEMO_ADMIN).first() or User(username=DEMO_ADMIN)
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        credentials_save(raw_key, password)
        return organization, raw_key, password

    def sample_subject(self, organization):
        from memory.models import Subject

        self.title(3, f"sample subject '{DEMO_SUBJECT}': files read into the concept map")
        if "load_sample_subject" in get_commands():
            call_command(
                "load_sample_subject", org=DEMO_ORG_SLUG, subject=DEMO_SUBJECT, stdout=self.stdout
            )
        else:
            self.load_sample_files(organization)
        subject = Subject.objects.filter(
            organization=organization, external_id=DEMO_SUBJECT
        ).first()
        if subject is None:
            self.note_missing("the sample subject could not be loaded")
            return None
        from concepts.models import Concept

        count = Concept.objects.filter(subject=subject).count()
        self.stdout.write(f"    map: {count} concepts from {subject.files.count()} file version(s)")
        return subject

    def load_sample_files(self, organization):
        from memory.services import pair_get_or_create, student_get_or_create, subject_get_or_create

        subject = subject_get_or_create(
            organization=organization, external_id=DEMO_SUBJECT, name="Cell biology", language="en"
        )
        teacher = student_get_or_create(organization=organization, external_id="demo-teacher")
        pair = pair_get_or_create(student=teacher, subject=subject)
        paths = sorted(p for p in SAMPLE_DIR.iterdir() if p.suffix in SAMPLE_SUFFIXES)
        for path in tqdm(paths, desc="    reading files", unit="file"):
            try:
                integration.file_intake(
                    pair=pair, name=path.name, content=path.read_bytes(), now=timezone.now()
                )
            except integration.PartMissing as exc:
                self.note_missing(str(exc))
                return

    def histories(self, organization, subject) -> list[Pair]:
        from tutorbrain.evaluation.generator import history_load
        from tutorbrain.evaluation.sample import sample_plans

        self.title(4, "several months of history for two students (English, Spanish)")
        now = timezone.now()
        plans = sample_plans(subject=subject, now=now)
        if not plans:
            self.note_missing(
                "the map is empty, so there is nothing for the students to talk about"
            )
            return []
        pairs = []
        for plan in tqdm(plans, desc="    logging histories", unit="student"):
            existing = Pair.objects.filter(
                subject=subject, student__external_id=plan.student_external_id, head_seq__gt=0
            ).first()
            if existing is not None:
                pairs.append(existing)
                continue
            pairs.append(history_load(plan=plan, organization=organization).pair)
        for pair in pairs:
            pair.refresh_from_db()
            self.stdout.write(f"    {pair.student.external_id}: {pair.head_seq} episodes")
        return pairs

    def nightly(self, pairs: list[Pair]) -> None:
        self.title(5, "nightly cycle for every day the students were active")
        try:
            from tutorbrain.nightly.cycle import pair_cycle_run
        except ImportError:
            self.note_missing("tutorbrain.nightly.cycle (the nightly cycle)")
            return
        from memory.models import Episode

        jobs = []
        for pair in pairs:
            days = sorted(
                {
                    d.date()
                    for d in Episode.objects.filter(pair=pair)
                    .exclude(kind="consolidation")
                    .values_list("occurred_at", flat=True)
                }
            )
            jobs += [(pair.pk, day) for day in days if day < timezone.now().date()]
        written = 0
        for pair_id, day in tqdm(jobs, desc="    nights", unit="night"):
            outcome = pair_cycle_run(pair_id=pair_id, day=day)
            written += outcome.status not in ("skipped-done", "skipped-busy")
        self.stdout.write(
            f"    {len(jobs)} pair-nights, {written} run now (the others were done before)"
        )

    def blocks(self, pairs: list[Pair]) -> None:
        self.title(6, "the memory block, built for real")
        if not pairs:
            self.stdout.write("    (no history to show)")
            return
        english = pairs[0]
        questions = [(english, ORDINARY_QUESTION), (english, HISTORY_QUESTION)]
        if len(pairs) > 1:
            questions.append((pairs[1], HISTORY_QUESTION_ES))
        for pair, message in questions:
            try:
                result = integration.block_build(
                    pair=pair, message=message, now=timezone.now(), budget=DEMO_BUDGET
                )
            except integration.PartMissing as exc:
                self.note_missing(str(exc))
                return
            self.stdout.write("")
            self.stdout.write(
                self.style.HTTP_INFO(
                    f"    {pair.student.external_id} asks: {message!r}  → mode {result.mode}, "
                    f"{len(result.recalled)} episodes recalled, {result.tokens}/{result.budget} tokens, "
                    f"built in {result.build_ms:.0f} ms"
                )
            )
            self.stdout.write(result.text)

    def scenarios(self) -> None:
        from tutorbrain.evaluation.scenarios import SCENARIO_LANGUAGES
        from tutorbrain.management.commands.scenarios import scenarios_in_scratch

        self.title(7, "scenarios (graded on stored ids and explicit lines)")
        total = sum(len(v) for v in SCENARIO_LANGUAGES.values())
        self.stdout.write(
            f"    {total} runs in a scratch database (created, migrated, dropped afterwards: "
            "the admin keeps only the demo school)"
        )
        started = time.monotonic()
        status = scenarios_in_scratch(out=self.stdout, err=self.stderr)
        if status != 0:
            self.stdout.write(self.style.WARNING("    some scenarios failed (see the table)"))
        self.stdout.write(f"    ({time.monotonic() - started:.0f} s)")

    def note_missing(self, what: str) -> None:
        self.missing.append(what)
        self.stdout.write(self.style.WARNING(f"    not available: {what}"))

    def finish(self, raw_key: str, password: str) -> None:
        base = self.base
        body = json.dumps(
            {"student": "demo-ana", "subject": DEMO_SUBJECT, "message": HISTORY_QUESTION}
        )
        self.stdout.write("")
        self.stdout.write(self.style.SUCCESS("The demo is ready."))
        self.stdout.write(f"Admin:     {base}/admin/   login {DEMO_ADMIN} / {password}")
        self.stdout.write(f"API docs:  {base}/api/docs/")
        self.stdout.write(f"API key:   {raw_key}")
        self.stdout.write("Try:")
        self.stdout.write(
            f"  curl -s -H 'Authorization: Api-Key {raw_key}' {base}/api/v1/health/ready/"
        )
        self.stdout.write(
            f"  curl -s -X POST -H 'Authorization: Api-Key {raw_key}' -H 'Content-Type: application/json' \\\n"
            f"       -d '{body}' {base}/api/v1/memory-block/"
        )
        if self.missing:
            self.stdout.write(self.style.WARNING("Not shown, because the part is not there yet:"))
            for what in self.missing:
                self.stdout.write(f"  - {what}")
        self.stdout.write("")
