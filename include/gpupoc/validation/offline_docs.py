"""Make the Data Docs site self-contained: every script, style, font and image it loads comes from the site.

Great Expectations writes pages that load Bootstrap, Font Awesome, jQuery, bootstrap-table, Vega and its logo
from public CDNs, so in a room without internet they render unstyled. After the site is built, each such URL
(``docs_assets/assets.json``) is rewritten to a relative path under ``static/offline/`` and the file is copied
there from the npm packages of ``docs_assets/package.json`` (installed by ``scripts/install-docs-assets.sh``)
or from what GX itself copied into the site. A copied or bundled site, and the Airflow UI's Data Docs pages
that serve the site's files, need no network. ``static/offline/ASSETS.md`` lists every copy with its version,
source and licence, and every URL dropped for want of an installable source.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from gpupoc.exceptions import GpupocError, ToolMissing

ASSETS_DIR = Path(__file__).parent / "docs_assets"
OFFLINE_DIR = "static/offline"
INSTALL_FIX = "run `make docs-assets` (bash scripts/install-docs-assets.sh: npm ci from the lock file)"

_TAG = re.compile(r"<(?:script|link|img)\b[^>]*>", re.IGNORECASE)
_URL_ATTR = re.compile(r'\b(?P<attr>src|href)\s*=\s*"(?P<url>[^"]*)"', re.IGNORECASE)
_SRI_ATTRS = re.compile(r'\s+(?:integrity|crossorigin)\s*=\s*"[^"]*"', re.IGNORECASE)
_INTEGRITY = re.compile(r'\bintegrity\s*=\s*"(?P<value>[^"]*)"', re.IGNORECASE)
_CSS_URL = re.compile(r"url\(\s*(?P<q>['\"]?)(?P<url>[^'\")\s]+)(?P=q)\s*\)")
_CSS_IMPORT = re.compile(r"@import\s+(?:url\()?\s*['\"]?(?P<url>https?://[^'\")\s;]+)")
_STYLE_BLOCK = re.compile(r"(<style\b[^>]*>)(.*?)(</style>)", re.IGNORECASE | re.DOTALL)
_EXTERNAL = re.compile(r"^(?:https?:)?//", re.IGNORECASE)


class AssetMismatch(GpupocError):
    """A local copy differs from what a page pins with its ``integrity`` hash."""


@dataclass(frozen=True)
class Package:
    """One installed npm package: its directory under node_modules, name, version and licence."""

    directory: str
    name: str
    version: str
    licence: str
    licence_file: str | None

    @property
    def target(self) -> str:
        """Where its files go inside the site: ``static/offline/<name>@<version>``."""
        return f"{OFFLINE_DIR}/{self.name}@{self.version}"


@dataclass
class OfflineResult:
    """What one pass over the site did."""

    rewritten: list[str] = field(default_factory=list)  # site-relative pages and stylesheets changed
    assets: list[str] = field(default_factory=list)  # site-relative files under static/offline
    dropped: list[str] = field(default_factory=list)  # URLs removed for want of a local copy
    unknown: list[str] = field(default_factory=list)  # external resource URLs left as they were


@lru_cache(maxsize=4)
def load_asset_map(assets_dir: Path = ASSETS_DIR) -> dict[str, dict[str, str]]:
    """``{"npm": {url: node_modules path}, "site": {url: site path}, "dropped": {url: why}}``."""
    data = json.loads((assets_dir / "assets.json").read_text(encoding="utf-8"))
    return {kind: dict(data[kind]["files"]) for kind in ("npm", "site", "dropped")}


def _package_dir(node_path: str) -> str:
    parts = node_path.split("/")
    return "/".join(parts[:2]) if parts[0].startswith("@") else parts[0]


def installed_packages(assets_dir: Path = ASSETS_DIR) -> dict[str, Package]:
    """The packages the asset map uses, checked against the versions ``package.json`` pins."""
    modules = assets_dir / "node_modules"
    if not modules.is_dir():
        raise ToolMissing(f"Data Docs assets not installed: {modules} is missing", INSTALL_FIX)
    pins = json.loads((assets_dir / "package.json").read_text(encoding="utf-8"))["dependencies"]
    out = {}
    for directory in sorted({_package_dir(p) for p in load_asset_map(assets_dir)["npm"].values()}):
        manifest = modules / directory / "package.json"
        if not manifest.is_file():
            raise ToolMissing(f"Data Docs asset package {directory} not installed ({manifest} missing)", INSTALL_FIX)
        meta = json.loads(manifest.read_text(encoding="utf-8"))
        pinned = str(pins.get(directory, "")).rsplit("@", 1)[-1]
        if meta.get("version") != pinned:
            raise ToolMissing(f"Data Docs asset package {directory}: installed {meta.get('version')}, "
                              f"package.json pins {pinned or 'nothing'}", INSTALL_FIX)
        licence_files = sorted(p.name for p in (modules / directory).iterdir()
                               if p.is_file() and p.name.upper().startswith(("LICENSE", "LICENCE")))
        out[directory] = Package(directory, meta["name"], meta["version"], str(meta.get("license", "unknown")),
                                 licence_files[0] if licence_files else None)
    return out


def _copy(src: Path, dst: Path) -> None:
    """Copy unless an identical copy (size and modification time) is already there."""
    if dst.is_file():
        s, d = src.stat(), dst.stat()
        if s.st_size == d.st_size and int(s.st_mtime) == int(d.st_mtime):
            return
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)


def _css_dependencies(css: Path) -> list[str]:
    """Relative files a stylesheet loads (fonts, images), as paths relative to the stylesheet."""
    deps = []
    for m in _CSS_URL.finditer(css.read_text(encoding="utf-8", errors="replace")):
        url = m.group("url").split("#", 1)[0].split("?", 1)[0]
        if url and not url.startswith(("data:", "/")) and not _EXTERNAL.match(url) and url not in deps:
            deps.append(url)
    return deps


def install_assets(site_dir: Path, assets_dir: Path = ASSETS_DIR) -> tuple[dict[str, str], list[str]]:
    """Copy every mapped npm file (and the fonts its CSS loads, and its licence) into the site.

    Returns (URL -> site-relative path, site-relative paths of every copied file).
    """
    packages = installed_packages(assets_dir)
    modules = assets_dir / "node_modules"
    local, files = {}, []
    for url, node_path in load_asset_map(assets_dir)["npm"].items():
        pkg = packages[_package_dir(node_path)]
        inner = node_path[len(pkg.directory) + 1:]
        src = modules / node_path
        if not src.is_file():
            raise ToolMissing(f"Data Docs asset {url}: {src} missing from {pkg.name}@{pkg.version}", INSTALL_FIX)
        pairs = [(src, f"{pkg.target}/{inner}")]
        if src.suffix == ".css":
            for dep in _css_dependencies(src):
                dep_inner = os.path.normpath(os.path.join(os.path.dirname(inner), dep))
                pairs.append((modules / pkg.directory / dep_inner, f"{pkg.target}/{dep_inner}"))
        if pkg.licence_file:
            pairs.append((modules / pkg.directory / pkg.licence_file, f"{pkg.target}/{pkg.licence_file}"))
        for s, rel in pairs:
            if not s.is_file():
                raise ToolMissing(f"Data Docs asset {url}: {s} (loaded by {node_path}) missing", INSTALL_FIX)
            _copy(s, site_dir / rel)
            if rel not in files:
                files.append(rel)
        local[url] = f"{pkg.target}/{inner}"
    _write_notice(site_dir, packages, local, load_asset_map(assets_dir))
    return local, files


def _write_notice(site_dir: Path, packages: dict[str, Package], local: dict[str, str],
                  amap: dict[str, dict[str, str]]) -> None:
    lines = ["# Data Docs assets served from this site", "",
             "Each URL the Great Expectations pages load from outside the site, and the local copy used instead.",
             "", "| URL | local copy | package | licence |", "|---|---|---|---|"]
    for url, rel in local.items():
        pkg = packages[_package_dir(amap["npm"][url])]
        lic = f"{pkg.licence}; {pkg.licence_file or 'package.json'}"
        lines.append(f"| {url} | {rel} | npm {pkg.name}@{pkg.version} | {lic} |")
    for url, rel in amap["site"].items():
        lines.append(f"| {url} | {rel} | great_expectations (copied into the site by GX) | Apache-2.0 |")
    lines += ["", "## Dropped (no installable source)", ""]
    lines += [f"- {url}: {why}" for url, why in amap["dropped"].items()]
    notice = site_dir / OFFLINE_DIR / "ASSETS.md"
    text = "\n".join(lines) + "\n"
    if not notice.is_file() or notice.read_text(encoding="utf-8") != text:
        notice.parent.mkdir(parents=True, exist_ok=True)
        notice.write_text(text, encoding="utf-8")


def _strip_query(url: str) -> str:
    return url.split("#", 1)[0].split("?", 1)[0]


class _Rewriter:
    """Rewrites one file's external URLs to paths relative to that file."""

    def __init__(self, site_dir: Path, local: dict[str, str], amap: dict[str, dict[str, str]],
                 result: OfflineResult):
        self.site_dir = site_dir
        self.local = {**local, **amap["site"]}
        self.dropped = amap["dropped"]
        self.result = result

    def _relative(self, site_rel: str, file_dir: Path) -> str:
        return os.path.relpath(self.site_dir / site_rel, file_dir).replace(os.sep, "/")

    def _local_for(self, url: str) -> str | None:
        return self.local.get(url) or self.local.get(_strip_query(url))

    def _tag(self, tag: str, file_dir: Path) -> str:
        m = _URL_ATTR.search(tag)
        if not m or not _EXTERNAL.match(m.group("url")):
            return tag
        url = m.group("url").replace("&amp;", "&")
        site_rel = self._local_for(url)
        if site_rel is None:
            self._unknown(url)
            return tag
        integrity = _INTEGRITY.search(tag)
        if integrity:
            _check_integrity(url, self.site_dir / site_rel, integrity.group("value"))
        new = f'{m.group("attr")}="{self._relative(site_rel, file_dir)}"'
        return _SRI_ATTRS.sub("", tag[:m.start()] + new + tag[m.end():])

    def css(self, text: str, file_dir: Path) -> str:
        def repl(m: re.Match) -> str:
            url = m.group("url")
            if not _EXTERNAL.match(url):
                return m.group(0)
            site_rel = self._local_for(url)
            if site_rel is not None:
                return f'url("{self._relative(site_rel, file_dir)}")'
            why = self.dropped.get(_strip_query(url))
            if why is not None:
                if url not in self.result.dropped:
                    self.result.dropped.append(url)
                return f"none /* offline: {os.path.basename(_strip_query(url))} dropped, see {OFFLINE_DIR}/ASSETS.md */"
            self._unknown(url)
            return m.group(0)

        for imp in _CSS_IMPORT.finditer(text):
            self._unknown(imp.group("url"))
        return _CSS_URL.sub(repl, text)

    def html(self, text: str, file_dir: Path) -> str:
        text = _TAG.sub(lambda m: self._tag(m.group(0), file_dir), text)
        return _STYLE_BLOCK.sub(lambda m: m.group(1) + self.css(m.group(2), file_dir) + m.group(3), text)

    def _unknown(self, url: str) -> None:
        if url not in self.result.unknown:
            self.result.unknown.append(url)


