"""What redact() masks: whole secrets, the token of a scheme value, long runs of a
secret's characters, JSON-escaped forms; and what it leaves alone."""

from __future__ import annotations

import json
import logging
import pickle
import secrets
import traceback

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplug.contract.errors import ErrorClass, ModelError
from modelplug.contract.secrets import (
    MIN_FRAGMENT,
    clean_exception,
    redact,
    redact_data,
    register_secret,
)

KEY = "sk-redact-" + secrets.token_hex(16)
register_secret(KEY)


def no_run_of(key: str, text: str) -> bool:
    """No run of MIN_FRAGMENT characters of ``key`` is in ``text``."""
    return not any(key[i : i + MIN_FRAGMENT] in text for i in range(len(key) - MIN_FRAGMENT + 1))


def test_a_registered_secret_is_masked_wherever_it_appears() -> None:
    assert redact(f"key={KEY}; again {KEY}.") == "key=***; again ***."


@pytest.mark.parametrize(
    "echo",
    [
        KEY[:-1],  # all but the last character
        KEY[1:],  # all but the first
        KEY[:12],  # the first 12
        KEY[-12:],  # the last 12
        KEY[5 : 5 + MIN_FRAGMENT],  # any run of MIN_FRAGMENT from the middle
    ],
    ids=["all-but-last", "all-but-first", "first-12", "last-12", "middle-run"],
)
def test_a_long_run_of_a_secret_is_masked(echo: str) -> None:
    text = f"401: invalid api key '{echo}' given"
    cleaned = redact(text)
    assert no_run_of(KEY, cleaned)
    assert cleaned.startswith("401: invalid api key '") and cleaned.endswith("' given")
    assert "***" in cleaned


def test_short_runs_and_unrelated_text_are_left_alone() -> None:
    text = f"model {KEY[: MIN_FRAGMENT - 2]}x answered in 12 ms"
    assert redact(text) == text
    assert redact("the quick brown fox jumps over the lazy dog") == (
        "the quick brown fox jumps over the lazy dog"
    )


def test_the_token_of_a_value_with_a_scheme_is_masked_on_its_own() -> None:
    token = "tok" + secrets.token_hex(12)
    register_secret(f"Bearer {token}")
    assert redact(f"unknown token {token}") == "unknown token ***"
    assert redact(f"Authorization: Bearer {token}") == "Authorization: ***"
    # The scheme word alone is no secret.
    assert redact("send a Bearer token") == "send a Bearer token"


@pytest.mark.parametrize(
    "escaped",
    [
        KEY.replace("-", "\\u002d"),
        KEY.replace("-", "\\u002D", 1),
        "".join(f"\\u{ord(c):04x}" for c in KEY),
    ],
    ids=["u002d", "one-escape", "every-character"],
)
def test_a_key_written_with_json_escapes_is_masked(escaped: str) -> None:
    cleaned = redact('{"error": {"message": "bad key ' + escaped + '"}}')
    decoded = json.loads(cleaned)["error"]["message"]
    assert decoded.startswith("bad key ") and no_run_of(KEY, decoded)


def test_a_key_with_a_slash_written_as_an_escaped_slash_is_masked() -> None:
    slashed = "ab/" + secrets.token_hex(10) + "/cd"
    register_secret(slashed)
    cleaned = redact('{"key": "' + slashed.replace("/", "\\/") + '"}')
    assert no_run_of(slashed, cleaned.replace("\\/", "/"))


def test_text_with_escapes_but_no_secret_keeps_its_escapes() -> None:
    text = '{"path": "a\\/b", "dash": "\\u002d"}'
    assert redact(text) == text


def test_redact_data_masks_every_string_and_keeps_clean_data_as_is() -> None:
    data = {"a": [KEY, {"b": (1, KEY[:-1])}], KEY: "value", "n": 3}
    cleaned = redact_data(data)
    assert no_run_of(KEY, repr(cleaned))
    assert cleaned["n"] == 3 and cleaned["a"][1]["b"][0] == 1
    clean = {"a": ["x", {"b": (1, "y")}]}
    assert redact_data(clean) is clean


@given(st.text(max_size=60), st.text(max_size=60), st.integers(0, len(KEY) - MIN_FRAGMENT))
def test_any_run_of_a_secret_inside_any_text_is_masked(before: str, after: str, start: int) -> None:
    run = KEY[start:]
    assert no_run_of(KEY, redact(before + run + after))


def test_records_of_every_logger_are_redacted_tracebacks_included(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("httpcore2.http11").debug("receive_response_headers: %s", KEY)
        try:
            raise ValueError(f"refused {KEY[:-1]}")
        except ValueError:
            logging.getLogger("some.library").exception("request failed")
        logging.getLogger("asyncio").error("Task exception", exc_info=ValueError(KEY))
    assert caplog.text.count("***") >= 3
    assert no_run_of(KEY, caplog.text)
    assert "receive_response_headers" in caplog.text and "ValueError" in caplog.text


class VendorError(Exception):
    """An SDK error that keeps the raw response."""

    def __init__(self, message: str, *, response: dict[str, str], status_code: int) -> None:
        super().__init__(message)
        self.response = response
        self.status_code = status_code


def failed_call() -> ModelError:
    try:
        try:
            raise KeyError(f"x-api-key {KEY}")
        except KeyError:
            raise VendorError(
                f"Error code: 401 - invalid key {KEY}",
                response={"x-api-key": KEY},
                status_code=401,
            ) from None
    except VendorError as exc:
        error = ModelError("authentication failed", error_class=ErrorClass(kind="auth"))
        error.__cause__ = exc
        return error


def test_chained_causes_become_redacted_stand_ins_of_the_same_type() -> None:
    error = clean_exception(failed_call())
    cause = error.__cause__
    assert isinstance(cause, VendorError)  # isinstance checks still hold
    assert cause.status_code == 401  # what classifiers read is kept
    assert not hasattr(cause, "response")  # the raw response is not
    shown = "".join(traceback.format_exception(error))
    assert "VendorError: Error code: 401 - invalid key ***" in shown
    assert (
        no_run_of(KEY, shown) and no_run_of(KEY, repr(cause)) and no_run_of(KEY, str(vars(cause)))
    )


def test_a_model_error_pickles_without_its_secrets_and_comes_back_whole() -> None:
    error = clean_exception(failed_call())
    data = pickle.dumps(error)
    assert KEY.encode() not in data and KEY[:12].encode() not in data
    back = pickle.loads(data)
    assert isinstance(back, ModelError) and back.kind == "auth"
    assert str(back) == str(error)
