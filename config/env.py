"""Reading and validating the environment at start-up.

Every setting an operator may change comes from an environment variable (or a `.env` file in the
project root). A value that cannot work stops the process at start-up with a message naming the
variable, instead of failing later on the first request.
"""

import ipaddress
import re
import secrets
import warnings
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured
from django.http.request import split_domain_port

env = environ.Env()

_HOST_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$")


class ConfigurationError(ImproperlyConfigured):
    """A variable's value cannot work: its message names the variable (and is all an operator needs:
    manage.py and the server print it alone, without a traceback)."""


def fail(variable: str, problem: str) -> None:
    raise ConfigurationError(f"{variable}: {problem}")


def read_dot_env(base_dir: Path) -> None:
    """Load `.env` from the project root; variables already in the environment win."""
    dot_env = base_dir / ".env"
    if dot_env.is_file():
        env.read_env(str(dot_env))


def port(variable: str = "PORT", default: int = 8000) -> int:
    try:
        value = env.int(variable, default=default)
    except ValueError:
        fail(variable, f"must be an integer, got {env.str(variable)!r}")
    if not 1 <= value <= 65535:
        fail(variable, f"must be between 1 and 65535, got {value}")
    return value


# What django-environ reads as true, and its false words; anything else is a mistake, not false
# (RATE_LIMITING_ENABLED=ture turned every rate limit off).
TRUE_WORDS = frozenset({"true", "on", "ok", "y", "yes", "1"})
FALSE_WORDS = frozenset({"false", "off", "n", "no", "0"})


def boolean(variable: str, default: bool) -> bool:
    """An on/off setting: true/false (yes/no, on/off, 1/0); unset or empty: `default`."""
    raw = env.str(variable, default="")
    word = raw.strip().lower()
    if not word:
        return default
    if word not in TRUE_WORDS | FALSE_WORDS:
        fail(variable, f"must be true or false, got {raw!r}")
    return word in TRUE_WORDS


def positive_int(variable: str, default: int, *, maximum: int | None = None) -> int:
    try:
        value = env.int(variable, default=default)
    except ValueError:
        fail(variable, f"must be an integer, got {env.str(variable)!r}")
    if value < 1:
        fail(variable, f"must be at least 1, got {value}")
    if maximum is not None and value > maximum:
        fail(variable, f"must be at most {maximum}, got {value}")
    return value


def positive_float(variable: str, default: float) -> float:
    """A number of seconds, more than 0."""
    try:
        value = env.float(variable, default=default)
    except ValueError:
        fail(variable, f"must be a number, got {env.str(variable)!r}")
    if not value > 0:
        fail(variable, f"must be more than 0, got {value}")
    return value


def non_negative_int(variable: str, default: int) -> int:
    """An integer, 0 or more (0 turning something off)."""
    try:
        value = env.int(variable, default=default)
    except ValueError:
        fail(variable, f"must be an integer, got {env.str(variable)!r}")
    if value < 0:
        fail(variable, f"must be at least 0, got {value}")
    return value


def seconds_range(variable: str, default: tuple[float, float]) -> tuple[float, float]:
    """Two numbers "low,high" with 0 < low <= high."""
    raw = env.str(variable, default="")
    if not raw:
        return default
    try:
        low, high = (float(part) for part in raw.split(","))
    except ValueError:
        fail(variable, f'must be two numbers "low,high", got {raw!r}')
    if not 0 < low <= high:
        fail(variable, f"must satisfy 0 < low <= high, got {raw!r}")
    return low, high


def networks(variable: str) -> list[str]:
    """Comma-separated CIDRs ("127.0.0.1/32,10.1.0.0/16"; an address alone is its /32 or /128),
    empty by default; each as ipaddress writes it."""
    result = []
    for part in env.str(variable, default="").split(","):
        if part.strip():
            try:
                result.append(str(ipaddress.ip_network(part.strip(), strict=False)))
            except ValueError:
                fail(variable, f"must be comma-separated networks (CIDR), got {part.strip()!r}")
    return result


def token(variable: str, *, min_length: int) -> str:
    """A secret shared with a client, empty by default (none); at least `min_length` characters."""
    value = env.str(variable, default="").strip()
    if value and len(value) < min_length:
        fail(variable, f"must be at least {min_length} characters")
    return value


def picture_address(variable: str) -> str | None:
    """An address browsers and apps load a picture from: https://... or http://..., or a path on this
    server (/...); none by default."""
    value = env.str(variable, default="").strip()
    if value and not value.startswith(("https://", "http://", "/")):
        fail(variable, f"must be an http(s) URL or a path beginning with /, got {value!r}")
    return value or None


def choice(variable: str, default: str, choices: tuple[str, ...], *, any_case: bool = False) -> str:
    value = env.str(variable, default=default)
    if any_case:
        value = value.upper()
    if value not in choices:
        fail(variable, f"must be one of {', '.join(choices)}, got {value!r}")
    return value


