"""Where ``modelplug chat`` keeps conversations, so ``-c`` continues the last one (or
``-c ID`` any one that ``chat --list`` shows).

One JSON file per conversation in ``conversations/`` of modelplug's data directory
(:meth:`Settings.data_dir`: ``MODELPLUG_DATA_DIR``, else the platform's, such as
``~/.local/share/modelplug``), readable
by the user only: the directory 0700, every file 0600, written whole to a new file and
renamed over the old one, so a crash never leaves half a conversation. ``last`` names
the conversation a reply was last added to. What is stored is the model, the system
prompt and the messages, with every secret the process knows masked; never a key, never
a request option.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modelplug.contract.errors import ConfigError

if TYPE_CHECKING:
    from modelplug.contract.types import Message

__all__ = ["Conversation", "Store", "Summary", "is_conversation_id"]

FORMAT = 1
LAST = "last"
# What Conversation.new names one: its UTC start and six hex digits.
ID = re.compile(r"\d{8}T\d{6}-[0-9a-f]{6}")
OPENING = 50  # characters of the first prompt a listing shows


def is_conversation_id(text: str) -> bool:
    """Whether ``text`` is a conversation's id (``20261207T065339-a1b2c3``), so that
    ``-c TEXT`` names one rather than being a prompt."""
    return ID.fullmatch(text) is not None


@dataclass(frozen=True)
class Summary:
    """One stored conversation as ``chat --list`` shows it."""

    id: str
    model: str | None
    updated: str  # ISO time of the last reply, UTC
    messages: int
    opening: str  # the first prompt, on one line, shortened
    problem: str | None = None  # why the file cannot be read, when it cannot


@dataclass
class Conversation:
    """One conversation: the model asked for, the system prompt, the messages so far."""

    id: str
    model: str | None = None
    system: str | None = None
    messages: list[Message] = field(default_factory=list)
    created: str = ""

    @classmethod
    def new(cls, model: str | None, system: str | None) -> Conversation:
        now = datetime.now(UTC)
        stamp = now.strftime("%Y%m%dT%H%M%S")
        return cls(
            id=f"{stamp}-{secrets.token_hex(3)}",
            model=model,
            system=system,
            created=now.isoformat(),
        )


class Store:
    """The conversations directory in ``data_dir`` (made, 0700, on the first save)."""

    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / "conversations"

    def path(self, conversation_id: str) -> Path:
        return self.root / f"{conversation_id}.json"

    def save(self, conversation: Conversation) -> Path:
        """Write the conversation and make it the last one."""
        from modelplug.contract.secrets import redact_data

        data: dict[str, Any] = {
            "format": FORMAT,
            "id": conversation.id,
            "model": conversation.model,
            "system": conversation.system,
            "created": conversation.created,
            "updated": datetime.now(UTC).isoformat(),
            "messages": [
                m.model_dump(mode="json", exclude_none=True) for m in conversation.messages
            ],
        }
        self._ensure_root()
        path = self.path(conversation.id)
        _write_private(path, json.dumps(redact_data(data), ensure_ascii=False, indent=1))
        _write_private(self.root / LAST, conversation.id + "\n")
        return path

    def last(self) -> Conversation:
        """The conversation a reply was last added to; ConfigError when there is none."""
        conversation_id = self.last_id()
        if conversation_id is None:
            raise ConfigError(
                f"no conversation to continue yet ({self.root} holds none); start one "
                "without -c/--continue"
            )
        return self.load(conversation_id)

    def last_id(self) -> str | None:
        try:
            return (self.root / LAST).read_text(encoding="utf-8").strip() or None
        except FileNotFoundError:
            return None

    def named(self, conversation_id: str) -> Conversation:
        """The conversation ``conversation_id`` names; ConfigError when there is none."""
        if not self.path(conversation_id).exists():
            raise ConfigError(
                f"no conversation {conversation_id} in {self.root}; modelplug chat --list "
                "shows those there are"
            )
        return self.load(conversation_id)

    def summaries(self) -> list[Summary]:
        """Every stored conversation, the one last replied to first."""
        if not self.root.is_dir():
            return []
        found = [_summary(path) for path in self.root.glob("*.json")]
        return sorted(found, key=lambda s: (s.updated, s.id), reverse=True)

    def load(self, conversation_id: str) -> Conversation:
        from pydantic import ValidationError

        from modelplug.contract.types import Message

        path = self.path(conversation_id)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return Conversation(
                id=data["id"],
                model=data.get("model"),
                system=data.get("system"),
                messages=[Message.model_validate(m) for m in data["messages"]],
                created=data.get("created", ""),
            )
        except FileNotFoundError:
            raise ConfigError(
                f"the conversation {path} is gone; start a new one without -c/--continue"
            ) from None
        except (ValueError, KeyError, TypeError, ValidationError) as exc:
            reason = type(exc).__name__ if isinstance(exc, ValidationError) else str(exc)
            raise ConfigError(
                f"{path}: not a conversation modelplug can read ({reason}); move it away or "
                "start a new one without -c/--continue"
            ) from None

    def _ensure_root(self) -> None:
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        # An existing directory is tightened too: it holds what the user said.
        os.chmod(self.root, 0o700)


def _summary(path: Path) -> Summary:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        messages = data["messages"]
        return Summary(
            id=str(data.get("id") or path.stem),
            model=data.get("model"),
            updated=str(data.get("updated") or data.get("created") or ""),
            messages=len(messages),
            opening=_opening(messages),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else type(exc).__name__
        return Summary(path.stem, None, "", 0, "", problem=f"cannot be read ({reason})")


def _opening(messages: list[dict[str, Any]]) -> str:
    """The first prompt's text on one line, cut to :data:`OPENING` characters."""
    for message in messages:
        if message.get("role") != "user":
            continue
        for block in message.get("content", []):
            if block.get("type") == "text":
                text = " ".join(str(block.get("text", "")).split())
                return text if len(text) <= OPENING else text[: OPENING - 1] + "…"
    return ""


def _write_private(path: Path, text: str) -> None:
    """``text`` into ``path`` with mode 0600 from its first byte, replacing it whole."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
