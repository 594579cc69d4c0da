"""Hooks: how a lower app calls into higher ones (apps/core/hooks.py)."""

import pytest

from apps.core.hooks import Hooks
from apps.users.hooks import user_created, user_role_changing


def test_functions_run_in_registration_order_and_their_results_come_back():
    hook = Hooks("test")
    hook.register(lambda x: {"a": x, "b": 1})
    hook.register(lambda x: {"b": x * 2})
    assert hook.call(3) == [{"a": 3, "b": 1}, {"b": 6}]
    assert hook.call_merged(3) == {"a": 3, "b": 6}  # later functions win


def test_a_function_registers_once():
    hook = Hooks("test")

    def function() -> None: ...

    hook.register(function)
    with pytest.raises(ValueError, match="registered twice"):
        hook.register(function)


def test_higher_apps_register_in_the_order_of_their_layers():
    # apps.groups before apps.subscriptions (INSTALLED_APPS): a role change moves the user between
    # system groups before the channels they see change, as Zulip orders the events.
    assert [f.__module__ for f in user_role_changing._functions] == [
        "apps.groups.receivers",
        "apps.subscriptions.receivers",
        "apps.invites.receivers",
    ]
    assert [f.__module__ for f in user_created._functions] == ["apps.groups.receivers"]
