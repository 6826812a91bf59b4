"""CSV that is safe to open in a spreadsheet: a text cell that starts like a formula is defused.

Player names, game ids and file names come from logs, and players online choose their own
names: `=HYPERLINK("http://…","click")`, `=1+2` or `@SUM(A1:A9)` written as they are into a
CSV cell is a formula that Excel, LibreOffice or Google Sheets runs when the file is opened
("CSV injection"). So every CSV this program writes (`audit`, `stats`, `games`, `players`,
`findings`, `sql`) puts a `'` before a text cell that starts with `=`, `+`, `-`, `@`, a tab
or a carriage return, the usual defence: a spreadsheet shows the cell as text and runs
nothing. `--exact-csv` writes every cell exactly as logged, for programs that read the CSV
as data. Numbers are never changed: -50 is a number to a spreadsheet, not a formula.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    import pyarrow as pa

#: What a cell may not start with unless defused (OWASP's list for CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_FORMULA_START = "^[=+\\-@\\t\\r]"
GUARD = "'"


def exact_csv_option():
    """--exact-csv, for the commands that write CSV."""
    return typer.Option(
        False,
        "--exact-csv",
        help="With --format csv: text cells exactly as logged. By default a cell starting with = + - @, "
        "a tab or a carriage return gets a leading ' so that a spreadsheet shows it and never runs it.",
    )


def defused(value: Any) -> Any:
    """A cell's value as written: text that starts like a formula gets GUARD in front."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return GUARD + value
    return value


def defused_table(table: "pa.Table") -> "pa.Table":
    """`table` with `defused` applied to every text column, in Arrow."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = []
    for field, column in zip(table.schema, table.columns):
        kind = field.type
        if pa.types.is_dictionary(kind) and pa.types.is_string(kind.value_type):
            column, kind = column.cast(pa.string()), pa.string()
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            risky = pc.match_substring_regex(column, _FORMULA_START)
            column = pc.if_else(risky, pc.binary_join_element_wise(GUARD, column, ""), column)
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)
