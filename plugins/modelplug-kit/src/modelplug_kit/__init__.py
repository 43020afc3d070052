"""The provider kit: what a provider plugin builds on, beside core's contract.

Core (``modelplug``) defines the neutral types, the hook specs, the errors and the
client; this distribution holds the plumbing every provider shares and core does not
need: the HTTP path (:class:`ProviderHTTP`: the shared httpx2 client, statuses to
classified errors, partial output on a cut, early close), SSE and NDJSON framing, the
vendors' usage shapes (``usage_from_openai`` and friends), embedding batches and the
OpenAI embeddings answer, JSON Schema translated to what an API accepts, the SQLite
file policies share between processes (:class:`LocalDB`), the store interfaces the
policies and the stores that hold their state share (:mod:`modelplug_kit.stores`, with
the in-process stores of :mod:`modelplug_kit.memory_stores` and the counters file of
:class:`SqliteCounters`), what budgets counted in those stores share (money as whole
nano-units: ``to_nano``, ``from_nano``; calendar periods: ``period_window``), which
store a policy's settings choose (``choose_counter_store``), and the authors' test kit
(:mod:`modelplug_kit.testing`: the wire server and the conformance suite).

A plugin imports the contract from ``modelplug`` and the plumbing from here; this
module is the kit's one export list (:data:`EXPORTS`), each name loaded on first use so
importing the kit from a plugin's entry module costs nothing at ``modelplug plugins``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug import lazy_exports

__version__ = "2.0.0.dev0"

#: Every public name of the kit and the module it lives in.
EXPORTS = {
    "embed_batches": "modelplug_kit.batches",
    "gather_batches": "modelplug_kit.batches",
    "EmbeddingsBatch": "modelplug_kit.embeddings",
    "combine_embeddings": "modelplug_kit.embeddings",
    "read_openai_embeddings": "modelplug_kit.embeddings",
    "multipart_form": "modelplug_kit.transcriptions",
    "read_openai_transcript": "modelplug_kit.transcriptions",
    "transcription_form": "modelplug_kit.transcriptions",
    "Answer": "modelplug_kit.http",
    "ProviderHTTP": "modelplug_kit.http",
    "StatusError": "modelplug_kit.http",
    "Timeouts": "modelplug_kit.http",
    "WireErrors": "modelplug_kit.http",
    "error_body": "modelplug_kit.http",
    "error_message": "modelplug_kit.http",
    "error_type": "modelplug_kit.http",
    "http_limits": "modelplug_kit.http",
    "provider_headers": "modelplug_kit.http",
    "LocalDB": "modelplug_kit.local_db",
    "MemoryCooldowns": "modelplug_kit.memory_stores",
    "MemoryCounters": "modelplug_kit.memory_stores",
    "from_nano": "modelplug_kit.money",
    "to_nano": "modelplug_kit.money",
    "NDJSONFramer": "modelplug_kit.ndjson",
    "PERIOD_WORDS": "modelplug_kit.periods",
    "period_window": "modelplug_kit.periods",
    "PENALTIES": "modelplug_kit.sampling",
    "dropped_sampling": "modelplug_kit.sampling",
    "Untranslatable": "modelplug_kit.schema",
    "inline_refs": "modelplug_kit.schema",
    "openai_json_schema": "modelplug_kit.schema",
    "openai_strict": "modelplug_kit.schema",
    "SqliteCounters": "modelplug_kit.sqlite_counters",
    "SSEFramer": "modelplug_kit.sse",
    "STORE_CHOICES": "modelplug_kit.store_choice",
    "choose_counter_store": "modelplug_kit.store_choice",
    "close_counter_file": "modelplug_kit.store_choice",
    "offered_store": "modelplug_kit.store_choice",
    "AnyCooldownStore": "modelplug_kit.stores",
    "AsyncCooldownStore": "modelplug_kit.stores",
    "Charge": "modelplug_kit.stores",
    "CooldownStore": "modelplug_kit.stores",
    "CounterStore": "modelplug_kit.stores",
    "Outcome": "modelplug_kit.stores",
    "Setting": "modelplug_kit.stores",
    "usage_from_anthropic": "modelplug_kit.usage",
    "usage_from_gemini": "modelplug_kit.usage",
    "usage_from_ollama": "modelplug_kit.usage",
    "usage_from_openai": "modelplug_kit.usage",
    "LOAD_HEADER": "modelplug_kit.timings",
    "QUEUED_HEADER": "modelplug_kit.timings",
    "TIMING_HEADERS": "modelplug_kit.timings",
    "UPSTREAM_TTFB_HEADER": "modelplug_kit.timings",
    "read_timings": "modelplug_kit.timings",
    "usage_from_responses": "modelplug_kit.usage",
}
__all__ = sorted(EXPORTS)

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, EXPORTS)

if TYPE_CHECKING:
    from modelplug_kit.batches import embed_batches as embed_batches
    from modelplug_kit.batches import gather_batches as gather_batches
    from modelplug_kit.embeddings import EmbeddingsBatch as EmbeddingsBatch
    from modelplug_kit.embeddings import combine_embeddings as combine_embeddings
    from modelplug_kit.embeddings import read_openai_embeddings as read_openai_embeddings
    from modelplug_kit.http import Answer as Answer
    from modelplug_kit.http import ProviderHTTP as ProviderHTTP
    from modelplug_kit.http import StatusError as StatusError
    from modelplug_kit.http import Timeouts as Timeouts
    from modelplug_kit.http import WireErrors as WireErrors
    from modelplug_kit.http import error_body as error_body
    from modelplug_kit.http import error_message as error_message
    from modelplug_kit.http import error_type as error_type
    from modelplug_kit.http import http_limits as http_limits
    from modelplug_kit.http import provider_headers as provider_headers
    from modelplug_kit.local_db import LocalDB as LocalDB
    from modelplug_kit.memory_stores import MemoryCooldowns as MemoryCooldowns
    from modelplug_kit.memory_stores import MemoryCounters as MemoryCounters
    from modelplug_kit.money import from_nano as from_nano
    from modelplug_kit.money import to_nano as to_nano
    from modelplug_kit.ndjson import NDJSONFramer as NDJSONFramer
    from modelplug_kit.periods import PERIOD_WORDS as PERIOD_WORDS
    from modelplug_kit.periods import period_window as period_window
    from modelplug_kit.sampling import PENALTIES as PENALTIES
    from modelplug_kit.sampling import dropped_sampling as dropped_sampling
    from modelplug_kit.schema import Untranslatable as Untranslatable
    from modelplug_kit.schema import inline_refs as inline_refs
    from modelplug_kit.schema import openai_json_schema as openai_json_schema
    from modelplug_kit.schema import openai_strict as openai_strict
    from modelplug_kit.sqlite_counters import SqliteCounters as SqliteCounters
    from modelplug_kit.sse import SSEFramer as SSEFramer
    from modelplug_kit.store_choice import STORE_CHOICES as STORE_CHOICES
    from modelplug_kit.store_choice import choose_counter_store as choose_counter_store
    from modelplug_kit.store_choice import close_counter_file as close_counter_file
    from modelplug_kit.store_choice import offered_store as offered_store
    from modelplug_kit.stores import AnyCooldownStore as AnyCooldownStore
    from modelplug_kit.stores import AsyncCooldownStore as AsyncCooldownStore
    from modelplug_kit.stores import Charge as Charge
    from modelplug_kit.stores import CooldownStore as CooldownStore
    from modelplug_kit.stores import CounterStore as CounterStore
    from modelplug_kit.stores import Outcome as Outcome
    from modelplug_kit.stores import Setting as Setting
    from modelplug_kit.timings import LOAD_HEADER as LOAD_HEADER
    from modelplug_kit.timings import QUEUED_HEADER as QUEUED_HEADER
    from modelplug_kit.timings import TIMING_HEADERS as TIMING_HEADERS
    from modelplug_kit.timings import UPSTREAM_TTFB_HEADER as UPSTREAM_TTFB_HEADER
    from modelplug_kit.timings import read_timings as read_timings
    from modelplug_kit.transcriptions import multipart_form as multipart_form
    from modelplug_kit.transcriptions import read_openai_transcript as read_openai_transcript
    from modelplug_kit.transcriptions import transcription_form as transcription_form
    from modelplug_kit.usage import usage_from_anthropic as usage_from_anthropic
    from modelplug_kit.usage import usage_from_gemini as usage_from_gemini
    from modelplug_kit.usage import usage_from_ollama as usage_from_ollama
    from modelplug_kit.usage import usage_from_openai as usage_from_openai
    from modelplug_kit.usage import usage_from_responses as usage_from_responses
