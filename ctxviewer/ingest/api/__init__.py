"""The API shapes every reader shares: Anthropic Messages and OpenAI Chat/Responses bodies, and streamed (SSE) responses."""
