"""When the wave is over for every task that waits for it (``observe_services``, the probes): each item decided.

One rule for every waiter, the observer's own (``pipeline.open_items``), on the attempts' decisions, never on
a pod's presence:
- an item is open while its latest pod waits or runs;
- once that attempt ended or vanished, only while another attempt is to come: as its task recorded
  (``files/decision-<item>-try<N>.json``, ``steps.attempt_decision``) or, before the task said anything, as
  the attempt's own outcome says (``attempts.classify_attempt`` and ``next_attempt``). A pod that vanished
  with no record is lost at once, and a creation the platform refused ends its item with the refusal.
The wave is over at once, too, when the class's preflight refused it (nothing is submitted), and when the
observer ended: in Airflow it alone reads the wave tasks' states, so an item whose task ended without a pod is
closed by it (``files/observer_end.json``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from gpupoc.common.outcomes import WorkloadOutcome
from gpupoc.common.timefmt import parse_time
from gpupoc.pipeline import wave as W
from gpupoc.pipeline.attempts import Evidence, NextAttempt, Submission, TaskDecision, classify_attempt
from gpupoc.pipeline.observe import list_events
from gpupoc.pipeline.open_items import Open, Policy, TaskView, open_items
from gpupoc.pipeline.workload_outcome import OutcomeRecord
from gpupoc.preflight.model import PreflightReport
from gpupoc.steps.markers import DECISION_PREFIX, OBSERVER_END, PREFLIGHT_FILE
from gpupoc.steps.submission_files import read_submission_file, submission_files

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext

Key = tuple[str, str]


@dataclass
class WaveEnd:
    """One waiter's view of the wave's end, kept between its looks: the attempts it knows of (created, seen or
    recorded), when each was first seen ended or missing, and the outcomes already final."""

    clock: Callable[[], float] = time.monotonic
    why: str = ""                                               # why the last look said the wave is over
    open: list[Open] = field(default_factory=list)              # what the last look found open
    _created: dict[Key, tuple[str, float]] = field(default_factory=dict)   # attempt -> (item, creation order)
    _last: dict[Key, dict] = field(default_factory=dict)        # attempt -> the pod as last seen
    _ended_at: dict[Key, float] = field(default_factory=dict)
    _known: dict[Key, OutcomeRecord] = field(default_factory=dict)
    _files: dict[Path, list] = field(default_factory=dict)   # submission and decision files read once

    def over(self, ctx: RunContext) -> bool:
        """Every wave item decided (see the module docstring); ``why`` and ``open`` say what the look found."""
        if preflight_refused(ctx):
            self.why, self.open = "the preflight refused the class: nothing was submitted", []
            return True
        if ctx.files(OBSERVER_END).is_file():
            self.why, self.open = "the observer ended", []
            return True
        self.open = self.look(ctx)
        self.why = "" if self.open else "every wave item has its outcome"
        return not self.open

    def look(self, ctx: RunContext) -> list[Open]:
        """The wave items still open now."""
        items = {i["workload_key"]: i["namespace"] for i in ctx.items}
        pods = [p for p in W.list_pods(ctx.reader(), ctx.namespaces, ctx.selector) if W.item_key(p) in items]
        now = self.clock()
        present = self._see(pods, now)
        running = [k for k, p in present.items() if _live(p)]
        if running:  # a pod still waits or runs: nothing more to read
            return [Open(self._created[running[0]][0], f"{running[0][1]} (still on the platform)")]
        subs, decided = self._records(ctx)
        for s in subs:
            if s.pod and s.item in items:
                self._created.setdefault((s.namespace, s.pod), (s.item, _at(s)))
        for key in self._created:
            if key not in present:
                self._ended_at.setdefault(key, now)
        seen: dict[str, list[str]] = {}
        for key, (item, _) in sorted(self._created.items(), key=lambda kv: kv[1][1]):
            seen.setdefault(item, []).append(key[1])
        tasks = _view(decided, refused={s.item for s in subs if s.rejection is not None})
        policy = ctx.spec.resubmission
        return open_items(items, seen, present, self._ended_at, now,
                          Policy(policy.limit, policy.platform_requeues, policy.wait_seconds), tasks,
                          self._outcomes(ctx, present))

    def _see(self, pods: list[dict], now: float) -> dict[Key, dict]:
        present = {}
        for p in pods:
            m = p["metadata"]
            key = (m["namespace"], m["name"])
            present[key] = self._last[key] = p
            self._created[key] = (W.item_key(p), _created(p))  # the platform's own time over the submission's
            if not _live(p):
                self._ended_at.setdefault(key, now)
        return present

    def _records(self, ctx: RunContext) -> tuple[list[Submission], list[TaskDecision]]:
        """The wave tasks' submissions and decisions (each file read once: a try's record never changes)."""
        files = ctx.writer.files_dir
        if not files.is_dir():
            return [], []
        subs, decided = [], []
        for paths, parse, out in ((submission_files(files), read_submission_file, subs),
                                  (sorted(files.glob(f"{DECISION_PREFIX}*.json")), _read_decision, decided)):
            for path in paths:
                if path not in self._files:
                    try:
                        self._files[path] = parse(path)
                    except (ValueError, KeyError):
                        continue  # being written: the next look reads it
                out.extend(self._files[path])
        return subs, decided

    def _outcomes(self, ctx: RunContext, present: dict[Key, dict]) -> Callable[[Key], OutcomeRecord]:
        """The outcome of an ended attempt no task decided yet: from the namespaces' events first, from every
        record the platform keeps (owners' conditions, the audit log) only when those leave it lost."""
        read: dict[str, Evidence] = {}

        def outcome_of(key: Key) -> OutcomeRecord:
            if key in self._known:
                return self._known[key]
            pod, here = present.get(key) or self._last.get(key), key in present
            if "events" not in read:
                read["events"] = Evidence(list_events(ctx.reader(), ctx.namespaces))
            out = classify_attempt(key, pod, here, read["events"])
            if out.outcome is WorkloadOutcome.LOST:
                if "all" not in read:
                    read["all"] = ctx.platform_records(events=read["events"].events)
                out = classify_attempt(key, pod, here, read["all"])
            if out.outcome.final and out.outcome is not WorkloadOutcome.LOST:
                self._known[key] = out
            return out

        return outcome_of


def preflight_refused(ctx: RunContext) -> bool:
    """The class's preflight found a prerequisite missing: nothing of the class is submitted."""
    data = ctx.read_file(PREFLIGHT_FILE)
    return bool(data) and bool(PreflightReport.from_dict(data).missing_pieces())


def wave_decided(ctx: RunContext, end: WaveEnd | None = None) -> bool:
    """True once every wave item is decided (``WaveEnd.over``); a waiter that looks again keeps one ``end``."""
    return (end or WaveEnd()).over(ctx)


def _read_decision(path: Path) -> list[TaskDecision]:
    return [TaskDecision.from_dict(json.loads(path.read_text(encoding="utf-8")))]


def _live(pod: dict) -> bool:
    return ((pod.get("status") or {}).get("phase") not in W.TERMINAL
            and not (pod.get("metadata") or {}).get("deletionTimestamp"))


def _created(pod: dict) -> float:
    at = parse_time((pod.get("metadata") or {}).get("creationTimestamp"))
    return at.timestamp() if at else float("inf")


def _at(sub: Submission) -> float:
    return sub.at.timestamp() if sub.at else float("inf")


def _view(decided: list[TaskDecision], refused: set[str]) -> TaskView:
    view = TaskView()
    for d in sorted(decided, key=lambda d: (d.item, d.try_number)):
        if d.pod:
            view.decisions[(d.namespace, d.pod)] = d
        else:
            view.refused[d.item] = d
    for item in refused - set(view.refused):
        view.refused[item] = TaskDecision(item, "", None, 0, WorkloadOutcome.REJECTED, "rejected at admission",
                                          NextAttempt.NONE)
    return view
