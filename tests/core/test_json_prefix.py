"""What survives of a JSON object cut short (ctxviewer.ingest.otel.json_prefix)."""

from __future__ import annotations

import json

import pytest

from ctxviewer.ingest.otel.json_prefix import salvage

BODY = {
    "model": "m",
    "messages": [
        {"role": "user", "content": "héllo"},
        {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
    ],
    "system": "sys",
    "tools": [{"name": "Read"}, {"name": "Bash"}],
    "max_tokens": 5,
}


def test_a_whole_object_is_whole() -> None:
    part = salvage(json.dumps(BODY))
    assert part.whole and part.fields == BODY


def test_every_cut_keeps_only_whole_members_and_elements() -> None:
    text = json.dumps(BODY)
    for n in range(len(text)):
        part = salvage(text[:n])
        assert not part.whole
        for key, value in part.fields.items():
            if key == part.cut and part.partial:  # the array the cut falls in: a prefix
                assert value == BODY[key][: part.kept]
            else:
                assert value == BODY[key]
        if part.cut:  # the member the cut falls in is named, and the ones before are whole
            keys = list(BODY)
            assert list(part.fields) in (
                keys[: keys.index(part.cut)],
                keys[: keys.index(part.cut) + 1],
            )


@pytest.mark.parametrize(
    ("text", "cut", "fields"),
    [
        ('{"model": "m", "mess', "", {"model": "m"}),  # inside a name: which one is not known
        ('{"model": "m",', "", {"model": "m"}),
        ('{"model": "m"', "", {"model": "m"}),
        ('{"tools": [{"name": "Read"}, {"na', "tools", {"tools": [{"name": "Read"}]}),
        ('{"system": "You are', "system", {}),
        ("[1, 2", "", {}),
        ("", "", {}),
    ],
)
def test_cuts(text: str, cut: str, fields: dict[str, object]) -> None:
    part = salvage(text)
    assert (part.cut, part.fields) == (cut, fields)
