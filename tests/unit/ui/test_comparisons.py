"""The GPU POC page lists comparisons next to reports, serves their files, and refuses paths out of them."""

import json

from fastapi.testclient import TestClient

from gpupoc.ui.app import create_app
from gpupoc.ui.locations import UiPaths


def _comparison(base, cid, decisions, generated_at):
    d = base / cid
    (d / "platforms" / "kueue").mkdir(parents=True)
    (d / "comparison.json").write_text(json.dumps({
        "generated_at": generated_at, "plan_name": "gpupoc-sim-default",
        "platforms": [{"label": k, "decision": v} for k, v in decisions.items()],
        "procurement": {"pass_every_must": [k for k, v in decisions.items() if v != "postpone"]}}))
    (d / "comparison.html").write_text("<html><body>side by side</body></html>")
    (d / "platforms" / "kueue" / "report.html").write_text("<p>kueue's own report</p>")
    return d


def test_the_index_lists_comparisons_newest_first_with_each_candidates_decision(root):
    base = root / "comparisons"
    _comparison(base, "20261130T080000Z", {"kueue": "go-live", "volcano": "postpone"}, "2026-11-30T08:00:00+00:00")
    _comparison(base, "20261201T080000Z", {"kueue": "go-live", "kai": "limited-go-live"}, "2026-12-01T08:00:00+00:00")
    client = TestClient(create_app(paths=lambda: UiPaths.for_root(root)))
    page = client.get("/").text
    assert page.index("20261201T080000Z") < page.index("20261130T080000Z")
    assert "volcano: <span class=\"badge decision-postpone\">postpone</span>" in page
    assert "scheduled__2026-11-29" in page  # the reports are still listed beside them
    api = client.get("/api/reports").json()
    assert [c["id"] for c in api["comparisons"]] == ["20261201T080000Z", "20261130T080000Z"]
    assert api["comparisons"][1]["pass_every_must"] == ["kueue"]
    assert client.get("/comparisons/20261130T080000Z/").text == "<html><body>side by side</body></html>"
    assert "kueue's own report" in client.get("/comparisons/20261130T080000Z/platforms/kueue/report.html").text
    assert client.get("/comparisons/20261130T080000Z/platforms/kai/report.html").status_code == 404
    assert client.get("/comparisons/20261130T080000Z/%2E%2E/%2E%2E/report/manual__2026-11-30/report.html"
                      ).status_code in (403, 404)


def test_no_comparison_yet_says_how_to_make_one(client):
    page = client.get("/").text
    assert 'id="no-comparisons"' in page and "make compare" in page
