"""Demo unit tests read DAG files: a throw-away AIRFLOW_HOME, no examples, no metadata database needed."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="gpupoc-demotest-"))
os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
