from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from memory.models import Organization
from memory.services import api_key_create, organization_create

DEMO_ORG_SLUG = "demo"
DEMO_ADMIN = "admin"


class Command(BaseCommand):
    help = "Prepare the demo: organization, API key, admin login; then print how to use them."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", default="8000")

    def handle(self, *args, **options):
        organization = Organization.objects.filter(slug=DEMO_ORG_SLUG).first()
        if organization is None:
            organization = organization_create(name="Demo school", slug=DEMO_ORG_SLUG)
        _, raw_key = api_key_create(organization=organization, name="demo")
        password = secrets.token_urlsafe(12)
        User = get_user_model()
        user = User.objects.filter(username=DEMO_ADMIN).first() or User(username=DEMO_ADMIN)
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        base = f"http://{options['host']}:{options['port']}"
        self.stdout.write("")
        self.stdout.write(f"Admin:     {base}/admin/   login {DEMO_ADMIN} / {password}")
        self.stdout.write(f"API docs:  {base}/api/docs/")
        self.stdout.write(f"API key:   {raw_key}")
        self.stdout.write(
            f"Try:       curl -s -H 'Authorization: Api-Key {raw_key}' {base}/api/v1/health/"
        )
        self.stdout.write("")
