"""`gpupoc sim config validate`: every error listed with its path; a good file passes."""

from gpupoc.cli import main
from gpupoc.sim.config import DEFAULT_CONFIG

BAD = """
pools:
  - name: Training_Pool
    gpu: {model_name: x, memory_mib: -1}
    nodes: 0
    gpus_per_node: 8
tenants:
  - name: a
    namespace: a
    quota: {gpus: -4}
"""


def test_validate_lists_every_error_with_its_path(tmp_path, capsys):
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    assert main(["sim", "config", "validate", str(f)]) == 2
    err = capsys.readouterr().err
    for path in ("pools[0].name", "pools[0].gpu.memory_mib", "pools[0].nodes", "tenants[0].quota.gpus"):
        assert f"  - {path}: " in err, f"{path} missing from:\n{err}"
    assert "got -4" in err


def test_validate_accepts_the_shipped_config(capsys):
    assert main(["sim", "config", "validate", str(DEFAULT_CONFIG)]) == 0
    assert "ok (2 pools, 5 nodes, 32 GPUs, 3 tenants)" in capsys.readouterr().out


def test_node_command_without_a_cluster_says_how_to_start_one(tmp_path, capsys):
    assert main(["sim", "node", "fail", "n1", "--kubeconfig", str(tmp_path / "missing")]) == 2
    assert "gpupoc sim serve" in capsys.readouterr().err


def test_serve_refuses_a_bad_config_before_starting(tmp_path, capsys):
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    assert main(["sim", "serve", "--config", str(f), "--data-dir", str(tmp_path / "d")]) == 2
    assert "tenants[0].quota.gpus: Input should be greater than or equal to 0, got -4" in capsys.readouterr().err
    assert not (tmp_path / "d" / "sim.json").exists()


def test_serve_refuses_an_unknown_fault(tmp_path, capsys):
    assert main(["sim", "serve", "--faults", "nope", "--data-dir", str(tmp_path / "d")]) == 2
    assert "unknown fault profile 'nope'" in capsys.readouterr().err


def test_serve_refuses_an_unknown_behaviour_before_starting(tmp_path, capsys):
    assert main(["sim", "serve", "--behaviour", "release-staggered,lazy", "--data-dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "unknown behaviour profile 'lazy'" in err and "watch-cuts" in err
    assert not (tmp_path / "d" / "sim.json").exists()


def test_demo_refuses_an_unknown_behaviour_before_starting_anything(capsys):
    assert main(["demo", "--behaviour", "nope"]) == 2
    assert "unknown behaviour profile 'nope'" in capsys.readouterr().err


def test_validate_names_the_scheduler_of_each_shipped_mode(capsys):
    from gpupoc.sim.config import shipped_config
    from gpupoc.kube.schedulers import SchedulerMode

    for mode in SchedulerMode:
        assert main(["sim", "config", "validate", str(shipped_config(mode))]) == 0
        assert f"3 tenants), scheduler {mode.value}" in capsys.readouterr().out


def test_validate_refuses_bad_queues_with_their_paths(tmp_path, capsys):
    import yaml

    cases = [(lambda raw: raw["kueue"]["cluster_queues"][0].update(borrowing_limit_gpus=4),
              "kueue.cluster_queues[0]: borrowing_limit_gpus: set only with a cohort"),
             (lambda raw: raw.update(kai={"queues": [{"name": "leaf", "parent": "missing"}]}),
              "kai.queues[0].parent: unknown queue 'missing'"),
             (lambda raw: raw.update(volcano={"queues": [{"name": "q", "guarantee_gpus": 9, "capability_gpus": 8}]}),
              "volcano.queues[0]: Value error, guarantee_gpus: 9 exceeds capability_gpus 8")]
    for i, (edit, expected) in enumerate(cases):
        raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
        edit(raw)
        f = tmp_path / f"bad{i}.yaml"
        f.write_text(yaml.safe_dump(raw))
        assert main(["sim", "config", "validate", str(f)]) == 2
        err = capsys.readouterr().err
        assert expected.replace("Value error, ", "") in err, err


def test_serve_refuses_an_unknown_mode(tmp_path, capsys):
    assert main(["sim", "serve", "--mode", "slurm", "--data-dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "unknown scheduler mode 'slurm'" in err and "volcano" in err


def test_serve_refuses_a_mode_the_config_has_no_queues_for(tmp_path, capsys):
    assert main(["sim", "serve", "--mode", "kai", "--config", str(DEFAULT_CONFIG),
                 "--data-dir", str(tmp_path / "d")]) == 2
    assert "kai.queues: scheduler kai needs at least one leaf queue" in capsys.readouterr().err
    assert not (tmp_path / "d" / "sim.json").exists()
