"""The simulated cluster's fault profiles live in their own modules: the correct controllers and the API
server hold no fault branch. A profile (``sim/fault_profiles/<name>.py``) replaces or wraps a reactor
(``sim/reactors.py``) or registers on a port; only ``sim/faults.py`` (the enum), ``sim/fault_profiles/`` and the
places that carry the planted set unread (the state, the server, the command line) may name ``Fault``."""

from __future__ import annotations

import re
from pathlib import Path

from gpupoc.sim.fault_profiles import PROFILES
from gpupoc.sim.faults import Fault

SIM = Path(__file__).resolve().parents[3] / "include" / "gpupoc" / "sim"
FAULT_MODULES = ("faults.py", "fault_profiles/")
# A check of the planted faults: a member of the enum, a test of the planted set, or the old helper that read it.
FAULT_CHECK = re.compile(r"\bFault\.[A-Z_]+|\bhides_reasons\(|\bin (?:self|state|ctx\.state)\.faults\b")
ALLOWED: dict[str, str] = {}  # path under sim/ -> why it may still check a fault (none left)
LIMIT = 0  # fault checks outside the fault modules and ALLOWED; never raise it, move the check to a profile


def fault_checks(root: Path = SIM) -> dict[str, list[str]]:
    """Each module of ``root`` outside the fault modules with the fault checks it holds."""
    out: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(FAULT_MODULES):
            continue
        found = FAULT_CHECK.findall(path.read_text(encoding="utf-8"))
        if found:
            out[rel] = found
    return out


def test_the_correct_controllers_and_the_api_hold_no_fault_branch():
    checks = {rel: found for rel, found in fault_checks().items() if rel not in ALLOWED}
    count = sum(len(found) for found in checks.values())
    assert count <= LIMIT, (f"{count} fault checks outside sim/fault_profiles/: {checks}; give the decision a "
                            "reactor (sim/reactors.py) and let the fault's module replace it")


def test_the_counter_sees_a_fault_check_in_a_controller(tmp_path):
    (tmp_path / "controllers").mkdir()
    (tmp_path / "controllers" / "x.py").write_text(
        "if state.has(Fault.GPUS_LEAK) or hides_reasons(f) or x in state.faults:\n    pass\n"
        "names = sorted(f.value for f in faults)\n")
    (tmp_path / "fault_profiles").mkdir()
    (tmp_path / "fault_profiles" / "gpus_leak.py").write_text("FAULT = Fault.GPUS_LEAK\n")
    assert fault_checks(tmp_path) == {"controllers/x.py": ["Fault.GPUS_LEAK", "hides_reasons(", "in state.faults"]}


def test_every_fault_profile_has_its_module_in_the_table():
    assert set(PROFILES) == set(Fault)
    modules = {f.stem for f in (SIM / "fault_profiles").glob("*.py") if f.stem != "__init__"}
    assert {f.value.replace("-", "_") for f in Fault} == modules, "one module per fault, named for it"
