"""The one family of user errors: bad input, a ruleset, a dataset or an output path that
cannot serve, never a bug. The CLI prints each as `error: ...` and exits 2, in one place
(pipeline.cli.common.user_errors); the library raises them and never prints.

No imports of its own, so any module may derive from it without loading anything.
"""

from __future__ import annotations

from typing import Any


class UserError(Exception):
    """What is wrong (`message`, naming the file, line or value) and, when there is one, what
    to do about it (`remedy`); `str()` is both, joined by "; ". `details` are further
    problems of the same kind, each printed on its own line before the message."""

    remedy: str | None = None
    details: tuple[str, ...] = ()

    def __init__(self, message: str, remedy: str | None = None, details: tuple[str, ...] = ()):
        super().__init__(message)
        self.message = message
        if remedy is not None:
            self.remedy = remedy
        if details:
            self.details = tuple(details)

    def __str__(self) -> str:
        return f"{self.message}; {self.remedy}" if self.remedy else self.message

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt without calling __init__: subclasses take other arguments (InputError's spec
        # and reason), and an error raised in a worker process must arrive whole.
        return (_rebuild, (type(self), self.args, self.__dict__.copy()))


def _rebuild(cls: type[UserError], args: tuple[Any, ...], state: dict[str, Any]) -> UserError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error
