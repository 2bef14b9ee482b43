"""Read a report.json as a reviewer checking its figures would: every counted figure must count the rows its
check judged (as the check's stored GX result says), and the summary's key figures must say what the body says.

Used by the unit tests on synthetic evidence and by the demo's integration test on the demo's own report.
"""

from __future__ import annotations

from typing import Any

CHAIN_CHECKS = ("FR-07", "FR-08", "FR-10", "FR-11", "FR-12")  # what a complete failure evidence chain needs


def _checks(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["check_id"]: c for it in report["items"] for c in it["checks"]}


def _rows(figure: dict[str, Any], check: dict[str, Any]) -> list[str]:
    """What is wrong with one counted figure against the check it names."""
    obs, name = check.get("observed") or {}, f"{figure['label']} {figure['value']} ({figure['check']})"
    if check["verdict"] not in ("pass", "fail"):
        return []  # nothing was counted by the check: no rows to agree with
    if "element_count" in obs:
        total = obs["element_count"] - obs.get("missing_count", 0) + (figure.get("not_applicable") or 0)
        count = total - obs.get("unexpected_count", 0)
        if (figure.get("count"), figure.get("out_of")) != (count, total):
            return [f"{name}: the check judged {count} of {total} rows"]
        return []
    if "observed_value" in obs:
        counted = figure.get("out_of") if figure.get("out_of") is not None else figure.get("count")
        return [] if counted == obs["observed_value"] else [f"{name}: the check observed {obs['observed_value']}"]
    return [f"{name}: the check kept no row count"]


def disagreements(report: dict[str, Any]) -> list[str]:
    """Every figure of ``report`` (a report.json) that contradicts its verdict or the summary; [] when none."""
    checks = _checks(report)
    out = []
    body: dict[str, dict[str, Any]] = {}
    for it in report["items"]:
        for f in it["figures"]:
            if f.get("check") and f["check"] in checks:
                body[f["check"]] = f
                out += _rows(f, checks[f["check"]])
    for k in report["key_figures"]:
        if not k.get("check"):
            continue
        twin = body.get(k["check"])
        if twin is None or (twin["count"], twin["out_of"]) != (k["count"], k["out_of"]):
            out.append(f"summary {k['label']} {k['value']} ({k['check']}): the body says "
                       f"{twin['value'] if twin else 'nothing'}")
        if k["status"] == "pass" and k["count"] != k["out_of"]:
            out.append(f"summary {k['label']} {k['value']}: short of complete next to a pass")
    chain = body.get("FR-01")
    if chain and chain["count"] != chain["out_of"] and all(checks.get(c, {}).get("verdict") == "pass"
                                                          for c in CHAIN_CHECKS):
        out.append(f"chains complete {chain['value']}: every check of the chain passed")
    return out
