"""The SQL models of `sql/`, written for DuckDB, rewritten for Spark SQL.

One source of truth per model: the DuckDB text in `sql/`. sqlglot parses it and writes
Spark SQL; what sqlglot does not translate by itself is done here on the syntax tree,
each rewrite keeping DuckDB's meaning:

- macros (`sql/macros.sql`) are inlined: each call becomes the macro's body with the
  arguments put in for the parameters (in parentheses), repeated until no call is left,
  so macros may call macros;
- `getvariable('f_x')` becomes the filter's value as a literal (Spark has no
  DuckDB-style variables to bind; the values come from pipeline.stats.Filters);
- `l ASOF LEFT JOIN r ON l.k = r.k AND l.x > r.y`: each column of `r` that the select
  list uses becomes a correlated scalar subquery taking it from the row with the
  greatest `r.y` below `l.x` (`max_by`), which is what the as-of join picks;
- list subscripts are 1-based in DuckDB and 0-based in Spark: `element_at` (1-based in
  both);
- `list_sum(x)` becomes `aggregate(x, 0, (acc, v) -> acc + v)`;
- `cast(unnest(x) as T)` becomes `explode(cast(x as array<T>))` (Spark allows no
  generator inside an expression);
- `array_to_string` of numbers casts the list to strings first (Spark's `array_join`
  takes strings only).

Anything else that Spark does not accept fails loudly: each model has a test running it
on both engines and comparing the results (tests/spark/test_stats_engines.py).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Mapping

import sqlglot
from sqlglot import exp

READ = "duckdb"
WRITE = "spark"
_MACRO = re.compile(
    r"create\s+or\s+replace\s+temp\s+macro\s+(\w+)\s*\(([^)]*)\)\s+as\s+(.*?);", re.IGNORECASE | re.DOTALL
)


class TranspileError(ValueError):
    """A model uses DuckDB SQL this module cannot rewrite for Spark."""


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[str, ...]
    body: exp.Expr


@cache
def load_macros(path: Path) -> dict[str, Macro]:
    return parse_macros(path.read_text(encoding="utf-8"))


def parse_macros(text: str) -> dict[str, Macro]:
    """The `create or replace temp macro name(a, b) as body;` statements of a file."""
    code = re.sub(r"--[^\n]*", "", text)
    macros = {}
    for name, params, body in _MACRO.findall(code):
        names = tuple(p.strip() for p in params.split(",") if p.strip())
        macros[name.lower()] = Macro(name.lower(), names, sqlglot.parse_one(body, read=READ))
    return macros


def to_spark(
    sql: str, macros: Mapping[str, Macro], variables: Mapping[str, Any], broadcast: frozenset[str] = frozenset()
) -> str:
    """One model's DuckDB text as Spark SQL, with `variables` bound as literals, and each join
    with a table named in `broadcast` hinted as a broadcast (`hint_broadcasts`)."""
    tree = sqlglot.parse_one(sql, read=READ)
    tree = inline_macros(tree, macros)
    tree = bind_variables(tree, variables)
    tree = tree.transform(_rewrite_subscript)
    tree = tree.transform(_rewrite_node)
    tree = rewrite_asof(tree)
    tree = hint_broadcasts(tree, broadcast)
    return tree.sql(dialect=WRITE, pretty=True)


# ---------------------------------------------------------------------- broadcast hints
def hint_broadcasts(tree: exp.Expr, tables: frozenset[str]) -> exp.Expr:
    """`SELECT /*+ BROADCAST(x) */` on every select that joins `x`, where `x` is one of
    `tables` or a CTE that only selects from one (the models read a table through a CTE,
    `games as (select game_id, ruleset_id from int_games_in_scope)`). The hint must be in the
    query that joins: one set on the table's own DataFrame does not reach a join through a
    CTE reference. Spark ignores it where the side cannot be built (the kept side of an
    outer join)."""
    if not tables:
        return tree
    names = {name.lower() for name in tables}
    for cte in tree.find_all(exp.CTE):  # in the order written: a CTE of such a CTE counts too
        body = cte.this
        source = body.args.get("from_") if isinstance(body, exp.Select) else None
        if source is not None and not body.args.get("joins") and _table_name(source.this) in names:
            names.add(cte.alias_or_name.lower())
    for select in tree.find_all(exp.Select):
        joins = select.args.get("joins") or []
        source = select.args.get("from_")
        if not joins or source is None:
            continue
        hinted = [
            relation.alias_or_name
            for relation in (source.this, *(join.this for join in joins))
            if _table_name(relation) in names
        ]
        if hinted:
            select.set(
                "hint",
                exp.Hint(
                    expressions=[exp.Anonymous(this="BROADCAST", expressions=[exp.to_identifier(a) for a in hinted])]
                ),
            )
    return tree


def _table_name(relation: exp.Expr) -> str | None:
    """A plain table reference's name, lower case (None for a subquery or a qualified name)."""
    if isinstance(relation, exp.Table) and not relation.args.get("db"):
        return relation.name.lower()
    return None


