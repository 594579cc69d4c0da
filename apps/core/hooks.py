"""Hooks: how a lower app lets higher apps take part in its work without importing them.

Apps are layered (docs/architecture.md): an app imports only the apps below it. When a lower app's
action must also do something a higher app owns (a role change moves the user between system
groups and changes which channels they see), the lower app declares a hook, saying when it calls
it and with what, and the higher app registers a function from its AppConfig.ready(). Functions run
in registration order, which is INSTALLED_APPS order, inside the caller's transaction.

    user_created = Hooks("user_created")              # apps/users/hooks.py: the declaration

    @user_created.register                            # apps/groups/hooks.py: a registration
    def add_to_system_groups(user): ...

    user_created.call(user)                           # apps/users/actions: the call

A hook whose functions return something (objections, "after" steps) is read with `call` too: it
returns what each function returned, in order; `call_merged` merges the dicts they return.
"""

from collections.abc import Callable
from typing import Any


class Hooks:
    def __init__(self, name: str) -> None:
        self.name = name
        self._functions: list[Callable[..., Any]] = []

    def register(self, function: Callable[..., Any]) -> Callable[..., Any]:
        if function in self._functions:
            raise ValueError(f"{function.__qualname__} is registered twice for {self.name}")
        self._functions.append(function)
        return function

    def call(self, *args: Any, **kwargs: Any) -> list[Any]:
        return [function(*args, **kwargs) for function in self._functions]

    def call_merged(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """For hooks whose functions return dicts: those dicts, merged."""
        merged: dict[str, Any] = {}
        for result in self.call(*args, **kwargs):
            merged.update(result)
        return merged

    def __repr__(self) -> str:
        return f"<Hooks {self.name}: {[f.__qualname__ for f in self._functions]}>"
