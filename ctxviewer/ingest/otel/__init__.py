"""OpenTelemetry: OTLP JSON logs of Claude Code's API events and their bodies."""
