"""The real KubernetesPodOperator, sync and deferrable, against the simulated cluster (issue: simulated cluster).

Each mode runs three pods as a tenant identity through ``airflow dags test``: one that succeeds, one that exits
non-zero and one whose image does not exist. The operator's verdicts, its streamed logs and the pods' final
state on the cluster must all agree with what happened.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("airflow")]

HERE = Path(__file__).parent
VENV_BIN = Path(sys.executable).parent

STATE_QUERY = """
import json, sys
from airflow.models import TaskInstance
from airflow.utils.session import create_session
with create_session() as s:
    rows = s.query(TaskInstance.task_id, TaskInstance.state).filter(TaskInstance.dag_id == sys.argv[1]).all()
print(json.dumps({t: str(st) for t, st in rows}))
"""


@pytest.fixture(scope="module")
def airflow_env(sim_server, tmp_path_factory):
    home = tmp_path_factory.mktemp("airflow_home")
    dags = home / "dags"
    dags.mkdir()
    shutil.copy(HERE / "data" / "kpo_outcomes_dag.py", dags / "kpo_outcomes_dag.py")
    env = {
        **os.environ,
        "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}",
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        "GPUPOC_TEST_KUBECONFIG": str(sim_server.kubeconfig_http),
        "GPUPOC_TEST_CONTEXT": "team-vision",
        "GPUPOC_TEST_NAMESPACE": "team-vision",
    }
    subprocess.run([str(VENV_BIN / "airflow"), "db", "migrate"], env=env, check=True, capture_output=True, timeout=180)
    return env


def _run_mode(airflow_env: dict, mode: str) -> tuple[dict[str, str], str]:
    dag_id = f"kpo_{mode}"
    proc = subprocess.run([str(VENV_BIN / "airflow"), "dags", "test", dag_id], env=airflow_env,
                          capture_output=True, text=True, timeout=420)
    states = subprocess.run([sys.executable, "-c", STATE_QUERY, dag_id], env=airflow_env,
                            capture_output=True, text=True, timeout=120, check=True)
    result = json.loads(states.stdout.strip().splitlines()[-1])
    assert result, f"no task instances recorded for {dag_id}; dags test output:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    return result, proc.stdout + proc.stderr


@pytest.mark.parametrize("mode", ["sync", "deferrable"])
def test_operator_verdicts_match_what_happened_on_the_cluster(sim_server, airflow_env, mode):
    states, output = _run_mode(airflow_env, mode)
    assert states == {"succeeds": "success", "exits_nonzero": "failed", "missing_image": "failed"}, states

    from kubernetes import client
    core = client.CoreV1Api(sim_server.client("admin", http=True))
    pods = {p.metadata.labels.get("task_id"): p for p in core.list_namespaced_pod(
        "team-vision", label_selector=f"dag_id=kpo_{mode}").items}
    assert pods["succeeds"].status.phase == "Succeeded"
    assert pods["exits_nonzero"].status.phase == "Failed"
    assert pods["exits_nonzero"].status.container_statuses[0].state.terminated.exit_code == 3
    waiting = pods["missing_image"].status.container_statuses[0].state.waiting
    assert waiting is not None and waiting.reason in ("ErrImagePull", "ImagePullBackOff")

    # the operator streamed the workload's own output (pod log) into the task log, for success and failure
    pod_lines = [line for line in output.splitlines() if "[base] " in line]
    assert any("training finished" in line for line in pod_lines), output[-3000:]
    assert any("planted failure" in line for line in pod_lines), output[-3000:]
    # the missing image was reported with the platform's own pull error, not as a timeout
    assert "ErrImagePull" in output or "ImagePullBackOff" in output
    assert "took too long to be scheduled" not in output
