"""The docs build with `mkdocs build --strict`, document every public name, point only at files a user has,
and their first script runs."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from flower.testing import hang_guard
from tests.printed import assert_prints, docs_output

ROOT = Path(__file__).resolve().parent.parent
PUBLIC_MODULES = [
    "flower",
    "flower.events",
    "flower.report",
    "flower.stores",
    "flower.testing",
    "flower.tracing",
]
"""Every name in these modules' `__all__` must have an entry in the API reference."""


# What users read: the guide, the README and changelog, the examples, and every docstring, comment, error
# message and model-facing text of the package (the API reference renders the docstrings).
USER_FACING = [
    "README.md",
    "CHANGELOG.md",
    "mkdocs.yml",
    "docs/**/*.md",
    "examples/**/*.py",
    "flower/**/*.py",
]


FORBIDDEN: list[tuple[str, str]] = [
    # pattern (case-insensitive)                      what a user cannot follow
    (r"\bSPEC(\.md)?\b\s*§|\bSPEC\.md\b", "the project's internal specification"),
    (r"claude-sdk-facts", "the internal file of measured SDK facts"),
    (r"\bfacts\s+(file\s*,?\s*)?§|\bfacts file\b", "a section of the internal facts file"),
    (r"\bpeers\.md\b", "the internal notes on peer systems"),
    (
        r"reference-implementation(\.md)?|\bthe reference implementation\b",
        "internal notes on another implementation",
    ),
    (r"\bSTYLE\.md\b", "the internal style guide"),
    (r"context-economy", 'the original design\'s document (say "the original design")'),
    (r"\bthe seed\b|\bseed's\b|\bseed document\b", "an undefined name for the original design"),
    (r"§\s*\d", "a section number of a document users do not have"),
    (r"(?<![\w.-])/(?:work|root)/", "a path of the machine the project is built on"),
]
"""References to files that do not ship; each row: a regular expression and what it names."""

LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|^\[[^\]]+\]:\s*(\S+)", re.M)
"""A Markdown link's target: `[text](target)` or a reference definition `[name]: target`."""

REPO_PATH = re.compile(
    r"(?<![\w./-])((?:benchmarks|docs|examples|flower|tests|tools)/[\w./-]*\w\.(?:py|md|json))\b"
)
"""A path into the repository named in prose or code (`benchmarks/bench_spill.py`)."""


def user_facing_files() -> list[Path]:
    files = {path for pattern in USER_FACING for path in ROOT.glob(pattern) if path.is_file()}
    return sorted(files)


def dangling_references(path: Path, root: Path = ROOT) -> list[str]:
    """Each reference in `path` to a file a user does not have, as `file:line: what`."""
    found = []
    text = path.read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{path.relative_to(root)}:{number}"
        for pattern, what in FORBIDDEN:
            hit = re.search(pattern, line, re.IGNORECASE)
            if hit:
                found.append(f"{where}: {hit.group(0)!r} names {what}")
        for hit in REPO_PATH.finditer(line):
            if not (root / hit.group(1)).exists():
                found.append(f"{where}: {hit.group(1)!r} is not a file of the repository")
    if path.suffix == ".md":
        for hit in LINK.finditer(text):
            target = hit.group(1) or hit.group(2)
            if re.match(r"[a-z][a-z0-9+.-]*:|#", target):  # a URL, or an anchor on the same page
                continue
            file = target.split("#")[0].split("?")[0]
            if not (path.parent / file).exists():
                number = text.count("\n", 0, hit.start()) + 1
                found.append(f"{path.relative_to(root)}:{number}: link to {target!r}, which does not exist")
    return found


def test_no_reference_to_a_file_users_do_not_have() -> None:
    files = user_facing_files()
    assert len(files) > 50, f"the scan found only {len(files)} files: is USER_FACING still right?"
    found = [problem for path in files for problem in dangling_references(path)]
    assert not found, (
        'references to files that do not ship (describe the source in words instead, e.g. "measured with '
        'CLI 2.1.332" or "in a 10.4-hour run of the original design"):\n' + "\n".join(found)
    )


