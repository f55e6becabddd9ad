"""Compare `ctxviewer report --json` on an OTel capture with the fake server's own recording:
per-request usage totals, and the body bytes (file mode: whole; inline: the kept prefix)."""

import json
import os
import re
import subprocess
import sys

CV = sys.argv[1]
for run in sys.argv[2:]:
    fake = [json.loads(line) for line in open(os.path.join(run, "requests.jsonl"))]
    fake = [r for r in fake if r.get("path") == "/v1/messages"]
    rep = json.loads(
        subprocess.run(
            [CV, "report", os.path.join(run, "otel.jsonl"), "--json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    ours = rep["requests"]
    want = []
    for r in fake:
        u = r["response"]["message"]["usage"]
        want.append(
            (
                u["input_tokens"]
                + u.get("cache_read_input_tokens", 0)
                + u.get("cache_creation_input_tokens", 0),
                u["output_tokens"],
                u.get("cache_read_input_tokens", 0),
                u.get("cache_creation_input_tokens", 0),
            )
        )
    got = [
        (
            r["api_prompt_tokens"],
            r["output_tokens"],
            r["cache_read_input_tokens"],
            r["cache_creation_input_tokens"],
        )
        for r in ours
    ]
    # the logged bodies, in order
    bodies = []
    for line in open(os.path.join(run, "otel.jsonl")):
        d = json.loads(line)
        for rl in d.get("resourceLogs", []):
            for sl in rl["scopeLogs"]:
                for lr in sl["logRecords"]:
                    a = {x["key"]: list(x["value"].values())[0] for x in lr["attributes"]}
                    if a.get("event.name") == "api_request_body":
                        bodies.append(a)
    same_bytes = 0
    detail = []
    for a, r in zip(bodies, fake, strict=False):
        wire = json.dumps(r["body"], separators=(",", ":"), ensure_ascii=False)
        assert len(wire.encode()) == r["body_bytes"], "re-serialized wire body differs in size"
        if "body_ref" in a:
            raw = open(a["body_ref"], "rb").read()
            stripped = re.sub(rb',"betas":\[[^\]]*\]', b"", raw)
            ok = stripped == wire.encode() and int(a["body_length"]) == len(raw)
        else:
            text = a["body"].removesuffix("\n\n[TRUNCATED - Content exceeds 60KB limit]")
            ok = (
                wire.startswith(text)
                if a.get("body_truncated") == "true"
                else re.sub(r',"betas":\[[^\]]*\]', "", text) == wire
            )
            detail.append(f"{len(text.encode('utf-16-le')) // 2}/{a['body_length']}")
        same_bytes += ok
    print(
        f"{os.path.basename(run)}: fake {len(fake)} calls, report {len(ours)} requests; "
        f"usage per request equal: {got == want}; prompt total fake {sum(w[0] for w in want):,} "
        f"report {sum((g[0] or 0) for g in got):,}; output total fake {sum(w[1] for w in want):,} "
        f"report {sum((g[1] or 0) for g in got):,}; bodies matching the wire: {same_bytes}/{len(fake)}"
        f"; complete={rep['source']['complete']} skipped={rep['source']['skipped_records']}"
        + (f"; inline kept/length: {' '.join(detail)}" if detail else "")
    )
    if got != want:
        print("   want", want)
        print("   got ", got)
