"""pytest fixtures for scripted runs, loaded automatically when flower is installed (entry point `pytest11`).

- `scripted_model`: a running `ScriptedModel` with no script yet; set them with `scripted_model.script(...)`.
  After a passing test it checks that no request went unscripted and no step was left over.
- `workspace`: an empty directory to use as the CLI's `cwd`.

An `async def` test that uses one of them runs as it is, with no marker and no configuration (on asyncio,
through anyio). A test that pytest-asyncio or anyio's plugin runs (`@pytest.mark.asyncio`,
`@pytest.mark.anyio`, `asyncio_mode = "auto"`) is left to them; other async tests are pytest's business.

Every wait of the harness is a hang guard (`flower.testing.hang_guard()`: 10 minutes, or
`FLOWER_TEST_HANG_GUARD` seconds), never a speed check. The plugin gives the SDK's own 60 s wait for a
starting CLI to answer (`CLAUDE_CODE_STREAM_CLOSE_TIMEOUT`, read from the test process's environment) the
same bound, unless that variable is set already: on a busy machine the CLI's cold start alone can take a
minute. With pytest-asyncio installed and `asyncio_default_fixture_loop_scope` left unset, it sets that
option to `function` (the default pytest-asyncio announces), so a first test needs no configuration and
prints no warning; a value the project chose is left alone.

Example::

    async def test_hello(scripted_model, workspace):
        scripted_model.script("main", ["Hello!"])
        run = await scripted_model.run("Say hello", cwd=workspace)
        assert run.text == "Hello!"
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Generator
from pathlib import Path

import anyio
import pytest

from ._guard import hang_guard
from ._server import ScriptedModel

__all__ = ["scripted_model", "workspace"]

_PASSED = pytest.StashKey[bool]()
_FIXTURES = frozenset({"scripted_model", "workspace"})
# milliseconds; the SDK reads it from os.environ in query() and ClaudeSDKClient.connect() (default 60 s)
_SDK_START_TIMEOUT = "CLAUDE_CODE_STREAM_CLOSE_TIMEOUT"
_ASYNCIO_LOOP_SCOPE = "asyncio_default_fixture_loop_scope"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Bound the SDK's wait for a starting CLI by the hang guard (unless the variable is set already);
    answer pytest-asyncio's question about its fixtures' loop scope when the project did not."""
    os.environ.setdefault(_SDK_START_TIMEOUT, str(int(hang_guard() * 1000)))
    _settle_asyncio_loop_scope(config)


def _settle_asyncio_loop_scope(config: pytest.Config) -> None:
    """pytest-asyncio (installed, say, with a project's own dev tools) warns in every project that leaves
    `asyncio_default_fixture_loop_scope` unset, though the tests of this plugin need none of it: set it to
    `function`, the default pytest-asyncio announces, before pytest-asyncio reads it (this hook runs first).
    A value the project set, in its configuration or with `-o`, is left alone."""
    if not config.pluginmanager.hasplugin("asyncio"):
        return
    try:
        if config.getini(_ASYNCIO_LOOP_SCOPE):
            return
    except ValueError:  # a pytest-asyncio without this option
        return
    cache = getattr(config, "_inicache", None)  # what getini() returns from; pytest has no public setter
    if isinstance(cache, dict):
        cache[_ASYNCIO_LOOP_SCOPE] = "function"


@pytest.hookimpl
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run an `async def` test that uses this plugin's fixtures, when no async plugin took it first
    (pytest-asyncio hands pytest a plain function in its place; anyio's plugin runs its tests earlier)."""
    test = pyfuncitem.obj
    if not inspect.iscoroutinefunction(test) or not _FIXTURES & set(pyfuncitem.fixturenames):
        return None
    names = inspect.signature(test).parameters
    arguments = {name: pyfuncitem.funcargs[name] for name in names if name in pyfuncitem.funcargs}
    anyio.run(functools.partial(test, **arguments))
    return True


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call":
        item.stash[_PASSED] = report.passed
    return report


@pytest.fixture
def scripted_model(request: pytest.FixtureRequest) -> Generator[ScriptedModel, None, None]:
    """A running scripted model; checked for unscripted requests and leftover steps after a passing test."""
    model = ScriptedModel()
    model.start()
    try:
        yield model
    finally:
        model.stop()
    if request.node.stash.get(_PASSED, False):
        model.check()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty directory for the CLI to work in."""
    path = tmp_path / "workspace"
    path.mkdir()
    return path
