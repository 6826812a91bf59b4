"""Parameter values coerced without pydantic, so that quick commands start quickly.

Typer (0.29) turns every command-line value into its Python type through a pydantic
TypeAdapter, built on first use: importing pydantic and building the adapters costs more
than everything else `farkle-logs score 1 5` does (bench/startup.py). The options of this
CLI only use a few plain types (str, int, float with bounds, bool, str enums, dates in
given formats, and lists or Optionals of these); for those, `install` gives each parameter
a small coercer with Typer's own contract (`typer._coercion.RuntimeParam`: it keeps the
None and multi-value handling, we supply `_coerce_value`). Any other type keeps Typer's
adapter, and if Typer's internals move, `install` does nothing and Typer's path runs as
before (slower, same results): tests/test_cli_conventions.py runs every command's
options through both.
"""

from __future__ import annotations

import datetime as dt
import enum
from typing import Any, Callable, Union, get_args, get_origin

try:  # Typer's internal contract; without it, Typer's own coercion is used
    from typer._click.exceptions import BadParameter
    from typer._coercion import RuntimeParam
except ImportError:  # pragma: no cover - a Typer without these internals
    RuntimeParam = None  # type: ignore[assignment,misc]


def _strip_optional(annotation: Any) -> Any:
    if get_origin(annotation) is Union:
        inner = [a for a in get_args(annotation) if a is not type(None)]
        if len(inner) == 1:
            return inner[0]
    return annotation


def _number(kind: type, info: Any) -> Callable[[Any], Any]:
    def coerce(value: Any) -> Any:
        if isinstance(value, kind) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = kind(value)
            except (TypeError, ValueError):
                raise ValueError(f"{value!r} is not a valid {'integer' if kind is int else 'number'}.") from None
        if info.min is not None and number < info.min:
            raise ValueError(f"{number} is below the minimum {info.min}.")
        if info.max is not None and number > info.max:
            raise ValueError(f"{number} is above the maximum {info.max}.")
        return number

    return coerce


def _choice(kind: type[enum.Enum]) -> Callable[[Any], Any]:
    def coerce(value: Any) -> Any:
        if isinstance(value, kind):
            return value
        for member in kind:
            if member.value == value:
                return member
        raise ValueError(f"{value!r} is not one of {', '.join(str(m.value) for m in kind)}.")

    return coerce


def _date(formats: Any) -> Callable[[Any], Any]:
    def coerce(value: Any) -> Any:
        if isinstance(value, dt.datetime):
            return value
        for form in formats:
            try:
                return dt.datetime.strptime(value, form)
            except (TypeError, ValueError):
                continue
        raise ValueError(f"{value!r} is not a date like {dt.date(2024, 3, 1).strftime(formats[0])}.")

    return coerce


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError(f"{value!r} is not a valid flag value.")


def _leaf(annotation: Any, info: Any) -> Callable[[Any], Any] | None:
    annotation = _strip_optional(annotation)
    if getattr(info, "parser", None) is not None or getattr(info, "click_type", None) is not None:
        return None
    if annotation is str:
        return lambda value: value if isinstance(value, str) else str(value)
    if annotation is bool:
        return _flag
    if annotation in (int, float):
        return _number(annotation, info)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _choice(annotation) if all(isinstance(m.value, str) for m in annotation) else None
    if annotation is dt.datetime and getattr(info, "formats", None):
        return _date(tuple(info.formats))
    return None


if RuntimeParam is not None:

    class _Plain(RuntimeParam):
        """One parameter's coercer: `leaf` for each value (of a list, if `many`)."""

        leaf: Callable[[Any], Any]
        many: bool

        def __init__(self, descriptor: Any, leaf: Callable[[Any], Any], many: bool):
            object.__setattr__(self, "parameter_info", descriptor.parameter_info)
            object.__setattr__(self, "annotation", descriptor.annotation)
            object.__setattr__(self, "leaf", leaf)
            object.__setattr__(self, "many", many)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            try:
                if self.many:
                    items = value if isinstance(value, (list, tuple)) else [value]
                    return [self.leaf(item) for item in items]
                return self.leaf(value)
            except ValueError as exc:
                raise BadParameter(str(exc), ctx=ctx, param=param) from None


def runtime_param(param: Any) -> Any:
    """A pydantic-free coercer for `param`, or None where Typer's own must be used."""
    descriptor = getattr(param, "type_descriptor", None)
    if RuntimeParam is None or descriptor is None or descriptor.file_annotation is not None:
        return None
    annotation = _strip_optional(descriptor.annotation)
    many = get_origin(annotation) is list
    if many:
        annotation = get_args(annotation)[0]
    leaf = _leaf(annotation, descriptor.parameter_info)
    return None if leaf is None else _Plain(descriptor, leaf, many)


def install(params: list) -> list:
    """Give each parameter Typer has not coerced yet a pydantic-free coercer where one fits."""
    for param in params:
        if getattr(param, "_runtime_param", False) is None:
            plain = runtime_param(param)
            if plain is not None:
                param._runtime_param = plain
    return params
