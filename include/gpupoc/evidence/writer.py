"""Write a run's evidence: parquet tables under a run-scoped path, and the manifest that lists them.

Layout (no clock in any path; a rerun rewrites the same files)::

    <root>/<dag_id>/<run id, sanitised>/
        manifest.json
        tables/<table>.parquet         one per table
        tables/<table>.meta.json       rows, sha256, source, verified, reason (read by write_manifest)
        files/<name>.json              other documents (scrubbed)
        files/suite_parameters.json    the suites' parameters of the run, also in the manifest

Tables are written by different tasks (different processes); each leaves its ``.meta.json`` beside it, and
``write_manifest`` gathers them, so the manifest is complete whichever task wrote what.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from itertools import islice
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson
import pyarrow.parquet as pq

from gpupoc.evidence.schema import row_class, to_arrow
from gpupoc.evidence.scrub import says_nothing_secret, scrub

MANIFEST = "manifest.json"
SUITE_PARAMETERS = "suite_parameters"  # files/suite_parameters.json and the manifest's key of the same name
SCHEMA_VERSION = 1
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def safe_segment(value: str) -> str:
    """A path segment for ``value``: unsafe characters become ``_``; if any did, a short hash keeps it unique."""
    safe = _UNSAFE.sub("_", value).strip(".") or "_"
    if safe != value:
        safe = f"{safe[:100]}-{hashlib.sha256(value.encode()).hexdigest()[:8]}"
    return safe


def run_dir_for(root: str | Path, dag_id: str, run_id: str) -> Path:
    return Path(root) / safe_segment(dag_id) / safe_segment(run_id)


@dataclass
class TableRecord:
    """What the manifest says about one table."""

    table: str
    path: str
    rows: int
    sha256: str
    source: str
    verified: bool
    reason: str = ""


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def temporary_path(path: Path, pid: int | None = None) -> Path:
    """Where process ``pid`` (this one by default) writes a file before it replaces ``path``."""
    return path.with_name(f".{path.name}.{os.getpid() if pid is None else pid}.tmp")


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(path)
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _json_bytes(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, default=_default) + "\n").encode()


def _write_json_list(path: Path, items: Iterable[Any]) -> None:
    """``items`` scrubbed and written as ``_json_bytes(scrub(list(items)))`` would write them, byte for byte (but for
    a small float: ``1e-05`` is written ``0.00001``), one item at a time: a list of 100,000 observations is
    never copied, nor held as one string, whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(path)
    with open(tmp, "wb") as f:
        first = True
        for chunk in _chunks(items, SECRET_CHECK_CHUNK):
            all_clean = says_nothing_secret(chunk)  # most of a wave's pods and events: each item then is too
            for item in chunk:
                f.write(b"[\n  " if first else b",\n  ")
                first = False
                clean = item if all_clean or says_nothing_secret(item) else scrub(item)
                f.write(_item_bytes(clean).replace(b"\n", b"\n  "))  # one level deeper; strings' newlines are escaped
        f.write(b"[]\n" if first else b"\n]\n")
    os.replace(tmp, path)


# items checked for secrets at once (a list's JSON holds each item's, so no word it lacks is in any item): at
# 10,000 pods half the time of checking them one by one
SECRET_CHECK_CHUNK = 256


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


# as json.dumps(indent=2, sort_keys=True) writes: datetimes, enums and dataclasses go to ``_default`` the same way
_ITEM_OPTIONS = (orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
                 | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS)


def _item_bytes(item: Any) -> bytes:
    """One item of a list document: orjson (10,000 pods in about a second, not eight), the standard library for
    what orjson refuses (an integer beyond 64 bits). A NaN or an infinity is written as null, which JSON allows."""
    try:
        return orjson.dumps(item, option=_ITEM_OPTIONS, default=_default)
    except TypeError:
        return json.dumps(item, indent=2, sort_keys=True, ensure_ascii=False, default=_default).encode()


def store_suite_parameters(run_dir: Path, params: dict[str, Any]) -> Path:
    """Store the suites' parameters of the run in ``run_dir`` (``files/suite_parameters.json``) and, once the
    manifest exists, in it too (its ``suite_parameters`` and the file's sha256): the run's validation reads
    them back from the manifest. A manifest that already holds them is left as it is."""
    path = run_dir / "files" / f"{SUITE_PARAMETERS}.json"
    _write_atomic(path, _json_bytes(scrub(params)))
    mp = run_dir / MANIFEST
    if mp.is_file():
        manifest = json.loads(mp.read_text(encoding="utf-8"))
        stored = json.loads(path.read_text(encoding="utf-8"))
        entry = {"path": str(path.relative_to(run_dir)), "sha256": sha256_file(path)}
        if manifest.get(SUITE_PARAMETERS) != stored or (manifest.get("files") or {}).get(path.name) != entry:
            manifest[SUITE_PARAMETERS] = stored
            manifest["files"] = {**(manifest.get("files") or {}), path.name: entry}
            _write_atomic(mp, _json_bytes(manifest))
    return path


def _stored_parameters(files_dir: Path) -> dict[str, Any] | None:
    path = files_dir / f"{SUITE_PARAMETERS}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _default(o: Any) -> Any:
    if isinstance(o, datetime):
        return _iso(o)
    if hasattr(o, "value") and isinstance(getattr(o, "value"), str):  # enums
        return o.value
    return str(o)


def _iso(t: datetime | str | None) -> str | None:
    if t is None or isinstance(t, str):
        return t
    t = t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


