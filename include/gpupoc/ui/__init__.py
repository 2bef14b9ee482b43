"""Read-only web pages of the POC inside the Airflow UI: the go-live reports and the Data Docs site.

``locations`` finds the directories (POC plan or ``GPUPOC_EVIDENCE_ROOT``), ``files`` resolves request
paths without ever leaving them, ``reports`` lists the reports, ``app`` is the FastAPI application the
Airflow plugin (``plugins/gpupoc_ui.py``) mounts under ``/gpupoc``.
"""
