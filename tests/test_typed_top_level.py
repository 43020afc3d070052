"""``from modelplug import Client, ErrorClass, Route`` passes ``mypy --strict``: every name
of ``modelplug.__all__`` is an explicit re-export for type checkers, while at run time
the package still imports its names on first use (tests/test_import_cost.py)."""

from __future__ import annotations

import ast
import importlib
import textwrap
from pathlib import Path
from types import ModuleType

import modelplug
import pytest

PACKAGE_ROOT = Path(modelplug.__file__)


def type_checking_imports() -> dict[str, tuple[str, bool]]:
    """Every name the ``if TYPE_CHECKING:`` block of modelplug/__init__.py imports: the
    module it comes from, and whether it is an explicit re-export (``X as X``)."""
    tree = ast.parse(PACKAGE_ROOT.read_text())
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1, "modelplug/__init__.py should have one `if TYPE_CHECKING:` block"
    names: dict[str, tuple[str, bool]] = {}
    for node in blocks[0].body:
        if not isinstance(node, ast.ImportFrom):
            continue
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            assert alias.name != "*", f"`from {module} import *` hides what is re-exported"
            names[alias.asname or alias.name] = (module, alias.asname == alias.name)
    return names


def defined_functions() -> set[str]:
    tree = ast.parse(PACKAGE_ROOT.read_text())
    return {
        node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def test_every_name_in_all_is_re_exported_for_type_checkers() -> None:
    imports = type_checking_imports()
    re_exported = {name for name, (_, explicit) in imports.items() if explicit}
    expected = set(modelplug.__all__) - defined_functions()

    missing = sorted(expected - re_exported)
    assert missing == [], (
        f"in modelplug.__all__ but not re-exported under TYPE_CHECKING as `X as X`: {missing}"
    )
    extra = sorted(re_exported - set(modelplug.__all__))
    assert extra == [], f"re-exported under TYPE_CHECKING but not in modelplug.__all__: {extra}"


def test_the_module_level_functions_in_all_are_defined_in_the_package() -> None:
    functions = {"complete", "stream", "acomplete", "astream", "default_client"}
    assert functions <= set(modelplug.__all__)
    assert functions <= defined_functions()


def test_type_checkers_see_the_module_each_name_is_loaded_from_at_run_time() -> None:
    # A re-export from another module than the lazy loader's would let the checker and
    # the running program disagree about what ``modelplug.Route`` is.
    imports = type_checking_imports()
    for name in set(modelplug.__all__) - defined_functions():
        assert name in imports, f"{name} is not imported under TYPE_CHECKING"
        module, _ = imports[name]
        lazy = modelplug.EXPORTS[name]
        assert module == lazy, f"{name}: type checkers see it from {module}, run time from {lazy}"
        loaded = importlib.import_module(module)
        assert getattr(modelplug, name) is getattr(loaded, name), name


def test_modelplug_redact_is_the_function_even_after_its_submodule_is_imported() -> None:
    # No module of core has the name of a top-level export (modelplug.redact was one):
    # importing a submodule binds it as an attribute of its package.
    importlib.import_module("modelplug.contract.secrets")  # as Client() does
    from modelplug import redact

    assert not isinstance(redact, ModuleType)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for the module: core's modules are analysed once."""
    return tmp_path_factory.mktemp("mypy-cache")


def errors_of(source: str, tmp_path: Path, cache: Path) -> list[str]:
    module = tmp_path / "user_code.py"
    module.write_text(source)
    mypy_api = pytest.importorskip("mypy.api")
    out, _, _ = mypy_api.run(["--strict", "--cache-dir", str(cache), str(module)])
    return [line for line in out.splitlines() if ": error:" in line]


def import_everything() -> str:
    names = ",\n".join(f"    {name}" for name in sorted(modelplug.__all__))
    return f"from modelplug import (\n{names},\n)\n"


def test_a_user_importing_every_name_from_the_top_level_passes_mypy_strict(
    tmp_path: Path, cache: Path
) -> None:
    use = textwrap.dedent(
        """
        from collections.abc import AsyncIterator, Iterator


        def kind_of(error: ModelError) -> str:
            found: ErrorClass = error.error_class
            late: float | None = found.retry_after
            return f"{found.kind} {found.retryable} {found.status} {late}"


        def first_model() -> str:
            client: Client = Client()
            route: Route = client.resolve("echo")
            endpoint: Endpoint = route.endpoint
            return f"{route.provider}/{route.model} over {endpoint.type}"


        def answer() -> str:
            response: Response = complete("echo", "hello", max_tokens=5)
            usage: Usage | None = response.usage
            events: Iterator[Event] = stream("echo", [{"role": "user", "content": "hi"}])
            later: AsyncIterator[Event] = astream("echo", "hi")
            same: Client = default_client()
            del events, later, same
            return response.text + str(usage)


        async def answer_later() -> Response:
            return await acomplete("echo", "hi", on_event=lambda event: None)


        error = ErrorClass(kind="rate_limit", retryable=True, retry_after=2.0)
        """
    )
    assert errors_of(import_everything() + use, tmp_path, cache) == []


def test_names_from_the_top_level_are_typed_not_any(tmp_path: Path, cache: Path) -> None:
    # Were a name missing from the re-exports, or the package's __getattr__ visible to
    # the checker, these would pass as Any.
    bad = textwrap.dedent(
        """
        from modelplug import Client, ErrorClass, Route, complete, stream
        from modelplug import NoSuchName

        error = ErrorClass(kind="exploded")
        route = Route(provider=7, model="m")
        window: str = Client().resolve("echo").info.context_window
        complete("echo", 5)
        text: str = next(stream("echo", "hi"))
        """
    )
    errors = "\n".join(errors_of(bad, tmp_path, cache))

    assert 'Module "modelplug" has no attribute "NoSuchName"' in errors
    assert '"kind" to "ErrorClass" has incompatible type' in errors
    assert 'Argument "provider" to "Route" has incompatible type "int"' in errors
    assert 'expression has type "int | None", variable has type "str"' in errors
    assert 'Argument 2 to "complete" has incompatible type "int"' in errors
    assert (
        'expression has type "TextDelta | ThinkingDelta | ToolCallStart | Notice | Done"' in errors
    )
    assert "does not explicitly export" not in errors
