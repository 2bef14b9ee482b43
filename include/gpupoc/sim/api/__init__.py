"""The simulated cluster's Kubernetes API server (aiohttp); ``app.build_app(state)`` builds it.

Modules: ``app`` (authentication, impersonation, RBAC, dispatch, audit, 500 safety net), ``context``
(request info parsing, helpers), ``registry`` (served resources), ``discovery`` and ``openapi``,
``resources`` (generic CRUD), ``pods`` (admission, graceful delete, eviction, logs), ``watch``,
``reviews`` (access reviews), ``visibility`` (Kueue pending workloads), ``admin`` (node failure, /metrics),
``shapes`` (JSON type checks), ``indexes`` (events by object), ``status`` (Status errors), ``tls``.
"""
