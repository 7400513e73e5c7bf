"""`NamedTuple` without `typing`: importing typing costs milliseconds on every cold read.

The class syntax `class P(NamedTuple): x: int` builds the same `collections.namedtuple` that
typing builds (fields in annotation order, defaults, methods and docstring kept). Modules use it
at run time and typing's own under `TYPE_CHECKING`, so mypy checks the fields:

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import NamedTuple
    else:
        from ..tuples import NamedTuple

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import collections

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_SPECIAL = frozenset({"__module__", "__name__", "__annotations__", "__qualname__"})


class _Meta(type):
    def __new__(mcs, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> type:
        if not bases:  # `NamedTuple` itself
            return super().__new__(mcs, name, bases, ns)
        annotations = dict(ns.get("__annotations__", {}))
        fields = list(annotations)
        defaults = [ns[f] for f in fields if f in ns]
        if any(f not in ns for f in fields[len(fields) - len(defaults) :]):
            raise TypeError(f"{name}: a field without a default follows one with a default")
        make: Any = collections.namedtuple  # called with computed fields: not a literal form
        tuple_type: type = make(name, fields, defaults=defaults or None, module=ns["__module__"])
        tuple_type.__annotations__ = annotations
        tuple_type.__qualname__ = ns.get("__qualname__", name)
        for key, value in ns.items():
            if key not in _SPECIAL and key not in fields:
                setattr(tuple_type, key, value)
        return tuple_type


class NamedTuple(metaclass=_Meta):
    """Subclass it with annotated fields to get a `collections.namedtuple` class."""
