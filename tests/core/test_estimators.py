from __future__ import annotations

import socket

import pytest

from ctxviewer.analysis.tokens.estimators import get_estimator, names

# Hand-checked values. ASCII / CJK / code / JSON.
ASCII = "hello world"  # 11 chars
CJK = "上下文窗口"  # 5 non-ASCII code points
MIXED = "token 计数"  # 6 ASCII + 2 CJK
CODE = "function add(a, b) {\n  return a + b;\n}\n"  # 39 chars, code-like
JSON_TEXT = '{"name":"Read","input":{"file_path":"/a.py"}}'  # 45 chars


def test_registry_has_the_spec_estimators():
    assert {"qwen", "chars4", "shannon", "heuristic", "cl100k", "o200k"} <= set(names())


@pytest.mark.parametrize(
    "text,expected",
    [
        (ASCII, 3),  # ceil(11/4)
        (CJK, 8),  # ceil(5*1.5)
        (MIXED, 5),  # ceil(6/4 + 2*1.5) = ceil(4.5)
        (CODE, 10),  # ceil(39/4)
        (JSON_TEXT, 12),  # ceil(45/4)
        ("", 0),
    ],
)
def test_qwen(text, expected):
    assert get_estimator("qwen").count(text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        (ASCII, 3),
        (CJK, 2),
        (MIXED, 2),
        (JSON_TEXT, 12),
        ("😀😀", 1),  # JavaScript length counts UTF-16 units: 4 -> 1
    ],
)
def test_chars4(text, expected):
    assert get_estimator("chars4").count(text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        (ASCII, 2),  # (11 // 4) * 1.1 = 3.3 -> 3? no: int(2 * 1.1) = 2
        ("x" * 400, 110),  # 100 * 1.1
        (CJK, 1),  # 5 runes // 4 = 1 -> 1.1 -> 1
    ],
)
def test_shannon(text, expected):
    est = get_estimator("shannon")
    assert est.count(text) == expected
    assert est.message_overhead == 6  # 5 per message, x1.1, rounded up


def test_heuristic():
    est = get_estimator("heuristic")
    # plain: 11/3.5 = 3.14 -> ceil 4
    assert est.count(ASCII) == 4
    # CJK: 5/2.0 = 2.5 -> 3
    assert est.count(CJK) == 3
    # code: 39/3.0 = 13 + 9 specials * 0.1 (parens, braces, comma, semicolon...) + 3 newlines * 0.5
    specials = sum(CODE.count(c) for c in "{}[]().,;:!?<>")
    assert est.count(CODE) == -(-(39 / 3.0 + specials * 0.1 + 1.5) // 1)


def test_bpe_counts_match_known_values():
    assert get_estimator("cl100k").count("hello world") == 2
    assert get_estimator("o200k").count("hello world") == 2
    assert get_estimator("cl100k").count(CODE) > 5
    assert get_estimator("o200k").count(CJK) >= 2


def test_bpe_never_touches_the_network(monkeypatch):
    """Build fresh encodings with every socket operation failing loudly."""
    from ctxviewer.analysis.tokens import bpe

    def refuse(*args, **kwargs):
        raise AssertionError("a socket was opened")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    bpe.encoding.cache_clear()
    try:
        for name in ("cl100k_base", "o200k_base"):
            enc = bpe.encoding(name)
            assert enc.decode(enc.encode_ordinary("offline 離線")) == "offline 離線"
    finally:
        bpe.encoding.cache_clear()


def test_counts_are_cached_by_content():
    est = get_estimator("qwen")
    est.clear_cache()
    calls = []
    original = est.rule
    est.rule = lambda text: calls.append(text) or original(text)
    try:
        text = "repeated history " * 10
        for _ in range(5):
            est.count("".join([text]))  # equal content, distinct string objects
        assert len(calls) == 1
    finally:
        est.rule = original
        est.clear_cache()


def test_unknown_estimator():
    with pytest.raises(KeyError):
        get_estimator("nope")


def test_counts_are_cached_per_session_and_go_with_it():
    """An analysis counts with its session's own estimator: two analyses of one
    session share the counts, another session has its own, the registry's
    instances stay empty, and a dropped session takes its text along."""
    import gc
    import weakref

    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.analysis.report import report_json
    from ctxviewer.analysis.tokens.estimators import for_session
    from ctxviewer.ingest import load
    from ctxviewer.resources import demo_session_path

    registry = get_estimator("qwen")
    registry.clear_cache()
    session = load(str(demo_session_path()))
    first = Analysis(session, "qwen")
    report_json(first, None)
    est = first.estimator
    assert est is not registry and est is for_session(session, "qwen")
    counted = len(est._cache)
    assert counted > 50  # the demo's texts
    assert Analysis(session, "qwen", policy="qwen").estimator is est  # shared by analyses
    assert len(registry._cache) == 0  # nothing kept process-wide
    other = load(str(demo_session_path()))
    assert for_session(other, "qwen") is not est
    gone = weakref.ref(est)
    del first, est, session
    gc.collect()
    assert gone() is None  # the closed session's counts are freed