def external_host(default: str) -> str:
    """`host[:port]` under which the default organization is reached; subdomains are others."""
    value = env.str("EXTERNAL_HOST", default=default).strip().lower()
    if "://" in value or "/" in value:
        fail("EXTERNAL_HOST", f"must be a host name with an optional port, without scheme or path, got {value!r}")
    host, port_part = split_domain_port(value)
    if not host or (port_part and not port_part.isdigit()):
        fail("EXTERNAL_HOST", f"is not a valid host[:port]: {value!r}")
    if not is_ip_address(host) and not _HOST_RE.match(host):
        fail("EXTERNAL_HOST", f"is not a valid host name: {value!r}")
    return value


def is_ip_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def database(base_dir_var: Path, connect_timeout: int) -> dict:
    """DATABASE_URL (PostgreSQL or SQLite); the embedded SQLite file under var/ when unset."""
    url = env.str("DATABASE_URL", default="")
    if not url:
        return sqlite_database(base_dir_var / "parley.sqlite3")
    try:
        # Its warning of an unknown scheme would come before our message, which says it better (the
        # operator QA pass).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = env.db_url_config(url)
    except Exception as exc:  # django-environ raises several types for bad URLs
        fail("DATABASE_URL", f"cannot be parsed ({exc})")
    engine = config.get("ENGINE", "")
    if engine == "django.db.backends.sqlite3":
        return sqlite_database(Path(config["NAME"]))
    if engine not in ("django.db.backends.postgresql", "django.db.backends.postgresql_psycopg2"):
        fail("DATABASE_URL", "must be a postgres:// or sqlite:// URL")
    config["ENGINE"] = POSTGRESQL_ENGINE
    # A Unix socket's directory is written percent-encoded in the host, as libpq reads such URLs
    # (postgres://parley@%2Fvar%2Frun%2Fpostgresql/parley); django-environ leaves it encoded.
    config["HOST"] = unquote(config.get("HOST") or "")
    if not config.get("NAME"):
        fail("DATABASE_URL", "names no database")
    options = config.setdefault("OPTIONS", {})
    options.setdefault("connect_timeout", connect_timeout)
    # A database host that stops answering (frozen, cut off by the network) fails the queries
    # waiting on it within about 25 s, not the kernel's 15 minutes of retransmissions: TCP
    # keepalives while a query waits for its answer, and a limit on data left unacknowledged.
    options.update({name: value for name, value in TCP_LIVENESS.items() if name not in options})
    if boolean("DATABASE_POOL", default=False):
        # Off by default: requests run on a fixed set of long-lived threads (config/asgi.py), so
        # each keeps one persistent connection, which is cheaper than taking one from a pool and
        # setting it up for every request.
        options["pool"] = {
            "min_size": positive_int("DATABASE_POOL_MIN_SIZE", 1),
            "max_size": positive_int("DATABASE_POOL_MAX_SIZE", 10),
            # Waiting for a free connection must not hang a request when the database is down.
            "timeout": connect_timeout,
        }
        config["CONN_MAX_AGE"] = 0
    else:
        config["CONN_MAX_AGE"] = non_negative_int("CONN_MAX_AGE", 60)
    config["CONN_HEALTH_CHECKS"] = True
    return config


# libpq's connection parameters (seconds, but tcp_user_timeout in milliseconds).
TCP_LIVENESS = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3,
                "tcp_user_timeout": 25_000}  # fmt: skip

# Django's PostgreSQL backend with a health check that needs no query (see apps/core/postgresql/base.py).
POSTGRESQL_ENGINE = "apps.core.postgresql"
# Django's SQLite backend with PostgreSQL's case-insensitive equality (see apps/core/sqlite/base.py).
SQLITE_ENGINE = "apps.core.sqlite"


def directory(variable: str, default: Path) -> Path:
    """A directory the server writes into, from the environment (made if missing); left empty, the
    default (the verify QA pass: STATIC_ROOT= was the current directory, and one that could not be
    made a traceback)."""
    path = Path(env.str(variable, default="") or default)
    make_directory(path, variable, "cannot be used as a directory")
    return path


