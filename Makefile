# The two commands of the README: `make run` serves Parley, `make test` runs the whole test suite.
# Both create .venv and install requirements.txt first (again only when requirements.txt changes).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The environment's PORT, else the one in .env (where manage.py's commands read it too, for the
# links they print), else 8000.
PORT ?= $(or $(shell sed -n 's/^PORT=//p' .env 2>/dev/null | tail -n 1),8000)
export PORT

.PHONY: run test lint format install migrate shell port-free port-note

$(BIN)/activate:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Parley needs Python 3.11 or newer; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: requirements.txt $(BIN)/activate
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

install: $(VENV)/.installed

migrate: install
	$(BIN)/python manage.py migrate --noinput

# A port already taken (or no port at all) is said at once, before the set-up (gunicorn would say it
# after it, in its words).
port-free:
	@$(PYTHON) -c 'import os, socket, sys; given = os.environ["PORT"]; \
	given.isascii() and given.isdigit() and 0 < int(given) < 65536 or sys.exit(f"Configuration error: PORT: must be a port number (1-65535), got {given!r}"); \
	port = int(given); socket.socket().connect_ex(("127.0.0.1", port)) == 0 and \
	sys.exit(f"Port {port} is taken (a Parley already running?): stop it, or serve on another: PORT=9000 make run")'

# A port given only to `make run` (PORT=9000 make run) is not the one manage.py's commands read from
# .env: the links they print (invitations, the Welcome Bot's) would name another. Said, not refused.
port-note:
	@dotenv=$$(sed -n 's/^PORT=//p' .env 2>/dev/null | tail -n 1); \
	if [ "$(PORT)" != "$${dotenv:-8000}" ] && [ -z "$$EXTERNAL_HOST" ] && ! grep -qs '^EXTERNAL_HOST=' .env; then \
	echo "Note: PORT=$(PORT) is not in .env: this server's own links name port $(PORT), but manage.py's commands run later will name port $${dotenv:-8000} in the links they print (add PORT=$(PORT) to .env)." >&2; fi

# gunicorn listens first, then sets up (config/gunicorn.py set_up_for_make_run): the database migrated
# and the demo made while the static files that changed are collected, before its workers start. A
# client calling during a restart is answered 503 meanwhile rather than refused (Zulip clients give
# up after ten refused tries, a second apart).
run: port-free port-note install
	PARLEY_SET_UP_DEMO=http://127.0.0.1:$(PORT) exec $(BIN)/gunicorn -c config/gunicorn.py config.asgi:application

test: install
	$(BIN)/pytest -n 2 $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

shell: install
	$(BIN)/python manage.py shell
