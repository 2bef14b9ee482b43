"""``gpupoc airflow up`` refuses a topology its database or broker cannot carry before it starts anything."""

from __future__ import annotations

from gpupoc.cli import main


def test_celery_without_a_database_url_is_refused_naming_the_option(tmp_path, capsys):
    code = main(["airflow", "--home", str(tmp_path / "af"), "up", "--executor", "CeleryExecutor",
                 "--broker-url", "redis://127.0.0.1:6379/0"])
    err = capsys.readouterr().err
    assert code == 2 and "--database-url: the CeleryExecutor needs PostgreSQL" in err, err
    assert not (tmp_path / "af").exists(), "nothing was written or started"


def test_two_schedulers_on_sqlite_are_refused_naming_the_option(tmp_path, capsys):
    code = main(["airflow", "--home", str(tmp_path / "af"), "up", "--schedulers", "2"])
    err = capsys.readouterr().err
    assert code == 2 and "--schedulers: SQLite allows one scheduler, got 2" in err, err
