"""The FastAPI application behind the "GPU POC" pages: report index, reports, Data Docs; read-only.

Routes (relative to where it is mounted, ``/gpupoc`` in Airflow):
``/`` index, ``/api/reports`` the same as JSON, ``/reports/{id}/`` one report (links to the Data Docs and
evidence files rewritten to the routes below), ``/reports/{id}/{file}``, ``/data-docs/{path}``,
``/evidence/{dag}/{run}/{tables|validation|manifest.json}``, ``/runs/{dag}/{run}`` what one DAG run left
(the DAG run tab). Only GET; nothing outside those directories.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Awaitable, Callable
from urllib.parse import quote

from fastapi import Depends, FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape

from gpupoc.exceptions import GpupocError
from gpupoc.ui.datadocs import list_suites
from gpupoc.ui.files import Refused, evidence_allowed, media_type, relative_within, safe_file
from gpupoc.ui.locations import UiPaths, resolve_paths
from gpupoc.ui.comparisons import comparison_path, list_comparisons
from gpupoc.ui.reports import ROOT_REPORT_ID, list_reports, report_path
from gpupoc.ui.runs import REPORT_DAG, report_for_run, run_view

HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin", "Cache-Control": "no-cache"}
_LINK = re.compile(r'(?P<attr>\b(?:href|src))="(?P<url>[^"]*)"')
_BODY = re.compile(r"<body[^>]*>", re.IGNORECASE)
_NAV = ('<div id="gpupoc-nav" style="font:14px system-ui,sans-serif;padding:6px 12px;background:#f6f8fa;'
        'border-bottom:1px solid #d0d7de"><a href="../../">&larr; All reports</a> &middot; '
        '<a href="summary.html">Summary</a> &middot; <a href="report.md">Markdown</a> &middot; '
        '<a href="report.json">JSON</a> &middot; <a href="report.junit.xml">JUnit</a>{pdf}{docs}</div>')

_env = Environment(loader=PackageLoader("gpupoc.ui", "templates"), autoescape=select_autoescape(["j2", "html"]))


class NotAuthenticated(Exception):
    """No valid Airflow session: the browser is sent to the login page, an API client gets 401."""

    def __init__(self, login_url: str, reason: str):
        super().__init__(reason)
        self.login_url = login_url
        self.reason = reason


class NotAuthorized(Exception):
    """A logged-in user without the right to see these pages."""


def _page(template: str, status: int = 200, **ctx) -> HTMLResponse:
    return HTMLResponse(_env.get_template(template).render(**ctx), status_code=status, headers=HEADERS)


def _message(status: int, title: str, message: str, fix: str = "", home: str = "./") -> HTMLResponse:
    return _page("message.html.j2", status, title=title, message=message, fix=fix, home=home)


def _is_relative_link(url: str) -> bool:
    return bool(url) and not url.startswith(("#", "/", "?")) and not re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:", url)


def rewrite_report_links(text: str, run_dir: Path, paths: UiPaths, serve_evidence: bool = True) -> str:
    """Point the report's relative links that leave its directory at the Data Docs and evidence routes.

    The page is served at ``reports/{id}/`` so ``../../`` is the application's root.
    """

    def repl(m: re.Match) -> str:
        url = html.unescape(m.group("url"))
        if not _is_relative_link(url):
            return m.group(0)
        target, sep, frag = url.partition("#")
        if relative_within(target, run_dir, run_dir) is not None:
            return m.group(0)
        rel = relative_within(target, run_dir, paths.data_docs_dir)
        if rel is not None:
            new = "../../data-docs/" + quote(rel)
        else:
            rel = relative_within(target, run_dir, paths.evidence_root)
            if rel is None or not serve_evidence or not evidence_allowed(rel):
                return m.group(0)
            new = "../../evidence/" + quote(rel)
        return f'{m.group("attr")}="{html.escape(new + sep + frag, quote=True)}"'

    return _LINK.sub(repl, text)


def _file(path: Path) -> FileResponse:
    headers = dict(HEADERS)
    if path.suffix.lower() == ".parquet":
        headers["Content-Disposition"] = f'attachment; filename="{path.name}"'
    return FileResponse(path, media_type=media_type(path), headers=headers)


def create_app(paths: Callable[[], UiPaths] = resolve_paths,
               authenticate: Callable[[Request], Awaitable[object]] | None = None,
               serve_evidence: bool = True) -> FastAPI:
    """The application; ``authenticate`` (a FastAPI dependency) guards every route when given."""
    deps = [Depends(authenticate)] if authenticate else []
    app = FastAPI(title="GPU POC reports", docs_url=None, redoc_url=None, openapi_url=None, dependencies=deps)
    for register in REGISTRATIONS:
        register(app, paths, serve_evidence)
    return app


def _errors(app: FastAPI, paths: Callable[[], UiPaths], serve_evidence: bool) -> None:
    """Each refusal as a page (or a 401 for an API client) saying what failed and the fix."""

    @app.exception_handler(NotAuthenticated)
    async def _unauthenticated(request: Request, exc: NotAuthenticated) -> Response:
        if "text/html" in request.headers.get("accept", ""):
            return RedirectResponse(exc.login_url, status_code=302)
        return JSONResponse({"detail": f"not authenticated: {exc.reason}; log in at {exc.login_url}"}, 401)

    @app.exception_handler(NotAuthorized)
    async def _forbidden(request: Request, exc: NotAuthorized) -> Response:
        return _message(403, "Not allowed", str(exc), "ask an Airflow admin for access to the website views")

    @app.exception_handler(GpupocError)
    async def _config(request: Request, exc: GpupocError) -> Response:
        return _message(503, "Report location unknown", str(exc),
                        "set GPUPOC_PLAN to the POC plan or GPUPOC_EVIDENCE_ROOT to the evidence directory "
                        "in the api-server's environment")

    @app.exception_handler(Refused)
    async def _refused(request: Request, exc: Refused) -> Response:
        return _message(403, "Refused", f"refused: {exc}", "only report, Data Docs and evidence files are served")


def _index(app: FastAPI, paths: Callable[[], UiPaths], serve_evidence: bool) -> None:
    """``/``: every report, comparison and suite; ``/api/reports``: the same as JSON."""

    @app.get("/", response_class=HTMLResponse)
    async def index(request: Request) -> Response:
        if not request.url.path.endswith("/"):
            return RedirectResponse(request.url.path + "/", status_code=307)
        p = paths()
        return _page("index.html.j2", paths=p, reports=list_reports(p.report_dir),
                     comparisons=list_comparisons(p.comparisons),
                     data_docs=(p.data_docs_dir / "index.html").is_file(), suites=list_suites(p.data_docs_dir))

    @app.get("/api/reports")
    async def reports_json() -> JSONResponse:
        p = paths()
        return JSONResponse({"report_dir": str(p.report_dir),
                             "data_docs": (p.data_docs_dir / "index.html").is_file(),
                             "reports": [e.summary() for e in list_reports(p.report_dir)],
                             "comparisons": [e.summary() for e in list_comparisons(p.comparisons)],
                             "suites": [{"name": s.name, "page": s.page, "latest": s.latest}
                                        for s in list_suites(p.data_docs_dir)]}, headers=HEADERS)


def _comparisons(app: FastAPI, paths: Callable[[], UiPaths], serve_evidence: bool) -> None:
    """``/comparisons/{id}/``: a comparison's page and its candidates' reports."""

    @app.get("/comparisons/{cid}/{rel:path}")
    async def comparison_file(cid: str, rel: str) -> Response:
        """A comparison's page and files (its candidates' own reports under platforms/)."""
        base = comparison_path(paths().comparisons, cid)
        try:
            return _file(safe_file(base, rel or "comparison.html"))
        except FileNotFoundError:
            return _message(404, "Not found", f"comparison {cid!r} has no file {rel or 'comparison.html'!r}",
                            home="../" * (rel.count("/") + 2))


def _reports(app: FastAPI, paths: Callable[[], UiPaths], serve_evidence: bool) -> None:
    """``/reports/latest/``, ``/reports/{id}/`` (its links rewritten to the routes here) and its files."""

    @app.get("/reports/latest/")
    async def latest() -> Response:
        p = paths()
        entries = list_reports(p.report_dir)
        if not entries:
            return _message(404, "No report yet", f"no report under {p.report_dir}",
                            "trigger the poc_report DAG or run `gpupoc report <evidence root>`", home="../../")
        return RedirectResponse(f"../{quote(entries[0].run_id)}/", status_code=307)

    @app.get("/reports/{run_id}")
    async def report_noslash(run_id: str) -> Response:
        return RedirectResponse(f"{quote(run_id)}/", status_code=307)

    @app.get("/reports/{run_id}/", response_class=HTMLResponse)
    async def report(run_id: str) -> Response:
        p = paths()
        run_dir = report_path(p.report_dir, run_id)
        page = run_dir / "report.html"
        if not page.is_file():
            return _missing_report(p, run_id)
        text = rewrite_report_links(page.read_text(encoding="utf-8"), run_dir.resolve(), p, serve_evidence)
        has_docs = (p.data_docs_dir / "index.html").is_file()
        nav = _NAV.format(docs=' &middot; <a href="../../data-docs/">Data Docs</a>' if has_docs else "",
                          pdf=' &middot; <a href="report.pdf">PDF</a>' if (run_dir / "report.pdf").is_file() else "")
        text, n = _BODY.subn(lambda m: m.group(0) + nav, text, count=1)
        return HTMLResponse(text if n else nav + text, headers=HEADERS)

    @app.get("/reports/{run_id}/{rel:path}")
    async def report_file(run_id: str, rel: str) -> Response:
        p = paths()
        run_dir = report_path(p.report_dir, run_id)
        if not run_dir.is_dir():
            return _missing_report(p, run_id)
        if rel in ("", "report.html"):
            return RedirectResponse("./", status_code=307)
        try:
            return _file(safe_file(run_dir, rel))
        except FileNotFoundError:
            return _message(404, "Not found", f"report {run_id!r} has no file {rel!r}",
                            home="../" * (rel.count("/") + 2))


def _runs(app: FastAPI, paths: Callable[[], UiPaths], serve_evidence: bool) -> None:
    """``/runs/{dag}/{run}``: what one DAG run left (the DAG run tab)."""

    @app.get("/runs/{dag_id}/{run_id}")
    async def run_page(dag_id: str, run_id: str) -> Response:
        p = paths()
        if dag_id == REPORT_DAG:
            name = report_for_run(p, run_id)
            if name is None:
                return _message(404, "No report for this run yet", f"run {run_id!r} of {dag_id} wrote no report "
                                f"under {p.report_dir}", "the report appears when the run's build task succeeds",
                                home="../../")
            return RedirectResponse(f"../../reports/{quote(name)}/", status_code=307)
        view = run_view(p, dag_id, run_id)
        if view is None:
            return _message(404, "No evidence for this run", f"run {run_id!r} of {dag_id} has no evidence "
                            f"under {p.evidence_root}", "a test-class DAG writes it in its collect task; other "
                            "DAGs write none", home="../../")
        return _page("run.html.j2", run=view, home="../../")


def _data_docs(app: FastAPI, paths: Callable[[], UiPaths], serve_evidence: bool) -> None:
    """``/data-docs/``: the Great Expectations site."""

    @app.get("/data-docs")
    async def data_docs_noslash() -> Response:
        return RedirectResponse("data-docs/", status_code=307)

    @app.get("/data-docs/{rel:path}")
    async def data_docs(rel: str) -> Response:
        p = paths()
        if not (p.data_docs_dir / "index.html").is_file():
            return _message(404, "No Data Docs yet", f"no Data Docs site at {p.data_docs_dir}",
                            "the site is built by the validation task of any test-class DAG", home=_home(rel))
        try:
            return _file(safe_file(p.data_docs_dir, rel))
        except FileNotFoundError:
            return _message(404, "Not found", f"the Data Docs site has no page {rel!r}", home=_home(rel))


def _evidence(app: FastAPI, paths: Callable[[], UiPaths], serve_evidence: bool) -> None:
    """A run's manifest, tables and validation results, when ``serve_evidence``; nothing else."""

    @app.get("/evidence/{rel:path}")
    async def evidence(rel: str) -> Response:
        p = paths()
        if not serve_evidence or not evidence_allowed(rel):
            raise Refused(f"path {rel!r}: only a run's manifest.json, tables/ and validation/*.json are served")
        try:
            return _file(safe_file(p.evidence_root, rel))
        except FileNotFoundError:
            return _message(404, "Not found", f"no evidence file {rel!r}", home=_home(rel))


# The application's parts, registered in this order (``/reports/latest/`` before ``/reports/{run_id}/``).
REGISTRATIONS: tuple[Callable[[FastAPI, Callable[[], UiPaths], bool], None], ...] = (
    _errors, _index, _comparisons, _reports, _runs, _data_docs, _evidence)


def _home(rel: str) -> str:
    """Relative link back to the index from ``<route>/<rel>``."""
    return "../" * (rel.count("/") + 1)


def _missing_report(p: UiPaths, run_id: str) -> HTMLResponse:
    known = [e.run_id for e in list_reports(p.report_dir)][:10]
    hint = f"known reports (newest first): {', '.join(known)}" if known else \
        "no report has been written yet: trigger the poc_report DAG or run `gpupoc report <evidence root>`"
    name = "(report directory)" if run_id == ROOT_REPORT_ID else repr(run_id)
    return _message(404, "Report not found", f"report {name} not found under {p.report_dir}", hint, home="../../")
