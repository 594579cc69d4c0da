"""The code's shape that docs/architecture.md promises and import-linter cannot see: imports inside
functions (a cycle dodged at run time) and modules grown past one reason to change."""

import ast
from pathlib import Path

import pytest

APPS = Path(__file__).resolve().parents[2] / "apps"
MODULES = sorted(p for p in APPS.rglob("*.py") if "migrations" not in p.parts)
MAX_MODULE_LINES = 500


def _app_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "apps" else None


def _function_level_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of each import of another app made inside a function, AppConfig.ready excepted
    (Django's place for registering with other apps, once the app registry is ready)."""
    own_app = path.relative_to(APPS).parts[0]
    found = []
    for function in ast.walk(ast.parse(path.read_text())):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if function.name == "ready" and path.name == "apps.py":
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            found += [(node.lineno, name) for name in names if _app_of(name) not in (None, own_app)]
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(APPS)))
def test_no_function_level_imports_of_other_apps(path):
    assert _function_level_imports(path) == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(APPS)))
def test_modules_stay_small(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{lines} lines: split it by sub-domain (docs/architecture.md)"
