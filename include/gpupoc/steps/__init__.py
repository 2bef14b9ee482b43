"""The steps of a test-class run as plain functions (no Airflow): the DAG's tasks call them.

Each step is a transaction: it derives its paths from (plan, dag id, run id), overwrites what an earlier try
wrote, and returns only paths and small summaries (XCom). Cluster calls go through a ledger, so every action
the pipeline takes is recorded (who, what, when) for the audit-trail class.
"""
