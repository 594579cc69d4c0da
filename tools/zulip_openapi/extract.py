"""Extract from Zulip's OpenAPI document (zerver/openapi/zulip.yaml) what it marks required, per
operation: the required query and path parameters, the required fields of the request body, and the
required top-level fields of the success response. The result is small enough to commit
(zulip_required.json beside this file), so CI compares Parley's document with it without fetching
Zulip's whole file.

    .venv/bin/python -m tools.zulip_openapi.extract zulip.yaml --source "zulip/zulip@<commit>" \\
        > tools/zulip_openapi/zulip_required.json
"""

import argparse
import json
import sys
from typing import Any

import yaml

METHODS = ("get", "post", "put", "patch", "delete")


def resolve(document: dict[str, Any], node: Any) -> Any:
    """`node` with its local `$ref` followed (one level at a time, as often as needed)."""
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        target: Any = document
        for part in node["$ref"][2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def required_fields(document: dict[str, Any], schema: Any, depth: int = 0) -> set[str]:
    """The required properties of an object schema, through allOf (all) and $ref."""
    schema = resolve(document, schema)
    if not isinstance(schema, dict) or depth > 20:
        return set()
    required = set(schema.get("required", ()))
    for part in schema.get("allOf", ()):
        required |= required_fields(document, part, depth + 1)
    return required


def operation_required(document: dict[str, Any], operation: dict[str, Any], path_item: dict[str, Any]) -> dict:
    parameters = [resolve(document, p) for p in (*path_item.get("parameters", ()), *operation.get("parameters", ()))]
    body: set[str] = set()
    request_body = resolve(document, operation.get("requestBody"))
    for media in (request_body or {}).get("content", {}).values():
        body |= required_fields(document, media.get("schema"))
    response: set[str] = set()
    success = resolve(document, operation.get("responses", {}).get("200"))
    for media in (success or {}).get("content", {}).values():
        response |= required_fields(document, media.get("schema"))
    return {
        "path": sorted(p["name"] for p in parameters if p.get("in") == "path"),
        "query": sorted(p["name"] for p in parameters if p.get("in") == "query" and p.get("required")),
        "body": sorted(body),
        "response": sorted(response),
    }


def extract(document: dict[str, Any], source: str) -> dict[str, Any]:
    operations = {}
    for path, path_item in sorted(document.get("paths", {}).items()):
        for method in METHODS:
            if method in path_item:
                operation = path_item[method]
                operations[f"{method.upper()} {path}"] = operation_required(document, operation, path_item)
    return {"source": source, "operations": operations}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("zulip_yaml")
    parser.add_argument("--source", required=True, help="where the file came from, with its commit")
    args = parser.parse_args(argv)
    with open(args.zulip_yaml, encoding="utf-8") as file:
        document = yaml.safe_load(file)
    json.dump(extract(document, args.source), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
