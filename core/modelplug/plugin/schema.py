"""The kit for structured output.

``Request.output_schema`` reaches a provider only in native mode; map it to the API's
own field. :func:`openai_strict`, :func:`openai_json_schema` and :func:`inline_refs`
translate a JSON Schema to what an API accepts, raising :class:`Untranslatable` rather
than changing its meaning; :func:`undo_strict` reads a strict answer back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug._lazy import lazy_exports

#: The names of this part of the kit and the module of core each lives in: the one list
#: (``__all__``, ``dir()`` and the type checkers' view below are checked against it).
KIT = {
    "Untranslatable": "schema_translate",
    "inline_refs": "schema_translate",
    "openai_json_schema": "schema_translate",
    "openai_strict": "schema_translate",
    "undo_strict": "schema_translate",
}
__all__ = sorted(KIT)

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, KIT)

if TYPE_CHECKING:
    from ..schema_translate import (
        Untranslatable as Untranslatable,
    )
    from ..schema_translate import (
        inline_refs as inline_refs,
    )
    from ..schema_translate import (
        openai_json_schema as openai_json_schema,
    )
    from ..schema_translate import (
        openai_strict as openai_strict,
    )
    from ..schema_translate import (
        undo_strict as undo_strict,
    )
