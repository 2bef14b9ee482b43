"""docker-compose.yaml as users run it: Airflow 3 on the official image, PostgreSQL, no secrets inside.

There is no Docker engine here; tests/integration/test_postgres_topology.py runs the same topology as processes.
"""

import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
AIRFLOW_SERVICES = {"airflow-apiserver": "api-server", "airflow-scheduler": "scheduler",
                    "airflow-dag-processor": "dag-processor", "airflow-triggerer": "triggerer"}
SECRET_WORDS = re.compile(r"PASSWORD|SECRET|TOKEN|FERNET|_KEY\b|_KEY$", re.IGNORECASE)
REFERENCE = re.compile(r"^\$\{[A-Z0-9_]+(:\?[^}]*)?\}$")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((REPO / "docker-compose.yaml").read_text(encoding="utf-8"))


def _pin(package: str) -> str:
    for line in (REPO / "requirements.txt").read_text(encoding="utf-8").splitlines():
        m = re.match(rf"^{re.escape(package)}==(\S+)", line.strip(), re.IGNORECASE)
        if m:
            return m.group(1)
    raise AssertionError(f"requirements.txt: no exact pin for {package}")


def _env(service: dict) -> dict:
    return {k: str(v) for k, v in (service.get("environment") or {}).items()}


def test_services_of_an_airflow_3_deployment(compose):
    services = compose["services"]
    assert set(services) >= {"postgres", "airflow-init", *AIRFLOW_SERVICES}, sorted(services)
    for name, command in AIRFLOW_SERVICES.items():
        assert services[name]["command"] == command, f"{name}: expected command {command!r}"
    assert "webserver" not in str(services), "Airflow 3 has an api-server, not a webserver"


def test_official_image_version_matches_requirements(compose):
    airflow = _pin("apache-airflow")
    images = {s["build"]["args"]["AIRFLOW_IMAGE"] for s in compose["services"].values() if "build" in s}
    assert images == {f"apache/airflow:{airflow}"}, f"compose builds from {images}, requirements pin {airflow}"
    dockerfile = (REPO / "docker" / "airflow.Dockerfile").read_text(encoding="utf-8")
    assert f"ARG AIRFLOW_IMAGE=apache/airflow:{airflow}" in dockerfile
    assert "requirements.txt" in dockerfile and "pip install" in dockerfile
    for name in AIRFLOW_SERVICES:
        assert compose["services"][name]["image"] == f"${{GPUPOC_AIRFLOW_IMAGE:-gpupoc-airflow:{airflow}}}", name


def test_workload_image_pins_numpy_as_requirements():
    dockerfile = (REPO / "docker" / "Dockerfile").read_text(encoding="utf-8")
    assert f"numpy=={_pin('numpy')}" in dockerfile
    assert 'ENTRYPOINT ["python", "-m", "gpupoc.workload"]' in dockerfile


def test_postgres_16_is_the_metadata_database(compose):
    pg = compose["services"]["postgres"]
    assert pg["image"] == "postgres:16"
    for name in ["airflow-init", *AIRFLOW_SERVICES]:
        conn = _env(compose["services"][name])["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
        assert conn.startswith("postgresql+psycopg2://airflow:") and conn.endswith("@postgres:5432/airflow"), conn


def test_local_executor_by_default_with_the_alternatives_documented(compose):
    for name in ["airflow-init", *AIRFLOW_SERVICES]:
        assert _env(compose["services"][name])["AIRFLOW__CORE__EXECUTOR"] == "${AIRFLOW__CORE__EXECUTOR:-LocalExecutor}"
    text = (REPO / "docker-compose.yaml").read_text(encoding="utf-8")
    doc = (REPO / "docs" / "deploy.md").read_text(encoding="utf-8")
    for alternative in ("CeleryExecutor", "KubernetesExecutor"):
        assert alternative in text and alternative in doc, f"{alternative} not documented"


def test_project_folders_and_kubeconfig_are_mounted_read_only(compose):
    for name in ["airflow-init", *AIRFLOW_SERVICES]:
        volumes = compose["services"][name]["volumes"]
        for folder in ("dags", "plugins", "include", "expectations", "plans"):
            assert f"./{folder}:/opt/airflow/{folder}:ro" in volumes, f"{name}: ./{folder} not mounted read-only"
        kube = [v for v in volumes if "/opt/airflow/secrets/kubeconfig" in v]
        assert len(kube) == 1 and kube[0].startswith("${GPUPOC_KUBECONFIG:?") and kube[0].endswith(":ro"), kube
        assert _env(compose["services"][name])["KUBECONFIG"] == "/opt/airflow/secrets/kubeconfig"
        assert any(v.startswith("evidence:") for v in volumes), f"{name}: evidence volume missing"
    assert "evidence" in compose["volumes"]


def test_kubeconfig_is_never_baked_into_an_image():
    for path in (REPO / "docker").glob("*Dockerfile"):
        text = path.read_text(encoding="utf-8").lower()
        assert not re.search(r"^\s*(copy|add)\b.*(kube|\.kube|secret|\.env)", text, re.M), f"{path.name} copies secrets"
    ignore = (REPO / ".dockerignore").read_text(encoding="utf-8").split()
    assert "var" in ignore and ".airflow" in ignore, "the build context must leave out var/ (kubeconfig, evidence)"


def test_plugin_reads_the_plan_of_the_deployment(compose):
    env = _env(compose["services"]["airflow-apiserver"])
    assert env["GPUPOC_PLAN"].startswith("/opt/airflow/plans/")
    volumes = compose["services"]["airflow-apiserver"]["volumes"]
    # the default plan's evidence_root is ../var/evidence relative to /opt/airflow/plans
    assert "evidence:/opt/airflow/var/evidence" in volumes


def test_healthchecks_and_start_order(compose):
    services = compose["services"]
    assert "pg_isready" in services["postgres"]["healthcheck"]["test"]
    for name in AIRFLOW_SERVICES:
        check = services[name].get("healthcheck")
        assert check and check["test"], f"{name}: no healthcheck"
        deps = services[name]["depends_on"]
        assert deps["postgres"]["condition"] == "service_healthy", name
        assert deps["airflow-init"]["condition"] == "service_completed_successfully", name
    assert "/api/v2/monitor/health" in str(services["airflow-apiserver"]["healthcheck"]["test"])
    assert "8974/health" in str(services["airflow-scheduler"]["healthcheck"]["test"])
    assert services["airflow-init"]["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy", "required": False}}, "init waits for the broker of the celery profile"
    assert _env(services["airflow-scheduler"])["AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK"] == "true"