def test_the_reference_check_catches_what_it_should(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
    page = tmp_path / "docs" / "probe.md"
    page.write_text(
        "See SPEC §8, claude-sdk-facts.md §1 and peers.md §4.3, as the seed says; /work/x.\n"
        "[missing](no-such-page.md) and `benchmarks/no_such_bench.py`; [ok](index.md#home), "
        "[web](https://x.org), `/srv/work/repo`, `docs/index.md`\n",
        encoding="utf-8",
    )

    found = "\n".join(dangling_references(page, root=tmp_path))

    for expected in [
        "SPEC §",
        "claude-sdk-facts",
        "peers.md",
        "the seed",
        "§8",
        "'/work/'",
        "no-such-page.md",
        "no_such_bench.py",
    ]:
        assert expected in found, f"{expected!r} was not reported:\n{found}"
    assert "index.md" not in found and "x.org" not in found and "/srv" not in found, found


def resolve(dotted: str) -> Any:
    """The object a documented id such as `flower.stores.PruningSessionStore.load` names."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise LookupError(dotted)


def documented_ids(site: Path) -> set[str]:
    ids: set[str] = set()
    for page in (site / "api").rglob("*.html"):
        ids.update(re.findall(r'id="(flower(?:\.[\w]+)+)"', page.read_text(encoding="utf-8")))
    return ids


def undocumented(ids: set[str]) -> list[str]:
    """Public names with no entry, counting an entry for the same object under another path."""
    objects = []
    for dotted in ids:
        try:
            objects.append(resolve(dotted))
        except (LookupError, AttributeError):
            continue
    missing = []
    for module_name in PUBLIC_MODULES:
        module: ModuleType = importlib.import_module(module_name)
        for name in module.__all__:
            if f"{module_name}.{name}" in ids:
                continue
            value = getattr(module, name)
            if not any(value is obj for obj in objects):
                missing.append(f"{module_name}.{name}")
    return missing


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once for this module's tests with `mkdocs build --strict`."""
    work = tmp_path_factory.mktemp("docs")
    site = work / "site"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "-q",
            "--strict",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(site),
        ],
        capture_output=True,
        text=True,
        timeout=hang_guard(),
        check=False,
        cwd=work,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # the theme's end-of-life notice: see the README
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    assert not done.stderr.strip(), f"the docs build is not quiet:\n{done.stderr}"  # -q: nothing on success
    return site


def test_the_docs_build_strict_and_document_every_public_name(site: Path) -> None:
    missing = undocumented(documented_ids(site))
    assert not missing, (
        f"public names missing from the API reference: {', '.join(missing)}; add a `::: name` block to a "
        "page of docs/api/ (or its module's block covers it once the name is in the module's __all__)"
    )


def test_the_site_works_offline_with_search_and_an_edit_link(site: Path) -> None:
    remote = re.compile(r"<(?:script|link)\b[^>]*\b(?:src|href)=\"(?:https?:)?//[^\"]+\"[^>]*>", re.I)
    loaded = {
        f"{page.relative_to(site)}: {tag}"
        for page in site.rglob("*.html")
        for tag in remote.findall(page.read_text(encoding="utf-8"))
        if "stylesheet" in tag or tag.lower().startswith("<script")
    }
    assert not loaded, "pages load a script or stylesheet from another host:\n" + "\n".join(sorted(loaded))

    home = (site / "index.html").read_text(encoding="utf-8")
    # Pygments, at build time: the tokens are already spans with their classes in the page
    assert '<span class="kn">from</span>' in home, "the home page's code is not highlighted by Pygments"
    assert "/edit/main/docs/index.md" in home, "the edit link does not point at the main branch"
    assert (site / "search" / "search_index.json").is_file(), "the site has no search index"


HTML_LINK = re.compile(r'\b(?:href|src)="([^"]*)"')


def broken_links(site: Path) -> list[str]:
    """Every link or asset of the built pages that a browser could not open from files (`file://`): a
    relative target that is not a file (a directory, or nothing), or a root-absolute one. 404.html is left
    out: a server shows it for a missing address at any depth, so its links start at the site's root."""
    found = []
    for page in sorted(site.rglob("*.html")):
        if page.name == "404.html" and page.parent == site:
            continue
        for url in HTML_LINK.findall(page.read_text(encoding="utf-8")):
            parts = urlsplit(url)
            if parts.scheme or url.startswith(("#", "//")):
                continue
            where = f"{page.relative_to(site)}: {url}"
            if url.startswith("/"):
                found.append(f"{where} (root-absolute)")
            elif parts.path and not (page.parent / unquote(parts.path)).is_file():
                found.append(f"{where} (not a file)")
    return found


def test_the_built_sites_links_open_from_files(site: Path) -> None:
    found = broken_links(site)
    assert not found, "links of the built site that do not open from files:\n" + "\n".join(found[:40])
    assert (site / "getting-started.html").is_file()


