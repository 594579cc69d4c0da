"""Compare Parley's /api/v1 document with what Zulip's zulip.yaml marks required (the committed
extract, zulip_required.json), for the operations both describe, and report the differences:

- a parameter Zulip requires that Parley does not take at all (clients send it; Parley ignores it),
- a parameter Zulip requires that Parley takes as optional (Parley is more lenient: harmless),
- a parameter Parley requires that Zulip does not (a client following Zulip's document may omit it),
- success fields Zulip requires that Parley's document does not describe (where Parley describes
  the operation's answer beyond the envelope).

    .venv/bin/python -m tools.zulip_openapi.compare        (exit status 0; the report on stdout)
"""

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXTRACT = Path(__file__).resolve().parent / "zulip_required.json"
API_PREFIX = "/api/v1"
METHODS = ("get", "post", "put", "patch", "delete")


def operation_key(method: str, path: str) -> str:
    """ "GET /users/{}": the method and the path under /api/v1, path parameters unnamed."""
    return f"{method.upper()} {re.sub(r'{[^}]+}', '{}', path.removeprefix(API_PREFIX))}"


@dataclass
class Comparison:
    common: list[str] = field(default_factory=list)
    zulip_only: list[str] = field(default_factory=list)
    parley_only: list[str] = field(default_factory=list)
    missing: dict[str, list[str]] = field(default_factory=dict)  # Zulip requires, Parley lacks
    lenient: dict[str, list[str]] = field(default_factory=dict)  # Zulip requires, Parley optional
    stricter: dict[str, list[str]] = field(default_factory=dict)  # Parley requires, Zulip does not
    undescribed: dict[str, list[str]] = field(default_factory=dict)  # response fields

    def report(self, source: str) -> str:
        lines = [
            f"Parley's /api/v1 document against {source}",
            f"operations both describe: {len(self.common)}; only Zulip: {len(self.zulip_only)}; "
            f"only Parley: {len(self.parley_only)}",
        ]
        sections = [
            ("required by Zulip, not taken by Parley", self.missing),
            ("required by Parley, optional in Zulip", self.stricter),
            ("required by Zulip, optional in Parley", self.lenient),
            ("success fields Zulip requires that Parley's schema does not describe", self.undescribed),
        ]
        for title, entries in sections:
            lines.append(f"\n{title}: {len(entries)} operations")
            lines.extend(f"  {key}: {', '.join(names)}" for key, names in sorted(entries.items()))
        lines.append(f"\nonly in Zulip's document: {', '.join(sorted(self.zulip_only))}")
        return "\n".join(lines)


def parley_operations(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """key -> {"params": {name: required}, "response": set of described fields or None}."""
    operations = {}
    for path, item in document["paths"].items():
        for method in METHODS:
            if method not in item:
                continue
            operation = item[method]
            params = {
                p["name"]: p.get("required", False) for p in operation.get("parameters", ()) if p["in"] == "query"
            }
            for media in operation.get("requestBody", {}).get("content", {}).values():
                required = set(media["schema"].get("required", ()))
                params.update({name: name in required for name in media["schema"].get("properties", {})})
            operations[operation_key(method, path)] = {"params": params, "response": described_fields(operation)}
    return operations


def described_fields(operation: dict[str, Any]) -> set[str] | None:
    """The success fields an operation's schema names beyond the envelope (None: the envelope only)."""
    schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    parts = schema.get("allOf", [])[1:]
    if not parts:
        return None
    return {name for part in parts for name in part.get("properties", {})}


def compare(document: dict[str, Any], extract: dict[str, Any]) -> Comparison:
    parley = parley_operations(document)
    zulip = {operation_key(*key.split(" ", 1)): value for key, value in extract["operations"].items()}
    result = Comparison(
        common=sorted(set(parley) & set(zulip)),
        zulip_only=sorted(set(zulip) - set(parley)),
        parley_only=sorted(set(parley) - set(zulip)),
    )
    for key in result.common:
        ours, theirs = parley[key], zulip[key]
        zulip_required = set(theirs["query"]) | set(theirs["body"])
        entries = {
            "missing": sorted(zulip_required - set(ours["params"])),
            "lenient": sorted(name for name in zulip_required if ours["params"].get(name) is False),
            "stricter": sorted(
                name for name, required in ours["params"].items() if required and name not in zulip_required
            ),
        }
        described = ours["response"]
        if described is not None:
            entries["undescribed"] = sorted(set(theirs["response"]) - {"result", "msg"} - described)
        for name, names in entries.items():
            if names:
                getattr(result, name)[key] = names
    return result


def load_extract() -> dict[str, Any]:
    return json.loads(EXTRACT.read_text())


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    import django

    django.setup()
    from apps.core.openapi import openapi_document

    extract = load_extract()
    print(compare(openapi_document(), extract).report(extract["source"]))


if __name__ == "__main__":
    main()
