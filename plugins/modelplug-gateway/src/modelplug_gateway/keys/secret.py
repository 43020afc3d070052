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
from base64 import urlsafe_b64encode
from pathlib import Path

from .record import KEY_BYTES, PREFIX

__all__ = ["SECRET_FILE", "Hasher", "load_secret"]

SECRET_FILE = "gateway-key-secret"
MIN_SECRET = 16  # bytes
CHECK_BYTES = 9  # a key's check: 72 bits of an HMAC ...
CHECK_CHARS = 12  # ... in URL-safe base64
RANDOM_CHARS = 43  # KEY_BYTES (32) in URL-safe base64
KEY_LENGTH = len(PREFIX) + RANDOM_CHARS + CHECK_CHARS


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

    def new_key(self) -> str:
        """A fresh key: ``mpk-``, 32 random bytes and a check under the secret, URL-safe
        (59 characters)."""
        body = secrets.token_urlsafe(KEY_BYTES)
        return PREFIX + body + self._check(body.encode()).decode()

    def checks(self, key: str) -> bool:
        """Whether ``key`` carries the check only the secret makes. A guess, a typo or
        a flood of made-up keys fails here, before any store is asked; every key this
        gateway made passes, whether or not it still exists, so this says nothing about
        which keys exist."""
        if len(key) != KEY_LENGTH or not key.startswith(PREFIX):
            return False
        given = key.encode("utf-8", "surrogatepass")  # a header may hold any character
        body, check = given[len(PREFIX) : -CHECK_CHARS], given[-CHECK_CHARS:]
        return hmac.compare_digest(self._check(body), check)

    def _check(self, body: bytes) -> bytes:
        mac = hmac.new(self._secret, b"mpk-check:" + body, hashlib.sha256).digest()
        return urlsafe_b64encode(mac[:CHECK_BYTES])

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
