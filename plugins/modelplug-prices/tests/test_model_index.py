"""The compact model index answers exactly as genai-prices does, is what the build
script writes for the installed genai-prices, and steps aside when it cannot know.

claude-sonnet-4-5 (end of life) stays here on purpose: genai-prices' data still holds it,
with a dated id (claude-sonnet-4-5-20250929) to match, and the index must answer for it.
"""

from __future__ import annotations

import itertools
import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from genai_prices.data_snapshot import get_snapshot, set_custom_snapshot
from modelplug import Settings
from modelplug.testing import examples
from modelplug_prices import build_index, index
from modelplug_prices.index import Answer, find_window, lookup
from modelplug_prices.table import PROVIDER_IDS, find

SUFFIXES = ("", "-20250929", "-2025-09-29", "-latest", ":free", "-v1:0", "-preview", "x")


def clause_texts(clause: dict[str, Any] | None) -> Iterator[str]:
    """The literal strings in a clause: the spellings a user is likely to write."""
    if clause is None:
        return
    ((kind, value),) = clause.items()
    if kind in ("or", "and"):
        for part in value:
            yield from clause_texts(part)
    elif kind != "regex":
        yield value


def refs_for(model: list[Any]) -> Iterator[str]:
    texts = dict.fromkeys([model[0], *clause_texts(model[1])])
    for text, suffix in itertools.product(texts, SUFFIXES):
        yield text + suffix
    yield model[0].upper()
    yield f"vendor/{model[0]}"


def genai_answer(ref: str, pid: str) -> Answer | None:
    try:
        provider, model = get_snapshot().find_provider_model(ref, None, pid, None)
    except LookupError:
        return None
    return Answer(provider.id, model.id, model.context_window)


# Every spelling in CI; every fourth in a contributor's run (each model still several
# times), where the hypothesis profile runs a quarter of the examples too: both sides
# scan every model per lookup, so all 41,000 spellings take 20 s of CPU.
STRIDE = round(100 / examples(100))


def test_model_index_answers_every_model_as_genai_prices_does():
    providers = index.load_index()["providers"]
    checked = 0
    for provider in providers:
        for model in provider["models"]:
            for ref in itertools.islice(refs_for(model), 0, None, STRIDE):
                assert lookup(ref, provider["id"]) == genai_answer(ref, provider["id"]), ref
                checked += 1
            # Under other providers: OpenRouter's vendor/ ids, litellm's provider/ ids.
            for pid in ("openrouter", "litellm"):
                ref = f"{provider['id']}/{model[0]}"
                assert lookup(ref, pid) == genai_answer(ref, pid), (ref, pid)
    assert checked > 10_000 // STRIDE


def test_model_index_provider_names_match_as_genai_prices_does():
    names = [*PROVIDER_IDS.values(), *PROVIDER_IDS, "X-AI", " anthropic ", "nobody", "litellm"]
    refs = ["claude-sonnet-4-5", "gpt-4o", "anthropic/claude-sonnet-4-5", "qwen/qwen3-coder"]
    for name, ref in itertools.product(names, refs):
        assert lookup(ref, name) == genai_answer(ref, name), (ref, name)


def test_model_index_file_is_what_the_build_script_writes():
    if not index.index_matches_installed():
        # genai-prices released since the file was written: the plugin builds its own
        # (the tests below); a maintainer runs `python -m modelplug_prices.build_index`.
        pytest.skip(
            f"model_index.json is for genai-prices {index.load_index()['genai_prices_version']}"
            f", {index.installed_version()} is installed"
        )
    assert build_index.main(["--check"]) == 0


@pytest.fixture
def other_version(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Settings]:
    """The shipped index written for a genai-prices that is not the installed one, and
    settings whose data directory is empty."""
    monkeypatch.setattr(index, "load_index", lambda: {"genai_prices_version": "0.0.0"})
    monkeypatch.setattr(index, "_built", {})
    yield Settings([], environ={"MODELPLUG_DATA_DIR": str(tmp_path)})


def test_model_index_for_another_version_is_built_once_and_kept(other_version, tmp_path):
    assert index.index_matches_installed() is False
    built = index.current_index(other_version)
    kept = tmp_path / "prices" / f"model_index-{index.installed_version()}.json"
    assert built == build_index.build()
    assert kept.read_text(encoding="utf-8") == build_index.render(build_index.build())
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert find_window("anthropic", "claude-sonnet-4-5", other_version) == Answer(
        "anthropic", "claude-sonnet-4-5", 200_000
    )