# ---------------------------------------------------------------------- macros
def _call_name(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    return None


def inline_macros(tree: exp.Expr, macros: Mapping[str, Macro]) -> exp.Expr:
    for _ in range(32):  # depth of macros calling macros
        changed = False

        def expand(node: exp.Expr) -> exp.Expr:
            nonlocal changed
            name = _call_name(node)
            if name is None or name not in macros:
                return node
            macro = macros[name]
            args = node.expressions
            if len(args) != len(macro.params):
                raise TranspileError(f"macro {name} takes {len(macro.params)} arguments, got {len(args)}")
            bound = dict(zip(macro.params, args))

            def substitute(inner: exp.Expr) -> exp.Expr:
                if isinstance(inner, exp.Column) and not inner.table and inner.name in bound:
                    return exp.Paren(this=bound[inner.name].copy())
                return inner

            changed = True
            return exp.Paren(this=macro.body.copy().transform(substitute))

        tree = tree.transform(expand)
        if not changed:
            return tree
    raise TranspileError("macros call each other too deeply (a cycle?)")


# ---------------------------------------------------------------------- variables
def literal(value: Any) -> exp.Expr:
    """A Python value as a Spark literal of the type DuckDB's variable would have."""
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float)):
        return exp.Literal.number(repr(float(value)) if isinstance(value, float) else str(value))
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, dt.datetime):
        instant = value.astimezone(dt.timezone.utc) if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        text = instant.strftime("%Y-%m-%d %H:%M:%S.%f") + "+00:00"
        return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build("timestamp"))
    if isinstance(value, (list, tuple)):
        return exp.Array(expressions=[literal(v) for v in value])
    raise TranspileError(f"cannot bind a {type(value).__name__} as a SQL literal")


def bind_variables(tree: exp.Expr, variables: Mapping[str, Any]) -> exp.Expr:
    def bind(node: exp.Expr) -> exp.Expr:
        if _call_name(node) != "getvariable":
            return node
        args = node.expressions
        if len(args) != 1 or not isinstance(args[0], exp.Literal) or not args[0].is_string:
            raise TranspileError(f"getvariable takes one name in quotes: {node.sql(READ)}")
        name = args[0].this
        if name not in variables:
            raise TranspileError(f"the models read variable {name!r}, which was not given")
        return literal(variables[name])

    return tree.transform(bind)


# ---------------------------------------------------------------------- functions
def _rewrite_subscript(node: exp.Expr) -> exp.Expr:
    """list[i] (1-based in DuckDB) -> element_at(list, i), 1-based in Spark too; a string
    key (map, struct) stays. sqlglot stores a literal index 0-based (it shifts it while
    parsing) but any other index as written, so only literals get their 1 back."""
    if isinstance(node, exp.Bracket) and len(node.expressions) == 1:
        index = node.expressions[0]
        if isinstance(index, exp.Literal) and index.is_string:
            return node
        if isinstance(index, exp.Literal) and index.is_int:
            index = exp.Literal.number(int(index.this) + 1)
        return exp.func("element_at", node.this, index)
    return node


def _rewrite_node(node: exp.Expr) -> exp.Expr:
    name = _call_name(node)
    if name == "list_sum":
        (values,) = node.expressions
        acc, item = exp.to_identifier("list_sum_acc"), exp.to_identifier("list_sum_item")
        add = exp.Lambda(this=exp.Add(this=exp.column(acc), expression=exp.column(item)), expressions=[acc, item])
        return exp.func("aggregate", values, exp.cast(exp.Literal.number(0), "bigint"), add)
    if isinstance(node, exp.Cast) and isinstance(node.this, (exp.Unnest, exp.Explode)):
        inner = node.this.expressions[0] if isinstance(node.this, exp.Unnest) else node.this.this
        return exp.Explode(
            this=exp.Cast(this=inner, to=exp.DataType.build(f"array<{node.to.sql(WRITE)}>", dialect=WRITE))
        )
    if isinstance(node, exp.ArrayToString):
        return exp.ArrayToString(
            this=exp.Cast(this=node.this, to=exp.DataType.build("array<string>", dialect=WRITE)),
            expression=node.expression,
        )
    return node


