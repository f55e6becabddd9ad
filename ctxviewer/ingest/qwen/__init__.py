"""qwen-code: chat files (Gemini Content records)."""