def test_the_link_check_catches_what_it_should(tmp_path: Path) -> None:
    (tmp_path / "guide").mkdir()
    (tmp_path / "index.html").write_text(
        '<a href="guide/">dir</a><a href="gone.html#x">gone</a><img src="/logo.png">'
        '<a href="index.html#top">ok</a><a href="https://x.org/">web</a><a href="#local">anchor</a>'
    )
    (tmp_path / "404.html").write_text('<a href="/index.html">served at any depth</a>')
    assert broken_links(tmp_path) == [
        "index.html: guide/ (not a file)",
        "index.html: gone.html#x (not a file)",
        "index.html: /logo.png (root-absolute)",
    ]


@pytest.mark.cli
def test_the_getting_started_script_runs(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- docs-test: first\.py -->\n```python\n(.*?)```", page, re.S)
    assert found, (
        "docs/getting-started.md lost its tested script (the block after <!-- docs-test: first.py -->)"
    )
    script = tmp_path / "first.py"
    script.write_text(found.group(1), encoding="utf-8")

    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=hang_guard(),
        check=False,
        cwd=tmp_path,
    )

    assert done.returncode == 0, f"the getting-started script failed:\n{done.stdout}\n{done.stderr}"
    assert_prints(docs_output("getting-started.md", "first.py"), done.stdout, "first.py")


def test_the_readme_links_work_on_pypi() -> None:
    """PyPI shows the README without the repository: a relative link there is dead. Its links to the
    docs are absolute, into the repository's main branch, and each names a file that exists here."""
    repository = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"][
        "Repository"
    ]
    prefix = f"{repository}/blob/main/"
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [hit.group(1) or hit.group(2) for hit in LINK.finditer(text)]
    relative = [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:|#", t)]
    assert not relative, f"relative links in README.md break on PyPI's page: {relative}"
    ours = [t.removeprefix(prefix).split("#")[0] for t in targets if t.startswith(prefix)]
    assert "docs/index.md" in ours, f"README.md links to no page of the docs under {prefix}"
    missing = [path for path in ours if not (ROOT / path).exists()]
    assert not missing, f"README.md links to files the repository does not have: {missing}"


def block_after(page: Path, marker: str) -> str:
    """The code block after `<!-- marker -->` on `page`, as written."""
    found = re.search(rf"<!-- {re.escape(marker)} -->\n```python\n(.*?)```", page.read_text("utf-8"), re.S)
    assert found, f"{page.relative_to(ROOT)} lost its tested block (the one after <!-- {marker} -->)"
    return found.group(1)


def outside_env(home: Path) -> dict[str, str]:
    """The environment of a user's own project: no pytest options, no credentials, an empty home."""
    drop = ("PYTEST_", "ANTHROPIC_", "CLAUDE_", "FLOWER_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    return {**env, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}


@pytest.mark.cli
def test_the_first_test_of_the_testing_page_passes_in_an_empty_project(tmp_path: Path) -> None:
    project = tmp_path / "project"  # no pyproject.toml, no conftest.py, no pytest.ini: nothing but the test
    project.mkdir()
    test = project / "test_first.py"
    test.write_text(block_after(ROOT / "docs" / "testing.md", "docs-test: test_first.py"), encoding="utf-8")

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", test.name],
        capture_output=True,
        text=True,
        timeout=hang_guard(),
        check=False,
        cwd=project,
        env=outside_env(tmp_path),
    )

    assert done.returncode == 0 and "1 passed" in done.stdout, f"{done.stdout}\n{done.stderr}"
    assert f"rootdir: {project}" in done.stdout  # the repository's configuration played no part
    # pytest-asyncio (in this venv) asks for a fixture loop scope; the plugin answers it for a bare project
    assert "Warning" not in done.stdout + done.stderr, f"{done.stdout}\n{done.stderr}"


def test_the_readmes_first_coordinator_says_what_it_needs(tmp_path: Path) -> None:
    script = tmp_path / "first.py"
    script.write_text(block_after(ROOT / "README.md", "readme-test: first-coordinator"), encoding="utf-8")

    def run() -> str:
        done = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            timeout=hang_guard(),
            check=False,
            cwd=tmp_path,
            env=outside_env(tmp_path),
        )
        assert done.returncode == 1 and not done.stdout, done.stdout
        return done.stderr.strip().splitlines()[-1]

    repo = tmp_path / "repo"
    assert run() == (
        f"flower._errors.SpecError: Runtime: workspace {repo} does not exist: create it, or give the "
        "directory the agents should work in"
    )
    repo.mkdir()
    assert run().startswith(
        "flower._errors.CredentialsError: no credentials for the Claude Code CLI: set ANTHROPIC_API_KEY"
    )