# ---------------------------------------------------------------------- ASOF joins
# l.x OP r.y, normalised so that l is on the left: which neighbour of r's row bounds the
# interval of l.x values that row answers for, and how.
_FLIP = {exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE}
NEXT = "__asof_next"


def rewrite_asof(tree: exp.Expr) -> exp.Expr:
    """Every ASOF LEFT JOIN of the tree as an interval join (see _rewrite_asof)."""
    for select in list(tree.find_all(exp.Select)):
        _rewrite_asof(select)
    return tree


def _rewrite_asof(select: exp.Select) -> None:
    """`l ASOF LEFT JOIN r ON l.k = r.k AND l.x > r.y` as an interval join Spark runs well:

        l LEFT JOIN (SELECT *, lead(y) OVER (PARTITION BY k ORDER BY y) AS __asof_next
                     FROM r) AS r
          ON l.k = r.k AND l.x > r.y AND (r.__asof_next IS NULL OR l.x <= r.__asof_next)

    Each row of r answers for the l.x between its y and the next y of its key, so each row
    of l meets at most one row of r: the one with the greatest y below l.x, as ASOF picks
    (of tied y, the last in the window's order, since the others' interval is empty). The
    join is an equi-join on the keys with a range filter, linear in the data; a correlated
    subquery, the other way to write it, is decorrelated by Spark into a product.
    (>= uses x < next; < and <= mirror it with lag.)
    """
    for join in select.args.get("joins") or []:
        if str(join.args.get("method") or "").upper() != "ASOF":
            continue
        if str(join.args.get("side") or "").upper() != "LEFT":
            raise TranspileError("only ASOF LEFT JOIN can be rewritten for Spark")
        right = join.this
        if not isinstance(right, exp.Table):
            raise TranspileError("ASOF JOIN: the right side must be a table or CTE name")
        alias = right.alias_or_name
        on = join.args["on"]
        conditions = list(on.flatten()) if isinstance(on, exp.And) else [on]
        keys, bound = [], None
        for cond in conditions:
            if isinstance(cond, exp.EQ):
                keys.append(cond.expression if _is_of(cond.expression, alias) else cond.this)
                if not _is_of(keys[-1], alias):
                    raise TranspileError("ASOF JOIN: each equality must name a column of the right side")
            elif isinstance(cond, exp.Binary) and isinstance(cond, tuple(_FLIP)):
                if bound is not None:
                    raise TranspileError("ASOF JOIN: exactly one inequality is allowed in ON")
                if _is_of(cond.expression, alias):
                    bound = (type(cond), cond.this, cond.expression)
                elif _is_of(cond.this, alias):
                    bound = (_FLIP[type(cond)], cond.expression, cond.this)
                else:
                    raise TranspileError("ASOF JOIN: the inequality must compare a column of the right side")
            else:
                raise TranspileError(f"ASOF JOIN: cannot rewrite the condition {cond.sql(READ)}")
        if bound is None:
            raise TranspileError("ASOF JOIN: ON needs one inequality")
        op, left_value, right_value = bound
        neighbour = "lead" if op in (exp.GT, exp.GTE) else "lag"
        order_by = right_value.copy()
        order_by.set("table", None)
        window = exp.Window(
            this=exp.func(neighbour, order_by),
            partition_by=[_unqualified(k) for k in keys],
            order=exp.Order(expressions=[exp.Ordered(this=order_by.copy(), nulls_first=True)]),
        )
        inner = exp.select(exp.Star(), exp.alias_(window, NEXT)).from_(right.copy())
        join.set("this", exp.alias_(exp.Subquery(this=inner), alias, table=True))
        join.set("method", None)
        nxt = exp.column(NEXT, table=alias)
        beyond = {exp.GT: exp.LTE, exp.GTE: exp.LT, exp.LT: exp.GTE, exp.LTE: exp.GT}[op]
        within = exp.or_(exp.Is(this=nxt.copy(), expression=exp.Null()), beyond(this=left_value.copy(), expression=nxt))
        join.set("on", exp.and_(on.copy(), exp.Paren(this=within)))


def _unqualified(column: exp.Expr) -> exp.Expr:
    column = column.copy()
    column.set("table", None)
    return column


def _is_of(node: exp.Expr, alias: str) -> bool:
    return isinstance(node, exp.Column) and node.table == alias
