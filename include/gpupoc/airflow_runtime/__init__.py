"""A real Airflow 3 deployment run as local processes under a project-local ``AIRFLOW_HOME``.

``settings`` writes the configuration, ``processes`` starts and stops the components by process id,
``client`` talks to the REST API, ``cli`` exposes ``gpupoc airflow up|down|status|trigger|wait``.
"""