def _check_integrity(url: str, path: Path, value: str) -> None:
    """The page pins the CDN file's hash: the local copy must be the very same bytes."""
    for token in value.split():
        algo, _, expected = token.partition("-")
        if algo not in ("sha256", "sha384", "sha512"):
            continue
        actual = base64.b64encode(hashlib.new(algo, path.read_bytes()).digest()).decode()
        if actual != expected:
            raise AssetMismatch(f"{url}: the local copy {path} has {algo}-{actual}, the page pins {token}; "
                                f"{INSTALL_FIX} or correct docs_assets/assets.json")


def make_site_offline(site_dir: str | Path, assets_dir: Path = ASSETS_DIR) -> OfflineResult:
    """Copy the assets into the site and point every page and stylesheet at them. Idempotent.

    Raises ToolMissing when the npm packages are not installed, AssetMismatch when a local copy is not the
    file a page pins by hash.
    """
    site = Path(site_dir)
    result = OfflineResult()
    local, result.assets = install_assets(site, assets_dir)
    rewriter = _Rewriter(site, local, load_asset_map(assets_dir), result)
    offline_root = site / OFFLINE_DIR
    for path in sorted(site.rglob("*")):
        if path.suffix not in (".html", ".css") or offline_root in path.parents or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        new = rewriter.html(text, path.parent) if path.suffix == ".html" else rewriter.css(text, path.parent)
        if new != text:
            path.write_text(new, encoding="utf-8")
            result.rewritten.append(path.relative_to(site).as_posix())
    return result


def external_resources(html: str) -> list[str]:
    """URLs outside the page's site that a page loads as it renders (scripts, styles, images, CSS url()).

    Plain links (``<a href>``) are not loaded and are not listed.
    """
    found = []
    for tag in _TAG.finditer(html):
        m = _URL_ATTR.search(tag.group(0))
        if m and _EXTERNAL.match(m.group("url")):
            found.append(m.group("url"))
    for block in _STYLE_BLOCK.finditer(html):
        found += [m.group("url") for m in _CSS_URL.finditer(block.group(2)) if _EXTERNAL.match(m.group("url"))]
        found += [m.group("url") for m in _CSS_IMPORT.finditer(block.group(2))]
    return found
