"""make compare's FAULTS: a fault profile goes into one named candidate only."""

import pytest

from gpupoc.demo.compare import DEFAULT_PLATFORMS, parse_planted
from gpupoc.exceptions import ComparisonRefused


def test_a_planted_fault_names_its_candidate():
    assert parse_planted("volcano:gang-partial", DEFAULT_PLATFORMS) == {"volcano": "gang-partial"}
    assert parse_planted("kai:audit-gaps,kai:gpus-leak,kube:priority-ignored", DEFAULT_PLATFORMS) == {
        "kai": "audit-gaps,gpus-leak", "kube": "priority-ignored"}
    assert parse_planted("", DEFAULT_PLATFORMS) == {}


@pytest.mark.parametrize("value", ["gang-partial", "yunikorn:gang-partial", "volcano:"])
def test_a_fault_without_a_known_candidate_is_refused(value):
    with pytest.raises(ComparisonRefused, match="PLATFORM:PROFILE"):
        parse_planted(value, DEFAULT_PLATFORMS)
