"""Virtual keys: the record, the keyed hash, and the store that holds them (SQLite in
the user's data directory, or the operator's Redis when ``[redis] url`` is set)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .record import PERIODS, PREFIX, KeyRecord
from .secret import Hasher, load_secret
from .store import KeyExistsError, KeyStore, NoSuchKeyError

if TYPE_CHECKING:
    from modelplug import Client

    from .sqlite_store import SqliteKeys

__all__ = [
    "PERIODS",
    "PREFIX",
    "Hasher",
    "KeyExistsError",
    "KeyRecord",
    "KeyStore",
    "NoSuchKeyError",
    "close_sqlite_keys",
    "hasher_for",
    "new_key",
    "open_store",
    "redis_connection",
]


_FILES: dict[Path, SqliteKeys] = {}
_FILES_LOCK = threading.Lock()


def new_key(hasher: Hasher) -> str:
    """A fresh key for the gateway whose secret ``hasher`` holds (see
    :meth:`Hasher.new_key`): only keys made under that secret pass its check."""
    return hasher.new_key()


def gateway_table(client: Client) -> dict[str, Any]:
    """``[gateway]`` from the user's own file (a project file never sets it)."""
    return dict(client.settings.plugin_options("gateway", project=False))


def redis_connection(client: Client) -> Any:
    """modelplug-redis's Connection for ``[redis]``, or None (not set, not installed)."""
    try:
        from modelplug_redis import connection_for
    except ImportError:
        return None
    return connection_for(client)


def open_store(client: Client) -> KeyStore:
    """The Redis store when ``[redis] url`` is set, else the data directory's file."""
    connection = redis_connection(client)
    if connection is not None:
        from .redis_store import RedisKeys

        return RedisKeys(connection)
    from .sqlite_store import FILE_NAME, SqliteKeys

    path = client.settings.data_dir() / FILE_NAME
    # One store per file in a process, as the limits' and fallback's: one pair of
    # connections however many gates and commands ask, and one to close.
    with _FILES_LOCK:
        found = _FILES.get(path)
        if found is None:
            found = _FILES[path] = SqliteKeys(path)
        return found


def close_sqlite_keys(client: Client) -> None:
    """Close this process's connections to ``client``'s keys file; its next use opens
    them again."""
    from .sqlite_store import FILE_NAME

    with _FILES_LOCK:
        found = _FILES.get(client.settings.data_dir() / FILE_NAME) if _FILES else None
    if found is not None:
        found.close()


def hasher_for(client: Client) -> Hasher:
    """The hasher under the secret ``[gateway] key_secret_env`` names, else the data
    directory's."""
    env_name = gateway_table(client).get("key_secret_env")
    given = client.settings.getenv(env_name) if isinstance(env_name, str) and env_name else None
    return Hasher(load_secret(client.settings.data_dir(), given))