def test_model_index_kept_for_this_version_is_read_not_rebuilt(other_version, tmp_path):
    kept = tmp_path / "prices" / f"model_index-{index.installed_version()}.json"
    kept.parent.mkdir()
    made_up = {"genai_prices_version": index.installed_version(), "providers": []}
    kept.write_text(json.dumps(made_up), encoding="utf-8")
    assert index.current_index(other_version) == made_up
    assert find_window("anthropic", "claude-sonnet-4-5", other_version) is None


@pytest.mark.parametrize("text", ["{", '{"genai_prices_version": "0.0.1", "providers": []}', "[]"])
def test_model_index_kept_broken_or_stale_is_rebuilt(other_version, tmp_path, text):
    kept = tmp_path / "prices" / f"model_index-{index.installed_version()}.json"
    kept.parent.mkdir()
    kept.write_text(text, encoding="utf-8")
    assert index.current_index(other_version) == build_index.build()
    assert json.loads(kept.read_text(encoding="utf-8")) == build_index.build()


def test_model_index_unwritable_data_dir_still_answers(monkeypatch, tmp_path):
    monkeypatch.setattr(index, "load_index", lambda: {"genai_prices_version": "0.0.0"})
    monkeypatch.setattr(index, "_built", {})
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory", encoding="utf-8")
    settings = Settings([], environ={"MODELPLUG_DATA_DIR": str(blocked)})
    assert find_window("openai", "gpt-4o", settings) == Answer("openai", "gpt-4o", 128_000)


def test_model_index_find_window_equals_table_find_for_routes(tmp_path):
    settings = Settings([], environ={"MODELPLUG_DATA_DIR": str(tmp_path)})
    routes = [
        ("anthropic", "claude-sonnet-4-5"),
        ("anthropic", "claude-sonnet-4-5-20250929"),
        ("openrouter", "qwen/qwen3-coder"),
        ("openrouter", "openai/gpt-4o"),
        ("openai", "openai/gpt-4o"),
        ("gemini", "gemini-2.5-pro"),
        ("claude", "claude-opus-4-1"),
        ("acme-cloud", "gpt-4o"),
        ("openai", "no-such-model"),
    ]
    for provider, model in routes:
        found = find(provider, model)
        want = None if found is None else (found.model.id, found.model.context_window)
        answer = find_window(provider, model, settings)
        assert (None if answer is None else (answer.model, answer.context_window)) == want


def test_model_index_custom_snapshot_asks_genai_prices(tmp_path):
    # Live updates replace genai-prices' data: the index no longer describes it.
    settings = Settings([], environ={"MODELPLUG_DATA_DIR": str(tmp_path)})
    bundled = get_snapshot()
    changed = type(bundled)(providers=bundled.providers[:1], from_auto_update=True)
    set_custom_snapshot(changed)
    try:
        assert find_window("openai", "gpt-4o", settings) is None  # only anthropic is left
    finally:
        set_custom_snapshot(None)
    assert find_window("openai", "gpt-4o", settings) == Answer("openai", "gpt-4o", 128_000)


def test_model_index_answers_while_genai_prices_is_imported_with_its_bundled_data(
    tmp_path, monkeypatch
):
    # genai-prices imported (this module did) and no snapshot set: its public
    # get_snapshot holds the bundled providers, so the index still answers alone.
    from modelplug_prices import table

    def not_asked(provider: str, model: str) -> None:
        raise AssertionError(f"genai-prices was asked for {provider}/{model}")

    monkeypatch.setattr(table, "find", not_asked)
    settings = Settings([], environ={"MODELPLUG_DATA_DIR": str(tmp_path)})
    assert get_snapshot().from_auto_update is False
    assert find_window("openai", "gpt-4o", settings) == Answer("openai", "gpt-4o", 128_000)


@pytest.mark.parametrize("kind", ["starts_with", "ends_with", "contains", "equals"])
def test_model_index_clauses_ignore_case(kind):
    assert index._matches({kind: "GPT"}, "gpt") is True
