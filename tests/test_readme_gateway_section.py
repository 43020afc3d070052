"""The README's "Run a gateway" says how to start, secure and call one, in under 30
lines; the benchmark figures it used to hold live in docs/performance.md, none lost."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
PERFORMANCE = (ROOT / "docs" / "performance.md").read_text()

# Every figure of the README's former gateway section (2026-12-06), as it wrote them.
FIGURES = (
    "| added p50 / p99, plain, at 100 req/s | 0.45 / 0.32 ms | 0.90 / 1.34 ms | 8.03 / 36.24 ms |",
    "| added p50 / p99, streamed, at 100 req/s | 0.58 / 0.40 ms | 0.91 / 0.98 ms | 2,586 / 3,865 ms",
    "| first byte, after the upstream's | +0.55 ms | +0.89 ms | +1,787 ms | ≤ 1 ms |",
    "| req/s, 64 concurrent streamed clients | 1,954 | 2,051 | 63.9 (gateway 32.1x) | ≥ 5x |",
    "| RSS growth over 20,000 requests | 0.00 MB | 0.00 MB | 7.46 MB | ≤ 5 MB |",
    "p50s of 0.72-0.77 ms plain, 0.74-0.82 streamed and first bytes of +0.73-0.81 ms",
    "410-430 us of CPU a call in-process",
    "streamed added p50 from 1.12 to 0.74-0.82 ms",
    "42-68 us of CPU per wrong key in bursts of 16 and 66-99 us staggered",
    "p50 1.00x in bursts and 1.01-1.03x\nstaggered, p99 1.00-1.09x and 1.00-1.03x",
    "(1.13-1.16x in earlier runs), p99 1.21x and 1.10x",
    "slows them by nothing (p50 0.96x)",
    "costs its valid calls 0-3%",
    "629-660 us of CPU in-process, against 790-813 through redis-py",
)


def gateway_section() -> str:
    start = README.index("## Run a gateway\n")
    return README[start : README.index("\n## ", start + 1)].strip()


def test_the_readme_says_how_to_start_secure_and_call_a_gateway_in_under_30_lines() -> None:
    section = gateway_section()
    assert len(section.splitlines()) < 30
    assert "modelplug gateway serve" in section  # start
    assert "export MODELPLUG_GATEWAY_KEY=" in section and '[gateway] auth = "keys"' in section
    assert 'base_url="http://127.0.0.1:4000/v1"' in section  # call (run by the docs tests)
    assert "(`docs/gateway.md`)" in section and "(`docs/performance.md`)" in section


def test_the_gateway_figures_the_readme_held_are_on_the_performance_page_only() -> None:
    assert [f for f in FIGURES if f not in PERFORMANCE] == []
    assert [f for f in FIGURES if f in README] == []
