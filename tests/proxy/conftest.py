"""Fixtures for the proxy tests: a fake upstream and a recording proxy, both on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from proxy_fakes import API_KEY, FakeUpstream

from ctxviewer.proxy import ProxyThread


@pytest.fixture
def make_proxy(upstream: FakeUpstream, tmp_path: Path) -> Iterator[Callable[..., ProxyThread]]:
    """Start proxies in front of the fake upstream; all are stopped after the test."""
    started: list[ProxyThread] = []

    def make(**kwargs: Any) -> ProxyThread:
        kwargs.setdefault("out", tmp_path / f"rec{len(started)}.jsonl")
        kwargs.setdefault("upstream", upstream.url)
        kwargs.setdefault("openai_upstream", upstream.url)
        kwargs.setdefault("timeout", 5.0)
        proxy = ProxyThread(port=0, **kwargs)
        proxy.start()
        started.append(proxy)
        return proxy

    yield make
    for proxy in started:
        proxy.stop()


@pytest.fixture
def proxy(make_proxy: Callable[..., ProxyThread]) -> ProxyThread:
    return make_proxy()


@pytest.fixture
def client(proxy: ProxyThread) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=proxy.url, api_key=API_KEY, max_retries=0, timeout=20.0) as c:
        yield c
