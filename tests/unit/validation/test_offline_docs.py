"""The Data Docs site GX builds loads nothing from outside itself once validation has run."""

import json
import re
import shutil
from pathlib import Path

import pytest

from gpupoc.exceptions import ToolMissing
from gpupoc.validation import data_docs_index, validate_run
from gpupoc.validation import synthetic as syn
from gpupoc.validation.offline_docs import (ASSETS_DIR, OFFLINE_DIR, AssetMismatch, external_resources,
                                            load_asset_map, make_site_offline)

_LOCAL_REF = re.compile(r'(?:src|href)="(?P<url>[^"#?]+)"|url\("(?P<css>[^"]+)"\)')


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A real GX site: one validated tenant-isolation run (three suites)."""
    if not (ASSETS_DIR / "node_modules").is_dir():
        pytest.fail(f"{ASSETS_DIR / 'node_modules'} missing: run `make docs-assets` first")
    root = tmp_path_factory.mktemp("evidence")
    validate_run(syn.write_run(root, "tenant_isolation", "scheduled__1", syn.good_tables("tenant_isolation")))
    return data_docs_index(root).parent


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_no_page_or_stylesheet_loads_anything_from_outside_the_site(site):
    pages = _pages(site)
    assert len(pages) >= 7, f"expected the index, 3 suite pages and 3 validation pages, got {len(pages)}"
    for page in pages:
        assert external_resources(page.read_text(encoding="utf-8")) == [], f"{page} still loads external URLs"
    for css in (site / "static" / "styles").glob("*.css"):
        assert "url('http" not in css.read_text() and 'url("http' not in css.read_text(), css


def test_every_local_reference_of_the_pages_resolves_inside_a_moved_copy(site, tmp_path):
    moved = tmp_path / "bundle" / "site"
    shutil.copytree(site, moved)
    pages = _pages(moved)
    checked = 0
    for page in pages:
        for m in _LOCAL_REF.finditer(page.read_text(encoding="utf-8")):
            url = m.group("url") or m.group("css")
            if not url or re.match(r"^[a-z]+:|^#|^/", url) or OFFLINE_DIR not in url:
                continue
            target = (page.parent / url).resolve()
            assert moved.resolve() in target.parents, f"{page.name}: {url} leaves the site"
            assert target.is_file(), f"{page.relative_to(moved)}: {url} missing"
            checked += 1
    assert checked >= 15 * len(pages), f"only {checked} references to local assets in {len(pages)} pages"


def test_font_awesome_loads_its_webfonts_from_the_site(site):
    css = next((site / OFFLINE_DIR).rglob("fontawesome-free@*/css/all.min.css"))
    fonts = re.findall(r"url\((\.\./webfonts/[^)]+)\)", css.read_text())
    assert fonts, "Font Awesome CSS references no webfonts"
    for font in fonts:
        assert (css.parent / font).is_file(), f"{font} not copied next to {css}"


def test_scripts_pinned_by_hash_are_the_same_bytes_and_lose_only_their_cdn_attributes(site):
    index = (site / "index.html").read_text()
    assert "integrity=" not in index and "crossorigin=" not in index
    assert f'src="{OFFLINE_DIR}/popper.js@1.12.9/dist/umd/popper.min.js"' in index
    assert f'src="{OFFLINE_DIR}/bootstrap@4.3.1/dist/js/bootstrap.min.js"' in index


def test_a_tampered_local_copy_is_refused_by_the_pages_integrity_hash(site, tmp_path):
    popper = "https://cdnjs.cloudflare.com/ajax/libs/popper.js/1.12.9/umd/popper.min.js"
    page = tmp_path / "site" / "index.html"
    page.parent.mkdir()
    page.write_text(f'<html><head><script src="{popper}" integrity="sha384-{"A" * 64}" '
                    'crossorigin="anonymous"></script></head></html>')
    with pytest.raises(AssetMismatch, match=r"popper\.min\.js.*pins sha384-AAAA"):
        make_site_offline(page.parent)


def test_the_dark_mode_logo_without_a_source_is_dropped_with_a_note(site):
    (dropped,) = load_asset_map()["dropped"]
    styles = (site / "static" / "styles" / "data_docs_default_styles.css").read_text()
    assert dropped not in styles and "none /* offline: full_logo_dark.png dropped" in styles
    notice = (site / OFFLINE_DIR / "ASSETS.md").read_text()
    assert dropped in notice.split("## Dropped")[1]
    assert "npm bootstrap@4.3.1" in notice and "MIT" in notice


def test_the_logo_comes_from_gx_own_copy_without_its_tracking_query(site):
    index = (site / "index.html").read_text()
    assert 'src="static/images/logo-long.png"' in index and "dataContextId" not in index


def test_a_second_pass_changes_nothing(site):
    before = {p: p.read_text() for p in _pages(site)}
    res = make_site_offline(site)
    assert res.rewritten == [] and res.unknown == []
    assert {p: p.read_text() for p in _pages(site)} == before


def test_an_unmapped_external_script_is_reported_and_left(tmp_path):
    page = tmp_path / "site" / "index.html"
    page.parent.mkdir()
    page.write_text('<script src="https://cdn.example.invalid/x.js"></script><a href="https://example.invalid">x</a>')
    res = make_site_offline(page.parent)
    assert res.unknown == ["https://cdn.example.invalid/x.js"], "plain links are not loads; the script is"


def test_missing_npm_packages_name_the_install_command(tmp_path):
    for name in ("assets.json", "package.json"):
        shutil.copy(ASSETS_DIR / name, tmp_path / name)
    with pytest.raises(ToolMissing, match=r"node_modules is missing.*make docs-assets"):
        make_site_offline(tmp_path / "site", assets_dir=tmp_path)


def test_installed_version_other_than_the_pin_is_refused(tmp_path):
    shutil.copy(ASSETS_DIR / "assets.json", tmp_path / "assets.json")
    pkg = json.loads((ASSETS_DIR / "package.json").read_text())
    pkg["dependencies"]["jquery"] = "3.7.0"
    (tmp_path / "package.json").write_text(json.dumps(pkg))
    (tmp_path / "node_modules").symlink_to(ASSETS_DIR / "node_modules")
    with pytest.raises(ToolMissing, match=r"jquery: installed 3\.7\.1, package\.json pins 3\.7\.0"):
        make_site_offline(tmp_path / "site", assets_dir=tmp_path)