def test_init_migrates_and_creates_the_admin_user(compose):
    init = compose["services"]["airflow-init"]
    script = "\n".join(init["command"])
    assert "airflow db migrate" in script
    # $$ is compose's escape: the variable is expanded by the container's shell, not on the host
    assert script.index('gpupoc plan validate "$${GPUPOC_PLAN}"') < script.index("airflow db migrate"), \
        "a broken plan must stop the deployment before anything starts"
    assert 'os.environ["AIRFLOW_ADMIN_PASSWORD"]' in script and "SIMPLE_AUTH_MANAGER_PASSWORDS_FILE" in script
    assert _env(init)["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS"] == "admin:admin"


def test_no_secret_literals(compose):
    problems = []
    for name, service in compose["services"].items():
        for key, value in _env(service).items():
            if SECRET_WORDS.search(key) and not key.endswith("_FILE") and not REFERENCE.match(value):
                problems.append(f"{name}.environment.{key}={value!r}")
            for m in re.finditer(r"://[^:/@\s]+:([^@\s]+)@", value):
                if not REFERENCE.match(m.group(1)):
                    problems.append(f"{name}.environment.{key}: password in URL is a literal")
    assert not problems, "secrets must come from the environment (.env):\n" + "\n".join(problems)
    text = (REPO / "docker-compose.yaml").read_text(encoding="utf-8")
    assert not re.search(r"BEGIN [A-Z ]*PRIVATE KEY|eyJ[A-Za-z0-9_-]{20,}|client-key-data|token:\s*\S", text)


def test_every_referenced_variable_is_documented_in_env_example(compose):
    text = (REPO / "docker-compose.yaml").read_text(encoding="utf-8")
    required = set(re.findall(r"\$\{([A-Z0-9_]+):\?", text))
    example = (REPO / "docs" / "env.example").read_text(encoding="utf-8")
    missing = [v for v in sorted(required) if not re.search(rf"^{v}=", example, re.M)]
    assert not missing, f"docs/env.example lacks {missing}"


CELERY_SERVICES = {"redis": None, "airflow-worker-1": "celery worker", "airflow-worker-2": "celery worker",
                   "airflow-scheduler-2": "scheduler", "airflow-triggerer-2": "triggerer"}


def test_the_celery_profile_adds_a_broker_two_workers_a_second_scheduler_and_triggerer(compose):
    services = compose["services"]
    profiled = {n for n, s in services.items() if s.get("profiles")}
    assert profiled == set(CELERY_SERVICES), sorted(profiled)
    for name, command in CELERY_SERVICES.items():
        assert services[name]["profiles"] == ["celery"], name
        if command:
            assert services[name]["command"] == command, f"{name}: expected command {command!r}"
            assert services[name]["healthcheck"]["test"], f"{name}: no healthcheck"
    assert services["redis"]["image"].startswith("redis:7") and "ports" not in services["redis"], \
        "the broker stays on the compose network"
    assert "redis-cli" in str(services["redis"]["healthcheck"]["test"])
    for name in ("airflow-worker-1", "airflow-worker-2"):
        assert "inspect ping" in str(services[name]["healthcheck"]["test"]), name
        assert services[name]["depends_on"]["airflow-apiserver"]["condition"] == "service_healthy", name
        assert _env(services[name])["DUMB_INIT_SETSID"] == "0", f"{name}: warm shutdown needs DUMB_INIT_SETSID=0"


def test_every_airflow_service_finds_the_broker_and_the_result_backend_in_postgres(compose):
    for name, service in compose["services"].items():
        if not name.startswith("airflow-"):
            continue
        env = _env(service)
        assert env["AIRFLOW__CELERY__BROKER_URL"] == "redis://redis:6379/0", name
        backend = env["AIRFLOW__CELERY__RESULT_BACKEND"]
        assert backend.startswith("db+postgresql://airflow:${POSTGRES_PASSWORD:?") and \
            backend.endswith("@postgres:5432/airflow"), backend
        redis = (service.get("depends_on") or {}).get("redis")
        if name != "airflow-init" or redis:
            assert redis == {"condition": "service_healthy", "required": False}, \
                f"{name}: waits for the broker when the celery profile runs it, and starts without it otherwise"


def test_init_refuses_an_executor_that_does_not_match_the_profile(compose):
    script = "\n".join(compose["services"]["airflow-init"]["command"])
    assert script.index("CeleryExecutor") < script.index("airflow db migrate"), \
        "a deployment whose executor and profile disagree stops before anything starts"
    assert "COMPOSE_PROFILES=celery" in script and "AIRFLOW__CORE__EXECUTOR=CeleryExecutor" in script
    assert _env(compose["services"]["airflow-init"])["GPUPOC_COMPOSE_PROFILES"] == "${COMPOSE_PROFILES:-}"
