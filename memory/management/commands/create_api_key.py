from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from memory.errors import InvalidInput
from memory.models import Organization
from memory.services import api_key_create, organization_create


class Command(BaseCommand):
    help = "Create an API key for an organization (created if missing). The key is shown once."

    def add_arguments(self, parser):
        parser.add_argument("organization", help="organization slug")
        parser.add_argument("--name", default="default", help="a label for the key")
        parser.add_argument(
            "--create-organization",
            metavar="NAME",
            default="",
            help="create the organization with this display name if it does not exist",
        )

    def handle(self, *args, **options):
        slug = options["organization"]
        organization = Organization.objects.filter(slug=slug).first()
        if organization is None:
            if not options["create_organization"]:
                raise CommandError(
                    f"no organization {slug!r} (pass --create-organization NAME to create it)"
                )
            try:
                organization = organization_create(name=options["create_organization"], slug=slug)
            except InvalidInput as exc:
                raise CommandError(str(exc)) from exc
        key, raw = api_key_create(organization=organization, name=options["name"])
        self.stdout.write(
            f"API key for {organization.slug} ({key.name}), shown once — store it now:"
        )
        self.stdout.write(raw)
