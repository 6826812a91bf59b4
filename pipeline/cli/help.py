"""`--help` in the form command-line users know: `audit [OPTIONS] LOG...`, `--game ID`.

Typer's own help shows Python types (`<list[str]>`, `<bool>`, `<float range>`) and draws
rich panels (which also cost a tenth of a second of imports). The app uses Click's plain
help instead (`rich_markup_mode=None`), where an option shows the metavar it declares;
this command class does the same for arguments, whose metavar Typer would still follow with
their type. Every argument and every option that takes a value declares a metavar.

Both classes also coerce values without pydantic where they can (pipeline/cli/fast_params.py).
"""

from __future__ import annotations

import re

from typer.core import TyperArgument, TyperCommand, TyperGroup

from pipeline.cli.common import user_errors
from pipeline.cli.fast_params import install


def _argument_name(param: TyperArgument) -> str:
    return param.metavar or param.name.upper() + ("..." if param.nargs != 1 else "")


_RANGE = re.compile(r"(?<=[\[; ])(?:(?P<low>-?[\d.]+)<=)?x(?:(?P<op>>=|<=|>|<)(?P<bound>-?[\d.]+))?(?=[\];])")


def _plain_range(text: str) -> str:
    """Click writes an option's range as `x>=0.0`, `0<=x<=1`: say it in words instead."""

    def words(m: re.Match) -> str:
        number = lambda v: v.removesuffix(".0")  # noqa: E731
        if m["low"] is not None and m["op"] == "<=":
            return f"{number(m['low'])} to {number(m['bound'])}"
        if m["low"] is None and m["op"] is not None:
            word = {">=": "at least", "<=": "at most", ">": "more than", "<": "less than"}[m["op"]]
            return f"{word} {number(m['bound'])}"
        return m.group()

    return _RANGE.sub(words, text)


class Command(TyperCommand):
    def get_params(self, ctx) -> list:
        return install(super().get_params(ctx))

    def collect_usage_pieces(self, ctx) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = _argument_name(param)
                pieces.append(name if param.required else f"[{name}]")
        return pieces

    def format_options(self, ctx, formatter) -> None:
        arguments, options = [], []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                if not param.hidden:
                    arguments.append((_argument_name(param), param.help or ""))
            else:
                record = param.get_help_record(ctx)
                if record is not None:
                    options.append((record[0], _plain_range(record[1])))
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        if options:
            with formatter.section("Options"):
                formatter.write_dl(options)


class Group(TyperGroup):
    def get_params(self, ctx) -> list:
        return install(super().get_params(ctx))

    def invoke(self, ctx):
        # Parsing a subcommand's options and running it both happen in here, so every user
        # error of every command ends in exit 2 (under CliRunner too, which skips cli.entry).
        with user_errors():
            return super().invoke(ctx)
