"""Human cells: formatted numbers, local times without microseconds, words for booleans and the pipeline's
values, joined lists, quotes for the platform's text, a traceback shortened to its exception; paths relative."""

import pandas as pd
import pytest

from gpupoc.report.cells import cell, header, local_time, number, quantity, untraced
from gpupoc.report.views import view
from gpupoc.report.wording import Wording

EN, ZH = Wording("en"), Wording("zh")


@pytest.mark.parametrize("value,text", [(1.0, "1"), (31.917, "31.92"), (12345, "12,345"), (0.0001, "0"),
                                        (-0.0, "0")])
def test_numbers_lose_their_noise(value, text):
    assert number(value) == text


def test_units_follow_the_column_and_the_language():
    assert quantity(31.917, "wait_seconds", EN) == "31.9 s" and quantity(31.917, "wait_seconds", ZH) == "31.9 秒"
    assert quantity(2.5, "used_gpu_hours", EN) == "2.5 GPU-h"
    assert cell(3406, "size_bytes", EN).text == "3.3 KiB"


def test_times_are_local_to_the_plan_window_and_whole_seconds():
    assert local_time("2026-12-01T19:37:50.712298Z", "Asia/Shanghai") == "2026-12-02 03:37:50"
    assert cell("2026-12-01T19:37:50.712298Z", "submitted_at", EN, "UTC").text == "2026-12-01 19:37:50"
    said = cell("pod submitted with its own token) at 2026-12-01T19:37:50.712298Z", "trigger", EN, "Asia/Shanghai")
    assert said.text.endswith("at 2026-12-02 03:37:50") and not said.quote


def test_booleans_and_the_pipeline_s_values_are_words_in_the_report_s_language():
    assert (cell(True, "verified", EN).text, cell(False, "allowed", ZH).text) == ("yes", "否")
    assert cell("behind_queue", "reconstructed_bottleneck", EN).text == "behind workloads ahead in the queue"
    assert cell("preempted", "outcome", ZH).text == "被抢占"
    assert cell("a value no table words", "outcome", EN).text == "a value no table words"
    assert header("reconstructed_bottleneck", EN) == "Reconstructed bottleneck" and header("max_used", ZH) == "最大用量"


def test_lists_stored_as_json_are_joined_and_the_platform_s_words_quoted():
    events = cell('["Normal Scheduled: assigned", "Warning Failed: pull"]', "events", EN)
    assert events.quote and events.text == "Normal Scheduled: assigned; Warning Failed: pull"
    assert cell("0/3 nodes are available", "platform_message", EN).quote
    assert not cell("gpupoc-high", "priority_class", EN).quote


TAIL = ('Failed | Error | exit code 3; log readable after the failure; RUNNERS[s.mode.value](s, rep)\n'
        '         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
        '  File "/home/ci/gpupoc/include/gpupoc/workload/modes.py", line 109, in run_fail\n'
        '    raise TrainingDiverged(\n'
        'gpupoc.workload.modes.TrainingDiverged: loss became NaN at epoch 3 step 29')


def test_a_traceback_is_shortened_to_its_exception_and_loses_the_machine_s_paths():
    short, traced = untraced(TAIL)
    assert traced and "/home/ci" not in short and "File " not in short and "^^^" not in short
    assert short == ("Failed | Error | exit code 3; log readable after the failure […] "
                     "gpupoc.workload.modes.TrainingDiverged: loss became NaN at epoch 3 step 29")
    assert untraced("ValueError: x") == ("ValueError: x", False)
    full = 'Traceback (most recent call last):\n  File "/a.py", line 1, in <module>\n    f()\nValueError: x'
    assert untraced(full)[0] == "[…] ValueError: x"
    assert cell(TAIL, "user_visible", EN).text == short


def test_views_make_artifact_paths_relative_to_their_volume_and_sources_short():
    art = pd.DataFrame({"path": ["/srv/x/var/sim/volumes/team-vision/artifacts/train-0-ab/model.npz"],
                        "producer": ["train-0-ab"], "source": ["/srv/x/var/monitoring/alerts.jsonl"]})
    shown = view("artifacts", art)
    assert shown.loc[0, "path"] == "train-0-ab/model.npz" and shown.loc[0, "source"] == "monitoring/alerts.jsonl"
    fr = view("failure_records", pd.DataFrame({"user_visible": [TAIL]}))
    assert "/home/ci" not in fr.loc[0, "user_visible"]
