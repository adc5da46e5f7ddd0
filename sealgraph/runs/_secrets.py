"""Connection strings as users see them: PostgreSQL URLs recognised, secrets masked.

:func:`describe_db` shows a ``--db`` value without its passwords and keys;
:func:`scrub_secrets` masks them in any text (a driver's error message can echo the
connection string).
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, unquote_plus

from sealgraph.paths import default_db_path

_PG_SCHEMES = ("postgresql://", "postgres://")

_SECRET_KEY = re.compile(r"pass|secret|token|key", re.IGNORECASE)
"""A connection parameter whose name matches holds a secret (``password``, ``sslpassword``…)."""
_CONNINFO_PAIR = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']*)")
_LIBPQ_KEYWORDS = frozenset(
    {
        "host",
        "hostaddr",
        "port",
        "dbname",
        "user",
        "password",
        "passfile",
        "service",
        "sslmode",
        "sslpassword",
        "connect_timeout",
        "application_name",
        "options",
        "target_session_attrs",
    }
)
MASK = "***"
"""What a secret is shown as."""


def is_postgres_url(db: str | os.PathLike[str] | None) -> bool:
    """Return True when ``db`` is a PostgreSQL connection URL rather than a file path."""
    return isinstance(db, str) and db.lower().startswith(_PG_SCHEMES)


def _conninfo_pairs(text: str) -> list[re.Match[str]] | None:
    """Return the ``key=value`` pairs of a libpq keyword/value string (None: not one)."""
    pairs: list[re.Match[str]] = []
    pos = 0
    while pos < len(text.rstrip()):
        match = _CONNINFO_PAIR.match(text, pos)
        if match is None or match.end() == pos:
            return None
        pairs.append(match)
        pos = match.end()
    if not any(m[1].lower() in _LIBPQ_KEYWORDS for m in pairs):
        return None
    return pairs


def is_postgres_conninfo(db: str | os.PathLike[str] | None) -> bool:
    """Return True when ``db`` is a libpq ``key=value`` string (``host=h password=p``)."""
    return isinstance(db, str) and not is_postgres_url(db) and _conninfo_pairs(db) is not None


def _url_parts(url: str) -> tuple[str, str, str, str, str, str]:
    """Split a URL as (scheme://, userinfo, hosts and path, ?query, #fragment) by hand.

    ``urlsplit`` rejects what libpq accepts (several hosts ``h1:1,h2:2``), and a
    secret must be masked even in a URL that is not valid.
    """
    scheme, sep, rest = url.partition("://")
    rest, hash_, fragment = rest.partition("#")
    rest, mark, query = rest.partition("?")
    netloc, slash, path = rest.partition("/")
    userinfo, at, hosts = netloc.rpartition("@")
    return (scheme + sep, userinfo + at, hosts + slash + path, mark + query, hash_ + fragment, at)


def _secret_values(db: str) -> list[str]:
    """Return the secrets written in a connection URL or string, as written and decoded."""
    raw: list[str] = []
    if is_postgres_url(db):
        _, userinfo, _, query, _, at = _url_parts(db)
        if at and ":" in userinfo:
            raw.append(userinfo[:-1].partition(":")[2])
        for pair in query[1:].split("&"):
            key, eq, value = pair.partition("=")
            if eq and _SECRET_KEY.search(unquote_plus(key)):
                raw.append(value)
    else:
        for m in _conninfo_pairs(db) or []:
            if _SECRET_KEY.search(m[1]):
                value = m[2]
                raw.append(value)
                if value.startswith("'") and value.endswith("'") and len(value) >= 2:
                    raw.append(re.sub(r"\\(.)", r"\1", value[1:-1]))
    found = {
        form for value in raw if value for form in (value, unquote(value), unquote_plus(value))
    }
    return sorted((v for v in found if v), key=len, reverse=True)


def describe_db(db: str | os.PathLike[str] | None) -> str:
    """Return ``db`` as shown to users: the file path, or the connection without its secrets.

    In a ``postgresql://`` URL the password of the user part and the value of every
    query parameter whose name holds ``pass``, ``secret``, ``token`` or ``key``
    (``password``, ``sslpassword``, ``passfile``, ``sslkey``…) are shown as ``***``;
    so are those values in a libpq ``key=value`` string.
    """
    if db is None:
        return str(default_db_path())
    text = str(db)
    if is_postgres_url(text):
        scheme, userinfo, rest, query, fragment, at = _url_parts(text)
        if at and ":" in userinfo:
            userinfo = f"{userinfo[:-1].partition(':')[0]}:{MASK}@"
        if query:
            pairs = []
            for pair in query[1:].split("&"):
                key, eq, value = pair.partition("=")
                secret = eq and value and _SECRET_KEY.search(unquote_plus(key))
                pairs.append(f"{key}={MASK}" if secret else pair)
            query = "?" + "&".join(pairs)
        return scheme + userinfo + rest + query + fragment
    pairs = _conninfo_pairs(text) if isinstance(db, str) else None
    if pairs is None:
        return text
    shown = [f"{m[1]}={MASK}" if _SECRET_KEY.search(m[1]) and m[2] else m[0].strip() for m in pairs]
    return " ".join(shown)


def scrub_secrets(text: str, db: str | os.PathLike[str] | None) -> str:
    """Return ``text`` (an error message) with every secret of ``db`` masked.

    A driver's message can echo the connection string or a piece of it ('invalid
    percent-encoded token: "S3cret%zz"'): the whole string is replaced by
    :func:`describe_db`, then every secret value, as written or decoded, and any
    ``password=...`` left.
    """
    if db is None:
        return text
    raw = str(db)
    text = text.replace(raw, describe_db(raw))
    for secret in _secret_values(raw):
        text = text.replace(secret, MASK)
    return re.sub(
        r"((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&\"']+)",
        rf"\1{MASK}",
        text,
        flags=re.IGNORECASE,
    )
