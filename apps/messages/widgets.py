"""Polls and to-do lists, as Zulip's clients build them on a message's submessages.

A message whose content starts with `/poll` or `/todo` becomes a widget: its sender's first
submessage (`msg_type` "widget") holds `{"widget_type", "extra_data"}` parsed from the content
(the question or title on the first line, one option or task per following line, list markers
dropped; a task's description follows its first ": "). Every later submessage is one change, which
clients replay in order: checked here so that no reader can store what the widgets cannot read.
"""

import re
from typing import Any

from pydantic_core import from_json

from apps.core.errors import JsonableError

WIDGET_TYPES = ("poll", "todo")
_LIST_MARKER = re.compile(r"\s*[-*]?\s*")


def widget_of(content: str) -> dict[str, Any] | None:
    """The widget a message's content makes (Zulip's get_widget_data), or None."""
    first = re.split(r"\s+", content, maxsplit=1)[0]
    widget_type = first.removeprefix("/") if first.startswith("/") else None
    if widget_type not in WIDGET_TYPES:
        return None
    lines = content.replace(first, "", 1).splitlines()
    heading = lines.pop(0).strip() if lines and lines[0] else ""
    items = [item for line in lines if (item := _LIST_MARKER.sub("", line.strip(), count=1))]
    if widget_type == "poll":
        return {"widget_type": "poll", "extra_data": {"question": heading, "options": items}}
    tasks = []
    for item in items:
        task, _, desc = item.partition(": ")
        tasks.append({"task": task.strip(), "desc": desc.strip()})
    return {"widget_type": "todo", "extra_data": {"task_list_title": heading, "tasks": tasks}}


def widget_type_of(first_submessage_content: str | None) -> str | None:
    try:
        data = from_json(first_submessage_content or "")
    except ValueError:
        return None
    widget_type = data.get("widget_type") if isinstance(data, dict) else None
    return widget_type if widget_type in WIDGET_TYPES else None


# Each kind of change: its fields and their types; whether only the widget's author may make it.
_CHANGES: dict[str, dict[str, tuple[dict[str, tuple[type, ...]], bool]]] = {
    "poll": {
        "vote": ({"key": (str,), "vote": (int,)}, False),
        "new_option": ({"idx": (int,), "option": (str,)}, False),
        "question": ({"question": (str,)}, True),
    },
    "todo": {
        "new_task": ({"key": (int,), "task": (str,), "desc": (str,), "completed": (bool,)}, False),
        "strike": ({"key": (str,)}, False),
        "new_task_list_title": ({"title": (str,)}, True),
    },
}
_KINDS = {str: "a string", int: "an integer", bool: "a boolean"}
_AUTHOR_ONLY = {
    "question": "You can't edit a question unless you are the author.",
    "new_task_list_title": "You can't edit the task list title unless you are the author.",
}


def check_widget_change(widget_type: str, data: Any, *, by_author: bool) -> None:
    """Zulip's validate_poll_data and validate_todo_data: one change, exactly its fields."""
    what = f"{widget_type} data"
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise JsonableError(f'{what}["type"] is not a string' if isinstance(data, dict) else f"{what} is not a dict")
    change = _CHANGES[widget_type].get(data["type"])
    if change is None:
        raise JsonableError(f"Unknown type for {what}: {data['type']}")
    fields, author_only = change
    if author_only and not by_author:
        raise JsonableError(_AUTHOR_ONLY[data["type"]])
    for name, types in fields.items():
        value = data.get(name)
        if name not in data:
            raise JsonableError(f'{what}["{name}"] is missing')
        # A bool is an int to Python: a vote or an index must be a number.
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            raise JsonableError(f'{what}["{name}"] is not {_KINDS[types[0]]}')
    if extra := sorted(set(data) - set(fields) - {"type"}):
        raise JsonableError(f"Unexpected arguments: {', '.join(extra)}")
    if data["type"] == "vote" and data["vote"] not in (1, -1):
        raise JsonableError(f'Invalid {what}["vote"]')
