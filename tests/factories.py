"""factory-boy factories for organizations, users, bots and custom profile fields."""

import factory

from apps.realms.models import EmailVisibility, Realm
from apps.users.actions import generate_api_key
from apps.users.models import BotType, CustomProfileField, Role, User


class RealmFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Realm
        django_get_or_create = ("string_id",)

    string_id = factory.Sequence(lambda n: f"org{n}")
    name = factory.LazyAttribute(lambda realm: f"Organization {realm.string_id or 'default'}")


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    realm = factory.SubFactory(RealmFactory)
    delivery_email = factory.Sequence(lambda n: f"user{n}@example.com")
    full_name = factory.Sequence(lambda n: f"User Number {n}")
    role = Role.MEMBER
    api_key = factory.LazyFunction(generate_api_key)
    email_address_visibility = EmailVisibility.EVERYONE
    password = factory.PostGenerationMethodCall("set_password", "correct horse battery")

    @factory.post_generation
    def save_password(self, create, extracted, **kwargs):
        if create:
            self.save(update_fields=["password"])


class BotFactory(UserFactory):
    delivery_email = factory.Sequence(lambda n: f"bot{n}-bot@example.com")
    full_name = factory.Sequence(lambda n: f"Bot Number {n}")
    bot_type = BotType.GENERIC
    bot_owner = factory.SubFactory(UserFactory, realm=factory.SelfAttribute("..realm"))
    password = factory.PostGenerationMethodCall("set_unusable_password")


class CustomProfileFieldFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CustomProfileField

    realm = factory.SubFactory(RealmFactory)
    name = factory.Sequence(lambda n: f"Field {n}")
    field_type = CustomProfileField.FieldType.SHORT_TEXT
    order = factory.Sequence(lambda n: n)
