"""Every gen_ai.* name this plugin writes is one the conventions define (the
opentelemetry-semantic-conventions package), and none is deprecated."""

from __future__ import annotations

from typing import Any

import modelplug_otel
from modelplug.contract.types import Usage
from modelplug.testing import FakeModel, text
from modelplug_otel import names
from opentelemetry.semconv._incubating.attributes import (
    error_attributes,
    gen_ai_attributes,
    server_attributes,
)
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics

DEFINED = {
    getattr(module, n)
    for module in (gen_ai_attributes, server_attributes, error_attributes)
    for n in dir(module)
    if n.isupper() and isinstance(getattr(module, n), str)
}
DEPRECATED = {
    gen_ai_attributes.GEN_AI_SYSTEM,
    gen_ai_attributes.GEN_AI_USAGE_PROMPT_TOKENS,
    gen_ai_attributes.GEN_AI_USAGE_COMPLETION_TOKENS,
    gen_ai_attributes.GEN_AI_PROMPT,
    gen_ai_attributes.GEN_AI_COMPLETION,
}
METRICS = {getattr(gen_ai_metrics, n) for n in dir(gen_ai_metrics) if n.startswith("GEN_AI_")}


def _ours() -> list[str]:
    return [v for k, v in vars(names).items() if k.isupper() and isinstance(v, str) and "." in v]


def test_every_attribute_name_outside_modelplug_is_defined_by_the_conventions() -> None:
    conventional = [n for n in _ours() if not n.startswith("modelplug.")]
    metric_names = {names.DURATION, names.TOKEN_USAGE, names.TIME_TO_FIRST_CHUNK}
    metric_names.add(names.TIME_PER_OUTPUT_CHUNK)
    attributes = [n for n in conventional if n not in metric_names]
    assert attributes, "no names found"
    assert [n for n in attributes if n not in DEFINED] == []
    assert [n for n in attributes if n in DEPRECATED] == []
    assert metric_names <= METRICS


def test_the_spans_written_carry_only_conventional_or_modelplug_names(
    make_client: Any, spans: Any
) -> None:
    usage = Usage(input=1, output=2, cache_read=3, cache_write=4, reasoning=1)
    make_client(FakeModel([text("hi", usage=usage)]), modelplug_otel).complete(
        "fake/m", "hi", max_tokens=5, temperature=0.1, top_p=0.5, stop=["x"]
    )
    written = {k for s in spans() for k in s.attributes}
    assert len(written) > 10
    assert [k for k in written if not k.startswith("modelplug.") and k not in DEFINED] == []


def test_provider_names_are_the_conventions_well_known_values_where_one_fits() -> None:
    known = {v.value for v in gen_ai_attributes.GenAiProviderNameValues}
    # ollama has no well-known value: the conventions ask for the provider's own name.
    assert {v for v in names.PROVIDER_BY_TYPE.values() if v != "ollama"} <= known
    assert {v for v in names.PROVIDER_BY_NAME.values() if v != "ollama"} <= known
