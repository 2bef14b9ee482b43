"""pyarrow schemas derived from the row dataclasses, and rows -> typed Arrow tables with clear errors."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Iterable

import numpy as np
import pyarrow as pa

from gpupoc.evidence.scrub import scrub_text
from gpupoc.evidence.tables import TABLES
from gpupoc.exceptions import GpupocError

TIMESTAMP = pa.timestamp("us", tz="UTC")
_ARROW = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_(), datetime: TIMESTAMP}


class EvidenceSchemaError(GpupocError, ValueError):
    """Rows that do not fit their table: names the table, the row, the field and the value."""


def _base(tp: Any) -> tuple[type, bool]:
    """(python type, nullable) of a field annotation such as ``int | None``."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0], True
    return tp, False


@lru_cache(maxsize=None)
def field_types(table: str) -> dict[str, tuple[type, bool]]:
    cls = row_class(table)
    hints = typing.get_type_hints(cls)
    return {f.name: _base(hints[f.name]) for f in dataclasses.fields(cls)}


def row_class(table: str) -> type:
    try:
        return TABLES[table]
    except KeyError:
        raise EvidenceSchemaError(f"unknown evidence table {table!r}; one of {sorted(TABLES)}") from None


@lru_cache(maxsize=None)
def schema(table: str) -> pa.Schema:
    """The Arrow schema of ``table`` (non-optional fields are not nullable)."""
    return pa.schema([pa.field(name, _ARROW[tp], nullable=nullable)
                      for name, (tp, nullable) in field_types(table).items()],
                     metadata={b"gpupoc.table": table.encode()})


def _coerce(table: str, i: int, name: str, tp: type, value: Any) -> Any:
    def bad(expected: str) -> EvidenceSchemaError:
        return EvidenceSchemaError(f"{table}[{i}].{name}: expected {expected}, got {value!r}")

    if isinstance(value, np.generic):  # numpy scalars from pandas rows
        value = value.item()

    if tp is datetime:
        if isinstance(value, str):
            try:
                value = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                raise bad("an ISO 8601 / RFC3339 time") from None
        if hasattr(value, "to_pydatetime"):  # pandas Timestamp
            value = value.to_pydatetime()
        if not isinstance(value, datetime):
            raise bad("a datetime")
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
    if tp is bool:
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            raise bad("an integer")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad("a number")
        return float(value)
    if isinstance(value, (dict, list, tuple)):
        value = json.dumps(value, sort_keys=True, default=str)
    return scrub_text(str(value))


def _missing(value: Any) -> bool:
    """None, NaN and pandas NaT: a measurement that is not there."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except (TypeError, ValueError):
        return False


def to_arrow(table: str, rows: Iterable[Any]) -> pa.Table:
    """Rows (dataclass instances, dicts or a pandas DataFrame) as a typed Arrow table; secrets in strings
    are redacted."""
    if hasattr(rows, "columns") and hasattr(rows, "to_dict"):
        return _frame_to_arrow(table, rows)
    types_ = field_types(table)
    cls = row_class(table)
    columns: dict[str, list] = {name: [] for name in types_}
    for i, row in enumerate(rows):
        if dataclasses.is_dataclass(row):
            if not isinstance(row, cls):
                raise EvidenceSchemaError(f"{table}[{i}]: expected a {cls.__name__} row, got {type(row).__name__}")
            data = dataclasses.asdict(row)
        elif isinstance(row, dict):
            data = row
        else:
            raise EvidenceSchemaError(f"{table}[{i}]: expected a {cls.__name__} or a dict, got {type(row).__name__}")
        unknown = sorted(set(data) - set(types_))
        if unknown:
            raise EvidenceSchemaError(f"{table}[{i}]: unknown field(s) {unknown}; the table has {list(types_)}")
        for name, (tp, nullable) in types_.items():
            value = data.get(name)
            if _missing(value):
                if not nullable:
                    raise EvidenceSchemaError(f"{table}[{i}].{name}: required, got {value!r}")
                columns[name].append(None)
            else:
                columns[name].append(_coerce(table, i, name, tp, value))
    sch = schema(table)
    return pa.Table.from_arrays([pa.array(columns[f.name], type=f.type) for f in sch], schema=sch)


_EXPECTED = {str: "text", int: "integers", float: "numbers", bool: "true/false", datetime: "times"}


def _frame_to_arrow(table: str, df) -> pa.Table:
    """A pandas DataFrame converted column by column (fast for large tables), with the same rules."""
    import pandas as pd

    types_ = field_types(table)
    unknown = sorted(set(map(str, df.columns)) - set(types_))
    if unknown:
        raise EvidenceSchemaError(f"{table}: unknown column(s) {unknown}; the table has {list(types_)}")
    sch = schema(table)
    arrays = []
    for f in sch:
        tp, nullable = types_[f.name]
        if f.name not in df.columns:
            if not nullable:
                raise EvidenceSchemaError(f"{table}.{f.name}: required column missing")
            arrays.append(pa.nulls(len(df), type=f.type))
            continue
        col = df[f.name]
        missing = col.isna()
        if not nullable and missing.any():
            raise EvidenceSchemaError(f"{table}[{int(missing.to_numpy().argmax())}].{f.name}: required, got None")
        try:
            if tp is datetime:
                arr = pa.array(pd.to_datetime(col, utc=True, format="ISO8601"), from_pandas=True).cast(f.type)
            elif tp is str:
                arr = pa.array(_scrubbed_text(col, missing), type=f.type)
            elif tp is bool and not (col.dtype == bool or col[~missing].map(type).eq(bool).all()):
                raise TypeError("not all values are true/false")
            else:
                arr = pa.array(col, type=f.type, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise EvidenceSchemaError(f"{table}.{f.name}: expected {_EXPECTED[tp]} in every row: {exc}") from None
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, schema=sch)


def _scrubbed_text(col, missing) -> list:
    """Text cells as scrubbed strings (each distinct value scrubbed once), None where missing."""
    cache: dict = {}
    out = []
    for value, miss in zip(col.tolist(), missing.tolist()):
        if miss:
            out.append(None)
            continue
        if isinstance(value, (dict, list, tuple)):
            out.append(scrub_text(json.dumps(value, sort_keys=True, default=str)))
            continue
        if value not in cache:
            cache[value] = scrub_text(str(value))
        out.append(cache[value])
    return out
