"""Turn an OpenTelemetry capture (run_otel.sh) into the test fixture tests/data/otel/.

    python tools/otel_capture/make_fixture.py $RC_DIR/out/otel tests/data/otel

Redacts what names the machine (user.id, os.version) and moves body_ref paths to
/redacted/otel-bodies/ (so the reader finds the files beside the log, in otel-bodies/).
Keeps the bodies of the first turn only: the later ones are the reader's "missing body
file" case. expected.json holds what the fake server recorded of each call (its usage,
and the size and SHA-256 of the body it received): the tests compare the reader with it.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import shutil
import sys

REDACT = {"user.id": "redacted-user-id", "os.version": "redacted"}
RUNS = {
    "inline": "pb-inline",
    "inline-json": "json-inline",
    "big-inline": "big-inline",
    "file": "pb-file",
}
KEEP_REQUEST_BODIES = 2  # the first turn's two calls


def redact(value, refs):
    if isinstance(value, dict):
        if value.get("key") in REDACT and isinstance(value.get("value"), dict):
            return {"key": value["key"], "value": {"stringValue": REDACT[value["key"]]}}
        if value.get("key") == "body_ref":
            old = value["value"]["stringValue"]
            new = "/redacted/otel-bodies/" + os.path.basename(old)
            refs.append(old)
            return {"key": "body_ref", "value": {"stringValue": new}}
        return {k: redact(v, refs) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, refs) for v in value]
    return value


def expected(run_dir):
    calls = []
    for line in open(os.path.join(run_dir, "requests.jsonl")):
        r = json.loads(line)
        if r.get("path") != "/v1/messages":
            continue
        u = r["response"]["message"]["usage"]
        wire = json.dumps(r["body"], separators=(",", ":"), ensure_ascii=False).encode()
        assert len(wire) == r["body_bytes"]
        calls.append(
            {
                "input_tokens": u["input_tokens"],
                "output_tokens": u["output_tokens"],
                "cache_read_input_tokens": u.get("cache_read_input_tokens", 0),
                "cache_creation_input_tokens": u.get("cache_creation_input_tokens", 0),
                "body_bytes": r["body_bytes"],
                "body_sha256": hashlib.sha256(wire).hexdigest(),
                "messages": len(r["body"]["messages"]),
                "tools": len(r["body"]["tools"]),
            }
        )
    return calls


def main(src, dst):
    os.makedirs(os.path.join(dst, "otel-bodies"), exist_ok=True)
    out = {}
    for name, run in RUNS.items():
        run_dir = os.path.join(src, run)
        refs = []
        lines = [
            json.dumps(redact(json.loads(line), refs), separators=(",", ":"), ensure_ascii=False)
            for line in open(os.path.join(run_dir, "otel.jsonl"))
        ]
        data = ("\n".join(lines) + "\n").encode()
        if name == "file":
            with open(os.path.join(dst, "file.jsonl"), "wb") as f:
                f.write(data)
            requests = [r for r in refs if r.endswith(".request.json")]
            for ref in requests[:KEEP_REQUEST_BODIES] + [r for r in refs if r not in requests]:
                shutil.copy(ref, os.path.join(dst, "otel-bodies", os.path.basename(ref)))
        else:
            with open(os.path.join(dst, f"{name}.jsonl.xz"), "wb") as f:
                f.write(lzma.compress(data, preset=9))
        out[name] = expected(run_dir)
    with open(os.path.join(dst, "expected.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
