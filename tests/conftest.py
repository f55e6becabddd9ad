"""Shared test setup: offscreen Qt, the shared corpus, isolated user config."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests run derandomized: the examples come from a hash of each test, so the
# suite (and CI) sees the same cases on every run, and a red run is a real regression.
# Exploring for new cases is its own run, whose finds become @example()s:
#     HYPOTHESIS_PROFILE=explore .venv/bin/python -m pytest -k "never or property" ...
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Without a display Qt aborts; tests always render offscreen.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The folder of real logs written by others (../shared/corpus)."""
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not present at {CORPUS}")
    return CORPUS


@pytest.fixture
def data() -> Path:
    return DATA


# The fake upstreams on 127.0.0.1 live in tests/proxy (proxy_fakes, strict_upstream);
# the proxy and the GUI tests both use them.
PROXY_TESTS = Path(__file__).resolve().parent / "proxy"


def _serving(module: str, name: str):  # noqa: ANN202 - yields the running fake
    pytest.importorskip("aiohttp")
    import importlib
    import sys

    if str(PROXY_TESTS) not in sys.path:
        sys.path.insert(0, str(PROXY_TESTS))
    fake = getattr(importlib.import_module(module), name)()
    fake.server.start()
    yield fake
    fake.server.stop()


@pytest.fixture
def upstream():  # noqa: ANN201 - a proxy_fakes.FakeUpstream (imported with aiohttp)
    """A fake Anthropic/OpenAI upstream, answering as scripted."""
    yield from _serving("proxy_fakes", "FakeUpstream")


@pytest.fixture
def strict():  # noqa: ANN201 - a strict_upstream.StrictUpstream
    """An upstream that enforces the APIs' rules (tool pairs, roles, system placement)."""
    yield from _serving("strict_upstream", "StrictUpstream")


@pytest.fixture
def count_server(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201 - a count_server.CountServer
    """A fake count_tokens endpoint (``input_tokens`` = body bytes // 4), with
    ANTHROPIC_BASE_URL and a key pointing the SDK at it."""
    pytest.importorskip("aiohttp")
    import sys

    if str(PROXY_TESTS) not in sys.path:
        sys.path.insert(0, str(PROXY_TESTS))
    from count_server import CountServer

    s = CountServer()
    s.start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{s.port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Keep the user's config, caches and agent folders out of every test."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("CTXVIEWER_HOME", str(home / ".ctxviewer"))
    # never hand files to (or take the socket of) a ctxviewer the developer is running
    monkeypatch.setenv("CTXVIEWER_INSTANCE", f"ctxviewer-test-{os.getpid()}-{home.name}")
    # loopback only: no HTTP proxy or API settings from the environment may interfere
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE",
    ):
        monkeypatch.delenv(name, raising=False)
    yield
