"""Charts: a time axis that says where it starts, full names, preemptions drawn, legends listing only what is
drawn, a heatmap with as many columns as the data has buckets."""

import re

import pandas as pd

from gpupoc.report import pictures
from gpupoc.report.wording import Wording
from gpupoc.validation import synthetic as syn

EN = Wording("en")


def _legend(svg: str) -> dict[str, str]:
    """Legend entries (name -> colour): a 10x10 swatch followed by its name."""
    return dict((name, colour) for colour, name in
                re.findall(r'width="10" height="10" fill="(#[0-9a-f]{6})"/><text[^>]*>([^<]+)</text>', svg))


def _drawn(svg: str) -> set[str]:
    """Colours of the data drawn (each data shape carries its tooltip)."""
    return set(re.findall(r'fill="(#[0-9a-f]{6})"><title>', svg))


def _preempted_wave() -> pd.DataFrame:
    wr = syn.workload_runs()
    first = wr.iloc[[4]].assign(outcome="preempted", final_attempt=False, phase="Running",
                                finished_at=wr.loc[4, "scheduled_at"] + pd.Timedelta(seconds=5))
    again = wr.iloc[[4]].assign(attempt=2, pod="wave-4-again")
    return pd.concat([wr.drop(index=4), first, again], ignore_index=True)


def test_the_queue_timeline_draws_preemptions_names_its_origin_and_keeps_full_names():
    wr = _preempted_wave()
    wr.loc[0, "pod"] = "qc-v-sweep-1g-022-901tzdz9-with-a-long-suffix"
    svg = pictures.queue_timeline(wr, EN, "Asia/Shanghai")
    legend = _legend(svg)
    assert legend["preempted"] == pictures.PREEMPTED and pictures.PREEMPTED in _drawn(svg)
    assert set(legend.values()) <= _drawn(svg), "every legend entry is drawn"
    assert "seconds after the wave's release (2026-11-30 16:00:10)" in svg.replace("&#x27;", "'")
    assert ">qc-v-sweep-1g-022-901tzdz9-with-a-long-suffix<" in svg and ">wave-4-again #2<" in svg


def test_without_preemptions_the_legend_does_not_list_them():
    svg = pictures.queue_timeline(syn.workload_runs(), EN, "UTC")
    assert "preempted" not in _legend(svg) and pictures.PREEMPTED not in _drawn(svg)


def test_the_failure_timeline_lists_only_the_states_it_draws():
    fr, fw = syn.failure_records(), syn.fault_runs()
    svg = pictures.failure_timeline(fr, fw, EN)
    legend = _legend(svg)
    assert set(legend.values()) <= _drawn(svg)
    assert "pending" in legend and "failed" in legend
    only_release = pictures.failure_timeline(fr, pd.DataFrame(), EN)
    assert list(_legend(only_release)) == ["GPU held"], "nothing but the GPU release is drawn without workloads"


def test_the_heatmap_has_a_column_per_bucket_of_a_short_run():
    ut = syn.utilization(hours=1)
    short = pd.concat([ut.assign(bucket=ut["bucket"] + pd.Timedelta(seconds=16 * k)) for k in range(3)])
    svg = pictures.utilization_heatmap(short, EN, "UTC")
    assert len(re.findall(r'<rect [^>]*fill-opacity="[\d.]+"><title>team-nlp ', svg)) == 3
    assert "one column per 16 s, 2026-11-30 (UTC)" in svg
    long = pictures.utilization_heatmap(syn.utilization(hours=4), EN, "UTC")
    assert "one column per 1 h" in long
