-- The biggest overheads: what each overhead category (system prompt, tools, MCP tools,
-- skills, memory files; for transcripts, the unrecorded system prompt + tools) adds to a
-- prompt, over every request the API counted.
--   requests_with_it  requests where the category is not empty
--   avg_tokens        tokens per request (requests without it count as 0)
--   tokens_carried    tokens over all requests: what it cost in input, request after request
--   share_of_prompt   tokens_carried / all prompt tokens of those requests
--   usd               its part of the prompt's cost, priced as each request's prompt was
--                     billed (in proportion: tokens / prompt tokens x prompt cost)
-- Rounding goes through a decimal, ROUND(CAST(x AS DECIMAL(38, 8)), n), so that DuckDB
-- and Spark round a half alike (docs/parquet.md, "Rounding").
SELECT c.category,
       SUM(CASE WHEN c.tokens > 0 THEN 1 ELSE 0 END) AS requests_with_it,
       ROUND(CAST(AVG(CAST(c.tokens AS DOUBLE)) AS DECIMAL(38, 8)), 0) AS avg_tokens,
       MAX(c.tokens) AS max_tokens,
       SUM(c.tokens) AS tokens_carried,
       ROUND(CAST(CAST(SUM(c.tokens) AS DOUBLE) / SUM(r.api_prompt_tokens)
                  AS DECIMAL(38, 8)), 4) AS share_of_prompt,
       ROUND(CAST(SUM(c.tokens * (r.uncached_input_usd + r.cache_write_usd + r.cache_read_usd)
                 / r.api_prompt_tokens) AS DECIMAL(38, 8)), 4) AS usd
FROM categories c
JOIN requests r ON r.session_key = c.session_key AND r.index = c.request
WHERE c.category IN ('system_prompt', 'unrecorded_overhead', 'builtin_tools', 'mcp_tools',
                     'skills', 'memory_files')
  AND r.api_prompt_tokens > 0
GROUP BY c.category
ORDER BY tokens_carried DESC, c.category
