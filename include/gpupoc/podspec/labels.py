"""Label keys the pipeline puts on every pod, and label-value sanitising."""

from __future__ import annotations

import hashlib
import re

RUN_ID = "gpupoc.io/run-id"
TEST_CLASS = "gpupoc.io/test-class"
TENANT = "gpupoc.io/tenant"
WORKLOAD = "gpupoc.io/workload"
TASK_TYPE = "gpupoc.io/task-type"
POOL = "gpupoc.io/pool"
PRIORITY_CLASS = "gpupoc.io/priority-class"
ROLE = "gpupoc.io/role"
GANG = "gpupoc.io/gang"              # the gang's object name in this run (every adapter, kube-scheduler too)
# a class's services (Deployment, Service, replicas, load pod) carry SERVICE_OF instead of TEST_CLASS, so the
# wave's selector (run id and test class) never takes a serving replica for a wave pod
SERVICE_OF = "gpupoc.io/service-of"
SERVICE = "gpupoc.io/service"        # the service's name in this run
# annotations: values that do not fit a label
RUN_ID_RAW = "gpupoc.io/run-id-raw"
EXPECTED_EXIT = "gpupoc.io/expected-exit-code"
EXPECTED_REASON = "gpupoc.io/expected-reason"
ITEM = "gpupoc.io/item"
GANG_KEY = "gpupoc.io/gang-key"      # the gang as the plan names it (class_items)
# how a virtual pod ends on KWOK nodes (the real control plane's Stages read these: controlplane/kwok_stages.yaml)
VIRTUAL_END = "gpupoc.io/virtual-end"          # exit | oom | image-pull | hang
VIRTUAL_RUN = "gpupoc.io/virtual-run"          # run time once started, a Go duration ("15s")
VIRTUAL_EXIT = "gpupoc.io/virtual-exit-code"   # exit code when it ends by itself
PROCESS_RUNNER = "gpupoc.io/process-runner"    # on a KWOK node: a local process runs it and writes its end

MAX_LABEL_LEN = 63
_VALID = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def safe_label_value(value: str) -> str:
    """A valid label value for ``value``, by the same rule as Airflow's ``make_safe_label_value``.

    Invalid characters are dropped; if anything changed or the value is too long it is cut to 53
    characters and gets ``-<9 hex of md5>``, so different run ids never collide. Airflow labels its pods
    ``run_id=<this>``, so the two labels agree.
    """
    safe = re.sub(r"^[^a-z0-9A-Z]*|[^a-zA-Z0-9_\-\.]|[^a-z0-9A-Z]*$", "", value)
    if len(safe) > MAX_LABEL_LEN or value != safe:
        digest = hashlib.md5(value.encode(), usedforsecurity=False).hexdigest()[:9]
        cut = safe[: MAX_LABEL_LEN - len(digest) - 1]
        # nothing valid left: the digest alone (Airflow would return an invalid "-<digest>" here)
        safe = f"{cut}-{digest}" if cut else digest
    return safe


def is_valid_label_value(value: str) -> bool:
    return len(value) <= MAX_LABEL_LEN and bool(_VALID.match(value))
