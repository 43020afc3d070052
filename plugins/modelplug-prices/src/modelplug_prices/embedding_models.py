"""Embedding models: each one's vector size, the input limit of one text, and whether
its server cuts a longer text or refuses it (core refuses before sending only for the
latter). Vendor documentation figures; keys normalized as in :mod:`.windows`."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["EMBEDDINGS", "Embedding"]


class Embedding(NamedTuple):
    dimensions: int
    input_limit: int  # tokens per text
    truncates: bool


EMBEDDINGS: dict[str, Embedding] = {
    # OpenAI: a text over 8,191 tokens is a 400, never cut.
    "text-embedding-3-small": Embedding(1536, 8191, False),
    "text-embedding-3-large": Embedding(3072, 8191, False),
    "text-embedding-ada-002": Embedding(1536, 8191, False),
    # Google: the Gemini API cuts a text at the limit (Vertex: autoTruncate, default on).
    "gemini-embedding-001": Embedding(3072, 2048, True),
    "text-embedding-004": Embedding(768, 2048, True),
    # Mistral refuses a text over its limit.
    "mistral-embed": Embedding(1024, 8192, False),
    "codestral-embed": Embedding(1536, 8192, False),
    # Cohere cuts by default (truncate = END).
    "embed-v4-0": Embedding(1536, 128_000, True),
    # Open-weight models as Ollama, llama.cpp or vLLM serve them (Ollama cuts by default).
    "nomic-embed-text": Embedding(768, 8192, True),
    "mxbai-embed-large": Embedding(1024, 512, True),
    "all-minilm": Embedding(384, 512, True),
    "bge-m3": Embedding(1024, 8192, True),
}