class EvidenceWriter:
    """Writes the evidence of one DAG run. Safe to construct in any task of the run: paths are derived."""

    def __init__(self, root: str | Path, dag_id: str, run_id: str):
        self.root = Path(root)
        self.dag_id = dag_id
        self.run_id = run_id
        self.run_dir = run_dir_for(root, dag_id, run_id)
        self.tables_dir = self.run_dir / "tables"
        self.files_dir = self.run_dir / "files"

    def table_path(self, table: str) -> Path:
        row_class(table)  # unknown names fail here
        return self.tables_dir / f"{table}.parquet"

    def write(self, table: str, rows: Iterable[Any], *, source: str, verified: bool = True,
              reason: str = "") -> TableRecord:
        """Write ``rows`` as ``table`` (replacing any earlier file of this run) and record it."""
        arrow = to_arrow(table, rows)
        path = self.table_path(table)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = temporary_path(path)
        pq.write_table(arrow, tmp, compression="zstd")
        os.replace(tmp, path)
        record = TableRecord(table=table, path=str(path.relative_to(self.run_dir)), rows=arrow.num_rows,
                             sha256=sha256_file(path), source=source, verified=verified,
                             reason=reason)
        _write_atomic(path.with_suffix(".meta.json"), _json_bytes(scrub(asdict(record))))
        return record

    def mark_not_verified(self, table: str, reason: str, source: str) -> TableRecord:
        """Record that ``table`` could not be collected: an empty typed table, verified false, and why."""
        if not reason:
            raise ValueError(f"{table}: a table marked not verified needs a reason (what failed, and the fix)")
        return self.write(table, [], source=source, verified=False, reason=reason)

    def document_path(self, name: str) -> Path:
        """The path of the JSON document ``name`` under ``files/``."""
        return self.files_dir / f"{safe_segment(name.removesuffix('.json'))}.json"

    def write_json(self, name: str, obj: Any) -> Path:
        """Write a scrubbed JSON document under ``files/`` (replacing an earlier one of the same name)."""
        path = self.document_path(name)
        if isinstance(obj, list):
            _write_json_list(path, obj)
        else:
            _write_atomic(path, _json_bytes(scrub(obj)))
        return path

    def copy_json(self, source: str, name: str) -> Path:
        """The document ``source`` under ``files/`` written again as ``name``, byte for byte (a file copy: what
        ``write_json`` would write of the same content, without making it again)."""
        path = self.document_path(name)
        tmp = temporary_path(path)
        shutil.copyfile(self.document_path(source), tmp)
        os.replace(tmp, path)
        return path

    def write_csv(self, name: str, text: str) -> Path:
        """Write CSV text under ``files/`` (replacing an earlier one of the same name); the manifest hashes it."""
        path = self.files_dir / f"{safe_segment(name.removesuffix('.csv'))}.csv"
        _write_atomic(path, text.encode("utf-8"))
        return path

    def write_json_items(self, name: str, items: Iterable[Any]) -> Path:
        """``write_json(name, list(items))`` without the list: each item is made, scrubbed and written in turn."""
        path = self.document_path(name)
        _write_json_list(path, items)
        return path

    def write_suite_parameters(self, params: dict[str, Any]) -> Path:
        """Store the suites' parameters of this run (``store_suite_parameters``)."""
        return store_suite_parameters(self.run_dir, params)

    def records(self) -> dict[str, TableRecord]:
        """The table records written so far in this run (by any task)."""
        out = {}
        if self.tables_dir.is_dir():
            for meta in sorted(self.tables_dir.glob("*.meta.json")):
                data = json.loads(meta.read_text())
                out[data["table"]] = TableRecord(**data)
        return out

    def write_manifest(self, *, window_start: datetime | str, window_end: datetime | str, plan_hash: str,
                       platform: dict | None = None, expected_tables: Iterable[str] = (),
                       extra: dict | None = None) -> Path:
        """Write ``manifest.json``: per table rows, sha256, source, verified, reason; the collection window,
        the plan hash, dag and run ids, platform info, and the suites' parameters when they are stored. An
        expected table nobody wrote is listed as not verified ("not collected"), never silently missing."""
        tables = {name: asdict(r) for name, r in self.records().items()}
        for name in expected_tables:
            row_class(name)
            if name not in tables:
                tables[name] = asdict(TableRecord(table=name, path="", rows=0, sha256="", source="",
                                                  verified=False, reason="not collected: no task wrote this table"))
        for rec in tables.values():
            rec.pop("table", None)
            if rec["path"]:  # the file may have been rewritten since its meta: hash what is there now
                p = self.run_dir / rec["path"]
                rec["sha256"] = sha256_file(p) if p.is_file() else ""
                if not p.is_file():
                    rec.update(verified=False, reason=f"file missing: {rec['path']}")
        files = {p.name: {"path": str(p.relative_to(self.run_dir)), "sha256": sha256_file(p)}
                 for p in sorted([*self.files_dir.glob("*.json"), *self.files_dir.glob("*.csv")])} \
            if self.files_dir.is_dir() else {}
        manifest = {
            "schema_version": SCHEMA_VERSION,
            "dag_id": self.dag_id,
            "run_id": self.run_id,
            "plan_hash": plan_hash,
            "collection_window": {"start": _iso(window_start), "end": _iso(window_end)},
            "platform": platform or {},
            "tables": dict(sorted(tables.items())),
            "files": files,
            "not_verified": sorted(n for n, r in tables.items() if not r["verified"]),
            "verified": all(r["verified"] for r in tables.values()),
            **(extra or {}),
        }
        params = _stored_parameters(self.files_dir)
        if params is not None:
            manifest[SUITE_PARAMETERS] = params
        path = self.run_dir / MANIFEST
        _write_atomic(path, _json_bytes(scrub(manifest)))
        return path
