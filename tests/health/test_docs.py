"""The documentation: the site builds strictly (no broken link, no page left out of the nav), its option reference
is the one the command line declares, and the README stays a front page that links every page."""

from __future__ import annotations

import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _tool(name: str) -> str:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else (shutil.which(name) or name)


def test_the_site_builds_strictly(tmp_path):
    result = subprocess.run([_tool("mkdocs"), "build", "--strict", "-d", str(tmp_path / "site")], cwd=ROOT,
                            capture_output=True, text=True, timeout=120, env={"NO_MKDOCS_2_WARNING": "1",
                                                                              "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "site" / "mjlab" / "index.html").is_file()
    assert (tmp_path / "site" / "reference" / "options" / "index.html").is_file()


def test_the_option_reference_is_generated_from_the_options():
    result = subprocess.run([sys.executable, str(DOCS / "gen_reference.py"), "--check"], capture_output=True,
                            timeout=60)
    assert result.returncode == 0, "docs/reference/ is stale: run python docs/gen_reference.py"
    from tui_eval.config.spec import RUN_OPTIONS

    page = (DOCS / "reference" / "options.md").read_text()
    assert all(f"`{flag}`" in page for option in RUN_OPTIONS for flag in option.flags)
    from tui_eval import api

    reference = (DOCS / "reference" / "api.md").read_text()
    assert all(f"| `{keyword}` |" in reference for keyword in api.run_keywords())
    assert all(f"`api.{name}(" in reference for name in ("evaluate", "diagnose", "sweep", "assert_same_policy"))


def test_the_readme_is_a_front_page_that_links_every_page():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 350
    linked = set(re.findall(r"\]\(docs/([^)#]+)\)", readme))
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert pages - linked == set(), f"pages the README does not link: {sorted(pages - linked)}"
    # the two set-up commands, as .ci/run runs the second
    assert readme.count("python3 -m venv .venv && . .venv/bin/activate && pip install") == 2


async def test_the_readmes_picture_is_made_by_its_script(tmp_path):
    """docs/make_screenshot.py runs the live app on the CartPole demo and saves Textual's SVG screenshot. Its
    `screenshot` runs in this process: the Ray and RLlib it starts are the ones the integration tests use next
    (a process of its own would start and import them once more)."""
    script = runpy.run_path(str(DOCS / "make_screenshot.py"), run_name="make_screenshot")
    out = await script["screenshot"](tmp_path / "app.svg")
    svg = out.read_text()
    assert svg.startswith("<svg") and "DIFFER" in svg and "connectors" in svg and "DONE" in svg
    # run as a command, it writes the picture the README shows
    assert script["OUT"] == DOCS / "assets" / "app.svg" and "](docs/assets/app.svg)" in (ROOT / "README.md").read_text()
