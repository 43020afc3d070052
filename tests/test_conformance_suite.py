"""The test kit's conformance suite passes a provider that keeps the rules, and fails
one that breaks any of them: a suite that cannot fail would prove nothing.

The providers are in tests/tiny_provider.py: ``Tiny`` on the kit's HTTP path, and
subclasses that each break one rule. A broken one is checked by calling the one case
it must fail on a bound suite (with a key of this test's own, so the run-wide watch for
the planted key stays for real leaks); a plugin author's path, a test file collected by
pytest from outside this repository, is checked with pytester.
"""

from __future__ import annotations

import importlib.util
import re
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from modelplug_kit.testing import ProviderConformance, Recording, WireServer, conformance

pytest_plugins = ["pytester"]

HERE = Path(__file__).parent


def load_tiny() -> ModuleType:
    # tests/ is no package (--import-mode=importlib): loaded from its file.
    spec = importlib.util.spec_from_file_location("tiny_provider", HERE / "tiny_provider.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("tiny_provider", module)
    spec.loader.exec_module(module)
    return module


tiny = load_tiny()


def fresh_key() -> str:
    # Random from its first character: two keys sharing a prefix of ten characters
    # would mask each other's prefix (the redactor masks any long run of a key).
    return secrets.token_hex(24)


def suite_for(adapter: type) -> type[ProviderConformance]:
    class Suite(ProviderConformance):
        plugin = adapter()
        provider_type = "tiny"
        section = "tiny"
        stream_path = "/generate"
        key_header = "x-tiny-key"
        recording = Recording(tiny.ANSWER, text=tiny.TEXT, cut_after=2, cut_text="Small is")

    return Suite


class TestTinyConformance(suite_for(tiny.Tiny)):  # type: ignore[misc]
    """The whole suite, collected as a plugin's tests collect it: the rules can be kept
    by a provider of some fifty lines on the kit."""


BROKEN = [
    (
        tiny.NotOnTheKit,
        "test_a_dead_keep_alive_connection_is_resent_once_without_a_notice",
        "the call failed",
    ),
    (
        tiny.WarnsWithTheKey,
        "test_the_planted_key_appears_in_no_error_repr_log_record_or_warning",
        "the planted key appears in: a warning (UserWarning)",
    ),
    (
        tiny.PrintsWhatItSends,
        "test_the_planted_key_appears_in_no_error_repr_log_record_or_warning",
        "what was printed (stdout, stderr)",
    ),
    (
        tiny.LogsAKeyItNeverRegistered,
        "test_the_planted_key_appears_in_no_error_repr_log_record_or_warning",
        "a log record of tiny",
    ),
    (
        tiny.OwnClientEveryCall,
        "test_a_complete_answer_leaves_its_connection_for_the_next_call",
        "two calls, one connection",
    ),
    (
        tiny.ReadsTheWholeBodyFirst,
        "test_stopping_after_the_first_delta_closes_the_connection",
        "the server saw the connection closed when the consumer stopped",
    ),
    (
        tiny.LetsJSONErrorsEscape,
        "test_a_malformed_event_is_a_classified_error_with_the_partial",
        "a JSONDecodeError escaped the plugin and core wrapped it",
    ),
    (
        tiny.NamesTheWrongTable,
        "test_a_stall_mid_stream_ends_at_read_timeout_with_the_partial",
        "its table [tiny]",
    ),
    (
        tiny.RetriesEverything,
        "test_401_is_an_auth_error_and_not_retried",
        "kind='transient'",
    ),
]


@pytest.mark.parametrize(
    ("adapter", "case", "said"), BROKEN, ids=[adapter.__name__ for adapter, _, _ in BROKEN]
)
def test_the_suite_fails_a_provider_that_breaks_a_rule(
    adapter: type,
    case: str,
    said: str,
    make_client: Callable[..., Any],
    wire_server: WireServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A connection that is never closed is waited for a second, not ten.
    monkeypatch.setattr(conformance, "CLOSE_WAIT", 1.0)
    key = fresh_key()
    suite = suite_for(adapter)()
    suite.bind(make_client, wire_server, key)
    with pytest.raises(AssertionError) as failed:
        getattr(suite, case)()
    message = str(failed.value)
    assert said in message, message
    # The suite's own report of a leak says where, never what.
    assert key not in message


@pytest.mark.parametrize("case", [name for _, name, _ in BROKEN])
def test_the_provider_that_keeps_the_rules_passes_the_same_case(
    case: str, make_client: Callable[..., Any], wire_server: WireServer
) -> None:
    # The same case, the same server, the same key: what fails above is the break.
    suite = suite_for(tiny.Tiny)()
    suite.bind(make_client, wire_server, fresh_key())
    getattr(suite, case)()
    assert suite.sent(), "the case called the provider"


def test_a_suite_that_leaves_out_a_declaration_says_which(
    make_client: Callable[..., Any], wire_server: WireServer
) -> None:
    class Incomplete(ProviderConformance):
        plugin = tiny.Tiny()
        provider_type = "tiny"

    with pytest.raises(TypeError, match="must declare section, stream_path, recording"):
        Incomplete().bind(make_client, wire_server, "sk-x")


def test_a_cut_that_leaves_no_chunk_after_it_is_refused() -> None:
    recording = Recording(tiny.ANSWER, text=tiny.TEXT, cut_after=4)
    with pytest.raises(ValueError, match="the recording has 4 chunks"):
        recording.cut_point()


def test_a_plugin_test_file_outside_this_repository_runs_the_suite(
    pytester: pytest.Pytester,
) -> None:
    # Only what an installed modelplug gives: no conftest of this repository's.
    pytester.makepyfile(tiny_provider=(HERE / "tiny_provider.py").read_text())
    pytester.makepyfile(
        test_tiny="""
        import tiny_provider as tiny
        from modelplug_kit.testing import ProviderConformance, Recording


        class TinyWire(ProviderConformance):
            provider_type = "tiny"
            section = "tiny"
            stream_path = "/generate"
            key_header = "x-tiny-key"
            recording = Recording(tiny.ANSWER, text=tiny.TEXT, cut_after=2, cut_text="Small is")


        class TestTiny(TinyWire):
            plugin = tiny.Tiny()


        class TestWarnsWithTheKey(TinyWire):
            plugin = tiny.WarnsWithTheKey()
        """
    )
    # Every case of the good one; of the broken one, the case it must fail. Tiny
    # declares no tool_call_cut: that case is skipped, saying so.
    selected = "TestTiny or (TestWarnsWithTheKey and planted_key)"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "-rfEs", "-k", selected)
    cases = [name for name in dir(ProviderConformance) if name.startswith("test_")]
    result.assert_outcomes(passed=len(cases) - 1, failed=1, skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED*TestTiny declares no tool_call_cut*"])
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: the planted key appears in: a warning (UserWarning)*",
            "FAILED test_tiny.py::TestWarnsWithTheKey::test_the_planted_key_appears_in_no_*",
        ]
    )
    assert "sk-planted-" not in result.stdout.str(), "the suite's report names no key"


def test_the_readme_example_runs_as_written(pytester: pytest.Pytester) -> None:
    pytest.importorskip("modelplug_openai_compat")
    page = (HERE.parent / "docs/testing-plugins.md").read_text()
    blocks = re.findall(r"```python\n(# tests/test_conformance.py\n.*?)```", page, re.DOTALL)
    assert len(blocks) == 1, "the testing page shows the conformance suite once"
    recordings = pytester.mkdir("recordings")
    source = HERE.parent / "plugins/modelplug-openai-compat/tests/recordings/openai_text.sse"
    (recordings / "openai_text.sse").write_bytes(source.read_bytes())
    cut = source.with_name("openai_tool_cut_at_length.sse")
    (recordings / cut.name).write_bytes(cut.read_bytes())
    pytester.makepyfile(test_conformance=blocks[0])
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    cases = [name for name in dir(ProviderConformance) if name.startswith("test_")]
    result.assert_outcomes(passed=len(cases))
