"""factory_boy factories. Episodes are not built here: they go through episode_append,
the only way an episode can be written (hash chain, salience, index)."""

from __future__ import annotations

import factory

from memory.models import Organization, Pair, Student, Subject


class OrganizationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Organization

    name = factory.Sequence(lambda n: f"School {n}")
    slug = factory.Sequence(lambda n: f"school-{n}")


class StudentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Student

    organization = factory.SubFactory(OrganizationFactory)
    external_id = factory.Sequence(lambda n: f"student-{n}")


class SubjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Subject

    organization = factory.SubFactory(OrganizationFactory)
    external_id = factory.Sequence(lambda n: f"subject-{n}")
    name = factory.LazyAttribute(lambda o: o.external_id.replace("-", " ").title())


class PairFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Pair

    student = factory.SubFactory(StudentFactory)
    subject = factory.SubFactory(
        SubjectFactory, organization=factory.SelfAttribute("..student.organization")
    )
