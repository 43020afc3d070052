"""The server secret the keys are hashed under, and the keyed hash.

A keyed hash (HMAC-SHA256) rather than a bare one: a copy of the store (an SQLite file,
a Redis dump) without the secret gives nothing to test guesses against. The secret
comes from the environment variable ``[gateway] key_secret_env`` names (every machine
of a deployment sharing one Redis sets the same), else from a file in the data
directory, made once with owner-only permissions (the workers of one machine share it).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from pathlib import Path

__all__ = ["SECRET_FILE", "Hasher", "load_secret"]

SECRET_FILE = "gateway-key-secret"
MIN_SECRET = 16  # bytes


class Hasher:
    """HMAC-SHA256 under one secret; every digest costs the same whatever the input."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) < MIN_SECRET:
            raise ValueError(f"the key secret must be at least {MIN_SECRET} bytes")
        self._secret = secret
        # A digest no key has: an unknown key is compared against it, so a miss does the
        # same work as a hit.
        self.dummy = self.digest(secrets.token_urlsafe(32))

    def digest(self, key: str) -> str:
        return hmac.new(
            self._secret, key.encode("utf-8", "surrogatepass"), hashlib.sha256
        ).hexdigest()

    def __repr__(self) -> str:
        return "Hasher(<secret>)"


def load_secret(data_dir: Path, given: str | None = None) -> bytes:
    """``given`` (the value of ``[gateway] key_secret_env``'s variable) when set, else the
    data directory's file (made on first use, 0600, in a 0700 directory)."""
    if given:
        return given.encode()
    path = data_dir / SECRET_FILE
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    if data_dir.stat().st_mode & 0o077:
        data_dir.chmod(0o700)
    made = secrets.token_bytes(32).hex().encode()
    try:
        # O_EXCL: two workers starting at once agree on the first one's secret.
        fd = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
    except FileExistsError:
        return _read_soon(path)
    with os.fdopen(fd, "wb") as out:
        out.write(made)
    return made


def _read_soon(path: Path) -> bytes:
    # Another worker made the file a moment ago and may not have written it yet.
    for _ in range(100):
        try:
            return _read(path)
        except FileNotFoundError:
            time.sleep(0.01)
    return _read(path)


def _read(path: Path) -> bytes:
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)
    value = path.read_bytes().strip()
    if not value:
        raise FileNotFoundError(path)  # a file another worker has made but not yet written
    return value
