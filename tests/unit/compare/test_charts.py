"""The comparison's charts: one line per candidate, units on both axes, "not measured" without data."""

from gpupoc.compare.charts import occupancy, wait_cdf


def test_the_wait_cdf_draws_one_step_line_per_candidate_with_units():
    svg = wait_cdf({"kueue": [1.0, 5.0, 30.0], "volcano": [2.0, 90.0], "kai": []})
    assert svg.count("<polyline") == 2  # kai recorded no waits: no line, still in the legend
    assert "wait (seconds)" in svg and "workloads started (%)" in svg
    assert ">kueue<" in svg and ">volcano<" in svg and ">kai<" in svg
    assert ">100<" in svg  # the axis ends at the next round value above the longest wait (90 s)


def test_charts_without_data_say_not_measured():
    assert "not measured" in wait_cdf({"a": [], "b": []})
    assert "not measured" in occupancy({"a": [], "b": []})
    svg = occupancy({"a": [(0.0, 8.0), (3.0, 24.0)], "b": [(0.0, 4.0)]})
    assert svg.count("<polyline") == 2 and "GPUs held by running workloads" in svg
