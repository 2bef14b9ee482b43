"""The result every collector returns: the table plus whether it can be trusted, and why not."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone

import pandas as pd


@dataclass(frozen=True)
class Window:
    """A collection window: ``start``/``end`` (aware datetimes) and the sampling ``step`` in seconds."""

    start: datetime
    end: datetime
    step: float = 15.0

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            v = getattr(self, name)
            if v.tzinfo is None:
                raise ValueError(f"window.{name}: expected a timezone-aware datetime, got naive {v.isoformat()}; "
                                 "use datetime.now(timezone.utc) or add tzinfo")
        if self.end <= self.start:
            raise ValueError(f"window: end {self.end.isoformat()} is not after start {self.start.isoformat()}")
        if self.step <= 0:
            raise ValueError(f"window.step: expected seconds > 0, got {self.step}")

    @classmethod
    def last(cls, seconds: float, step: float = 15.0, end: datetime | None = None) -> "Window":
        """The ``seconds`` up to ``end`` (now by default)."""
        end = end or datetime.now(timezone.utc)
        return cls(end - timedelta(seconds=seconds), end, step)

    def as_dict(self) -> dict:
        return {"start": self.start.isoformat(), "end": self.end.isoformat(), "step": self.step}

    def __str__(self) -> str:
        return f"{self.start.isoformat()}..{self.end.isoformat()} step {self.step:g}s"


@dataclass
class CollectorResult:
    """A collected table. ``verified`` False means the table must not be read as evidence of a pass."""

    name: str
    source: str
    window: Window | None
    frame: pd.DataFrame = field(default_factory=pd.DataFrame)
    verified: bool = True
    reason: str = ""
    query: str = ""

    @classmethod
    def unverified(cls, name: str, source: str, window: Window | None, reason: str, query: str = "",
                   columns: list[str] | None = None) -> "CollectorResult":
        return cls(name, source, window, pd.DataFrame(columns=columns or []), False, reason, query)

    def derive(self, name: str, frame: pd.DataFrame, empty_reason: str = "") -> "CollectorResult":
        """A result computed from this one: keeps source and window, stays unverified if this one was,
        and becomes unverified when ``frame`` is empty."""
        if not self.verified:
            return replace(self, name=name, frame=frame)
        if frame.empty:
            return replace(self, name=name, frame=frame, verified=False,
                           reason=empty_reason or f"no rows for {self.window} from {self.source}")
        return replace(self, name=name, frame=frame)

    def summary(self) -> dict:
        """A small JSON-able description (for manifests and XCom)."""
        return {"name": self.name, "verified": self.verified, "reason": self.reason, "source": self.source,
                "window": self.window.as_dict() if self.window else None, "rows": int(len(self.frame)),
                "query": self.query}
