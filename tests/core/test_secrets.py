"""A secret in the context is a finding: redacted, with where it came in."""

from __future__ import annotations

from pathlib import Path

import orjson

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.findings import findings
from ctxviewer.analysis.findings.secrets import find_secrets, redact
from ctxviewer.cli import main
from ctxviewer.ingest import load

TRANSCRIPT = (
    "claude-code/lanegrid__agtrace__samples-tmp_.claude_projects_-Users-zawakin-"
    "agent-sample_7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9.jsonl"
)
# made up here, in pieces, so that no scanner takes this file for a leak
GITHUB = "gh" + "p_" + "Zq8Lm2Rt" * 5
ANTHROPIC = "sk-" + "ant-api03-" + "Qw3rTy9U" * 12
AWS = "AK" + "IA" + "Q7W2E9R4T6Y1U3I5"
PRIVATE = "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"


def test_each_kind_is_found_and_placeholders_are_not():
    text = (
        f"token={GITHUB} key: {ANTHROPIC}\nAuthorization: Bearer "
        f"{'eyJhbGciOiJIUzI1NiJ9' * 2} {AWS} {PRIVATE} "
        f"AIza{'Sy' + 'B1c2D3e4F5g6H7i8J9k0L1m2N3o4P5q6R7'[:33]}"
    )
    labels = [label for label, _ in find_secrets(text)]
    assert labels == [
        "GitHub token",
        "Anthropic API key",
        "Bearer token",
        "AWS access key",
        "private key",
        "Google API key",
    ]
    assert (
        find_secrets(
            "sk-ant-oat01-REDACTED AKIAIOSFODNN7EXAMPLE ghp_xxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxx Authorization: Bearer <your-token-here>"
        )
        == []
    )
    assert redact(GITHUB) == f"{GITHUB[:8]}… (44 characters)" and GITHUB[8:] not in redact(GITHUB)


def test_a_token_in_a_real_transcript_is_an_error_finding(corpus: Path, tmp_path: Path, capsys):
    lines = (corpus / TRANSCRIPT).read_bytes().splitlines()
    # the output of the session's first tool call gets a GitHub token in it
    for i, raw in enumerate(lines):
        rec = orjson.loads(raw)
        content = rec.get("message", {}).get("content")
        if (
            rec.get("type") == "user"
            and isinstance(content, list)
            and any(c.get("type") == "tool_result" for c in content)
        ):
            for c in content:
                if c.get("type") == "tool_result":
                    c["content"] = f"export GITHUB_TOKEN={GITHUB}\n" + str(c.get("content"))
            lines[i] = orjson.dumps(rec)
            break
    path = tmp_path / "leak.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    a = Analysis(load(str(path)))
    (f,) = [x for x in findings(a) if x.code == "secret-in-context"]
    assert f.severity == "error" and GITHUB not in f.title + f.detail + " ".join(f.items)
    assert f.items == (redact(GITHUB),) and "GitHub token" in f.title
    first = a.session.requests[f.focus]
    m = first.messages[f.messages[0]]
    assert any(GITHUB in b.text for b in m.blocks)  # where it says it came in
    assert f.detail.startswith("In the result of Bash") or f.detail.startswith("In the result")
    assert f.requests == tuple(r.index for r in a.session.requests if m in r.messages)
    assert main(["findings", str(path), "--fail-on", "error"]) == 3
    out = capsys.readouterr().out
    assert "secret-in-context" in out and GITHUB not in out
    assert [
        x
        for x in findings(Analysis(load(str(corpus / TRANSCRIPT))))
        if x.code == "secret-in-context"
    ] == []