def make_directory(path: Path, variable: str, what: str) -> None:
    """`path` made if missing; one that cannot be (a file named `var`: the operator QA pass) said as
    a configuration error of `variable`, not a traceback."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(variable, f"{what}: {exc.strerror} ({path})")


def sqlite_database(path: Path) -> dict:
    make_directory(path.parent, "DATABASE_URL", "the SQLite database's directory cannot be made")
    return {
        "ENGINE": SQLITE_ENGINE,
        "NAME": str(path),
        "OPTIONS": {
            # WAL lets readers proceed while one writer commits; IMMEDIATE takes the write lock
            # at BEGIN so two writers queue instead of failing with "database is locked".
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        },
    }


def redis_url() -> str:
    url = env.str("REDIS_URL", default="")
    if not url:
        return url
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix"):
        fail("REDIS_URL", f"must be a redis://, rediss:// or unix:// URL, got {url!r}")
    # The database number: redis-py ignores one that is no number and uses 0, which another
    # deployment may share (the operator QA pass: redis://host:6379/abc wrote into database 0).
    numbers = [value for key, value in parse_qsl(parts.query) if key == "db"]
    if parts.scheme != "unix" and parts.path.strip("/"):
        numbers.append(parts.path.strip("/"))
    if not all(number.isascii() and number.isdigit() for number in numbers):
        fail("REDIS_URL", "names its database by number: redis://host:6379/1 (or ?db=1), got one that is no number")
    return url


# The backends EMAIL_URL may name (django-environ's email URL schemes).
_EMAIL_BACKENDS = {
    "django.core.mail.backends.smtp.EmailBackend",
    "django.core.mail.backends.console.EmailBackend",
    "django.core.mail.backends.filebased.EmailBackend",
    "django.core.mail.backends.locmem.EmailBackend",
    "django.core.mail.backends.dummy.EmailBackend",
}


def email(default: str = "consolemail://") -> dict:
    """Django's EMAIL_* settings from EMAIL_URL (django-environ's `env.email_url`): an SMTP server
    such as smtp+tls://user:password@smtp.example.com:587 (STARTTLS) or smtp+ssl://...:465, or
    consolemail:// (emails written to standard output: the default)."""
    example = "an email URL such as smtp+tls://user:password@smtp.example.com:587 or consolemail://"
    try:
        config = env.email_url("EMAIL_URL", default=default)
    except Exception:  # the URL holds a password: never repeat it
        fail("EMAIL_URL", f"must be {example}")
    if config.get("EMAIL_BACKEND") not in _EMAIL_BACKENDS:
        fail("EMAIL_URL", f"must be {example}")
    if config["EMAIL_BACKEND"].endswith(".smtp.EmailBackend") and not config.get("EMAIL_HOST"):
        fail("EMAIL_URL", f"names no SMTP host; it must be {example}")
    if config["EMAIL_BACKEND"].endswith(".filebased.EmailBackend"):
        # filemail:///var/mail/parley names an absolute folder (django-environ would keep only
        # "var/mail/parley", relative to the working directory); four slashes work too.
        parts = urlsplit(env.str("EMAIL_URL", default=default))
        if parts.netloc:
            fail("EMAIL_URL", f"names a host ({parts.netloc!r}): a folder is filemail:///absolute/folder (3 slashes)")
        folder = parts.path.lstrip("/")
        if not folder:
            fail("EMAIL_URL", "names no folder; it must be filemail:///absolute/folder")
        config["EMAIL_FILE_PATH"] = "/" + folder
    # Unset parts keep Django's defaults (None is not a valid host, user or port).
    return {name: value for name, value in config.items() if value not in (None, "")}


def _strong_key(value: str) -> bool:
    """A key as long and varied as Django's check asks (security.W009)."""
    return len(value) >= 50 and len(set(value)) >= 5


def secret_key(var_dir: Path, *, allow_generated: bool) -> str:
    """SECRET_KEY from the environment; for the embedded default, one generated into var/."""
    value = env.str("SECRET_KEY", default="")
    if value:
        if not _strong_key(value):
            fail("SECRET_KEY", "must be at least 50 characters with at least 5 distinct ones")
        return value
    if not allow_generated:
        fail("SECRET_KEY", "is required (at least 50 random characters)")
    key_file = var_dir / "secret_key"
    if not key_file.exists():
        make_directory(var_dir, "SECRET_KEY", "not set, and the directory of the one generated cannot be made")
        key_file.write_text(secrets.token_urlsafe(64))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


def secret_key_fallbacks() -> list[str]:
    """SECRET_KEY_FALLBACKS: earlier keys, comma-separated, still accepted for what they signed
    (sessions, password reset links, directory page tokens) while the new key signs everything new."""
    keys = [key.strip() for key in env.list("SECRET_KEY_FALLBACKS", default=[]) if key.strip()]
    # Each was a SECRET_KEY: one shorter is a key cut short in the copy, which accepts nothing it signed
    # (the operator QA pass: it passed unnoticed).
    if not all(map(_strong_key, keys)):
        fail("SECRET_KEY_FALLBACKS", "each key must be at least 50 characters with at least 5 distinct ones")
    return keys


def mail_domain(external: str) -> str:
    """The domain of the server's own sender address: EXTERNAL_HOST without its port."""
    hostname, _ = split_domain_port(external)
    return hostname


def allowed_hosts(external: str) -> list[str]:
    hostname, _ = split_domain_port(external)
    default = ["localhost", "127.0.0.1", "[::1]", hostname, f".{hostname}"]
    hosts = env.list("ALLOWED_HOSTS", default=default)
    if not hosts:
        fail("ALLOWED_HOSTS", "must list at least one host")
    return hosts
