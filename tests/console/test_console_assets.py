"""The console's files: what ConsoleSite answers, its CSP, and that the wheel ships them all."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path, PurePosixPath

import pytest

from rcpkit.console import ConsoleSite

ROOT = Path(__file__).parents[2]
STATIC = ROOT / "src" / "rcpkit" / "console" / "static"
SHIPPED = sorted(path for path in STATIC.rglob("*") if path.is_file())


def test_every_file_of_the_console_is_declared_package_data() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = data["package-data"]["rcpkit"]
    for path in SHIPPED:
        name = path.relative_to(ROOT / "src" / "rcpkit").as_posix()
        assert any(_glob_matches(name, pattern) for pattern in patterns), name


def _glob_matches(name: str, pattern: str) -> bool:
    """setuptools' glob: ``*`` stays within one folder (``js/*.mjs`` is not ``js/views/``)."""
    path, glob = PurePosixPath(name), PurePosixPath(pattern)
    return len(path.parts) == len(glob.parts) and path.match(pattern)


def test_no_page_loads_anything_from_elsewhere_or_runs_inline_script() -> None:
    html = (STATIC / "index.html").read_text()
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", html, flags=re.S)
    assert scripts == [""]  # one module, by src, with an empty body
    assert not re.search(r"\son[a-z]+\s*=", html)  # no inline event handlers either
    for path in SHIPPED:
        text = path.read_text()
        outside = re.findall(r"(?:src|href|from|import)\s*=?\s*[\"'](https?:)?//", text)
        assert not outside, path
        assert "innerHTML" not in text and "eval(" not in text, path


@pytest.mark.parametrize(
    "path", ["/ui/../assets.py", "/ui/js/../../assets.py", "/ui/js", "/ui//etc/passwd", "/ui/x"]
)
def test_anything_but_a_shipped_file_is_not_found(path: str) -> None:
    assert ConsoleSite("/rcp").reply("GET", path).status == 404


def test_the_page_the_config_and_the_policy_for_a_remote_endpoint() -> None:
    site = ConsoleSite("https://search.example:8443/rcp", "https://search.example:8443/metrics")
    page = site.reply("GET", "/ui")
    headers = dict(page.headers)
    assert page.status == 200 and page.body.startswith(b"<!doctype html>")
    assert "connect-src 'self' https://search.example:8443;" in headers["content-security-policy"]
    config = json.loads(site.reply("GET", "/ui/config.json").body)
    assert config == {"api": "https://search.example:8443/rcp", "metrics": site.metrics}
    assert site.reply("HEAD", "/ui/").body == b""
    assert site.reply("DELETE", "/ui").status == 405


def test_the_console_leaves_unmarked_exactly_the_stopwords_the_engine_drops() -> None:
    from rcpkit.engine.text import analysis

    source = (STATIC / "js" / "highlight.mjs").read_text()
    listed = re.search(r"STOPWORDS = new Set\(\((.*?)\)\.split", source, re.DOTALL)
    assert listed is not None
    words = "".join(re.findall(r'"([^"]*)"', listed.group(1))).split()
    assert set(words) == analysis._STOPWORDS
