#!/usr/bin/env bash
# run_otel.sh — Claude Code 2.1.197 against a fake Anthropic server, exporting its
# OpenTelemetry to `ctxviewer otel`, inside `unshare -n` (loopback only).
# RC_DIR is a copy of the realclient harness (fake_anthropic.py, fake_common.py,
# mcp_server.py, cc_env.sh, setup_sandbox.sh) with Claude Code installed under cc/ and
# the harness's Python under venv/; this script goes beside them.
# Runs: json-inline, json-file, pb-inline, pb-file (3 turns each), big-inline (a 100 KB
# file read: the later inline bodies are cut inside the messages). Writes
# $RC_DIR/out/otel/<run>/ (the fake server's requests.jsonl beside otel.jsonl); then
#   python3 check_otel.py $CV $RC_DIR/out/otel/*     compares the two
#   CV=/path/to/ctxviewer bash run_otel.sh
set -uo pipefail
export RC_DIR=${RC_DIR:-/tmp/rc-otel}
R=$RC_DIR
PY=$R/venv/bin/python
CV=${CV:?set CV to the ctxviewer to test}
CC_BIN=$R/cc/node_modules/@anthropic-ai/claude-code-linux-x64/claude
log() { echo "[run_otel $(date +%H:%M:%S)] $*"; }

run_one() {  # $1=name $2=protocol $3=bodies(1|file) $4=read-file
  local O=$R/out/otel/$1; rm -rf "$O"; mkdir -p "$O"
  bash "$R/setup_sandbox.sh" > /dev/null
  python3 - "$R/proj/big.txt" <<'PYEOF'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(1400):
        f.write(f"line {i:04d}: the quick brown fox jumps over the lazy dog, again and again.\n")
PYEOF
  $PY "$R/fake_anthropic.py" --port 18080 --proxy-port 18089 --record "$O/requests.jsonl" \
      --read-file "$4" --max-lifetime 600 2> "$O/server.log" &
  local S=$!
  "$CV" otel --port 4318 --out "$O/otel.jsonl" > "$O/otel_stdout.txt" 2> "$O/otel_stderr.txt" &
  local C=$!
  for _ in $(seq 1 100); do
    curl -s -o /dev/null http://127.0.0.1:18080/_fake/health && [ -s "$O/otel_stdout.txt" ] && break
    sleep 0.1
  done
  local BODIES=1
  [ "$3" = file ] && BODIES=file:$O/bodies
  (
    source "$R/cc_env.sh"; cd "$R/proj"
    unset DISABLE_TELEMETRY
    export CLAUDE_CODE_ENABLE_TELEMETRY=1 OTEL_LOGS_EXPORTER=otlp OTEL_TRACES_EXPORTER=otlp \
           OTEL_METRICS_EXPORTER=otlp OTEL_EXPORTER_OTLP_PROTOCOL=$2 \
           OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OTEL_LOG_RAW_API_BODIES=$BODIES \
           CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1 OTEL_LOGS_EXPORT_INTERVAL=1000
    CC="timeout 120 $CC_BIN --dangerously-skip-permissions"
    $CC -p "Please look at $4 and tell me what it does." --output-format stream-json --verbose \
        > "$O/turn1.jsonl" 2> "$O/turn1.err"; echo "turn1 rc=$?"
    $CC --continue -p "What's the weather in Paris? Use the weather tool." --output-format stream-json \
        --verbose > "$O/turn2.jsonl" 2> "$O/turn2.err"; echo "turn2 rc=$?"
    $CC --continue -p "Thanks. Summarize our conversation in one line." --output-format stream-json \
        --verbose > "$O/turn3.jsonl" 2> "$O/turn3.err"; echo "turn3 rc=$?"
  ) | tee "$O/runs.log"
  sleep 1
  kill -INT $C; wait $C; echo "ctxviewer otel rc=$?" >> "$O/runs.log"
  kill $S; wait $S 2>/dev/null
  log "$1: $(wc -l < "$O/otel.jsonl") OTLP lines, $(grep -c '"/v1/messages"' "$O/requests.jsonl") API calls"
}

if [ "${1:-}" = "--inner" ]; then
  ip link set lo up 2>/dev/null || true
  run_one json-inline http/json 1 hello.py
  run_one json-file http/json file hello.py
  run_one pb-inline http/protobuf 1 hello.py
  run_one pb-file http/protobuf file hello.py
  run_one big-inline http/protobuf 1 big.txt
  exit 0
fi
timeout 1200 unshare -n bash "$0" --inner
