"""The glossary's lists are the code's own: its adapters and their scheduler modes, its fault and behaviour
profiles and its check-id prefixes are compared with the registries the code reads, and a drift fails naming
what is missing on which side."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpupoc.demo.services import SIM_MODE
from gpupoc.plan.model import Adapter
from gpupoc.sim.behaviours import Behaviour
from gpupoc.sim.faults import Fault
from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.validation.suites import load_suites

GLOSSARY = Path(__file__).resolve().parents[3] / "docs" / "glossary.md"
# A run of backticked names: `a`, `b` or `c` (the list an entry gives).
NAME_RUN = re.compile(r"`[a-z][a-z0-9-]*`(?:(?:,\s+|\s+or\s+|\s+and\s+|,\s+or\s+|,\s+and\s+)`[a-z][a-z0-9-]*`)+")


def entry(text: str, term: str) -> str:
    """The glossary entry that starts with ``**term**``, to the next entry."""
    m = re.search(rf"^\*\*{re.escape(term)}\*\*.*?(?=^\*\*[A-Z]|\Z)", text, re.M | re.S)
    assert m, f"docs/glossary.md has no entry **{term}**"
    return m.group(0)


def listed_names(text: str, term: str) -> set[str]:
    """The names of the longest run of backticked names in the entry ``term``."""
    runs = NAME_RUN.findall(entry(text, term))
    assert runs, f"docs/glossary.md **{term}** lists no names (write them as `a`, `b` or `c`)"
    return set(re.findall(r"`([^`]+)`", max(runs, key=len)))


def table_rows(text: str, term: str) -> list[list[str]]:
    """The rows of the entry's table, each a list of its cells with the backticks dropped."""
    rows = [[c.strip().strip("`") for c in line.strip().strip("|").split("|")]
            for line in entry(text, term).splitlines() if line.startswith("| `")]
    assert rows, f"docs/glossary.md **{term}** has no table"
    return rows


def drift(what: str, glossary: set[str], code: set[str], where: str) -> str:
    """'' when both sides agree, else what each side lacks."""
    parts = []
    if code - glossary:
        parts.append(f"missing from docs/glossary.md: {sorted(code - glossary)} (in {where})")
    if glossary - code:
        parts.append(f"missing from the code ({where}): {sorted(glossary - code)} (in docs/glossary.md)")
    return f"{what}: " + "; ".join(parts) if parts else ""


def code_check_prefixes() -> set[str]:
    return {str(e["meta"]["check_id"]).split("-")[0] for s in load_suites() for e in s.data["expectations"]}


@pytest.fixture(scope="module")
def glossary() -> str:
    return GLOSSARY.read_text(encoding="utf-8")


def test_the_glossary_lists_every_adapter_of_the_plan_and_no_other(glossary):
    listed = {row[0] for row in table_rows(glossary, "Adapter")}
    assert not (d := drift("adapters", listed, {a.value for a in Adapter}, "plan/model.py Adapter")), d


def test_the_glossary_gives_each_adapter_the_scheduler_mode_that_serves_it(glossary):
    listed = {row[0]: row[-1] for row in table_rows(glossary, "Adapter")}
    assert listed == SIM_MODE, f"adapter -> scheduler mode: docs/glossary.md says {listed}, demo/services.py " \
                               f"SIM_MODE says {SIM_MODE}"


def test_the_glossary_lists_every_scheduler_mode_of_the_simulated_cluster_and_no_other(glossary):
    listed = listed_names(glossary, "Scheduler mode")
    assert not (d := drift("scheduler modes", listed, {m.value for m in SchedulerMode},
                           "kube/schedulers.py SchedulerMode")), d


def test_the_glossary_lists_every_fault_profile_and_no_other(glossary):
    listed = listed_names(glossary, "Fault profile")
    assert not (d := drift("fault profiles", listed, {f.value for f in Fault}, "sim/faults.py Fault")), d


def test_the_glossary_lists_every_behaviour_profile_and_no_other(glossary):
    listed = listed_names(glossary, "Behaviour profile")
    assert not (d := drift("behaviour profiles", listed, {b.value for b in Behaviour},
                           "sim/behaviours.py Behaviour")), d


def test_the_glossary_names_the_family_of_every_check_prefix_the_suites_use_and_no_other(glossary):
    listed = {row[0] for row in table_rows(glossary, "Check")}
    assert not (d := drift("check prefixes", listed, code_check_prefixes(), "expectations/*.json check ids")), d


def test_a_drift_names_what_is_missing_on_each_side():
    message = drift("fault profiles", {"pod-lost", "made-up"}, {"pod-lost", "slice-leak"}, "sim/faults.py Fault")
    assert "missing from docs/glossary.md: ['slice-leak']" in message
    assert "missing from the code (sim/faults.py Fault): ['made-up']" in message
    assert drift("fault profiles", {"pod-lost"}, {"pod-lost"}, "sim/faults.py Fault") == ""


def test_the_longest_run_of_names_is_the_entry_s_list():
    text = "**Fault profile**: a defect, see `docs`: `a`, `b-c` or `d`. For `a` only.\n\n**Gang**: `x`, `y`\n"
    assert listed_names(text, "Fault profile") == {"a", "b-c", "d"}
