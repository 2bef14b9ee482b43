# The Airflow image of docker-compose.yaml: the official image plus the POC's pinned requirements and
# the gpupoc package. Nothing secret is baked in: the kubeconfig, passwords and keys arrive at run time
# (read-only mount and environment). Build: docker compose build
ARG AIRFLOW_IMAGE=apache/airflow:3.3.2
FROM ${AIRFLOW_IMAGE}

# Runs as the image's "airflow" user, as the official image expects for pip installs.
COPY --chown=airflow:0 requirements.txt /opt/gpupoc/requirements.txt
# The official image already has the PostgreSQL drivers (psycopg2-binary, asyncpg) of its "postgres" extra.
RUN pip install --no-cache-dir -r /opt/gpupoc/requirements.txt

COPY --chown=airflow:0 pyproject.toml README.md /opt/gpupoc/
COPY --chown=airflow:0 include /opt/gpupoc/include
RUN pip install --no-cache-dir --no-deps /opt/gpupoc

# Mount points of the named volumes (evidence, simple auth manager passwords): created here so that new
# volumes start owned by the airflow user and writable by group 0 (any AIRFLOW_UID in group 0).
RUN mkdir -p /opt/airflow/var/evidence /opt/airflow/auth /opt/airflow/secrets \
    && chmod -R g+rwX /opt/airflow/var /opt/airflow/auth

# docker-compose.yaml mounts ./include at /opt/airflow/include and puts it first on PYTHONPATH, so
# edited code is used without a rebuild; the installed copy serves images run without the mount.
