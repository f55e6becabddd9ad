-- Cache-miss cost, per agent: what the prompt tokens that were not read from the cache
-- (uncached input and cache writes) cost above what they would have cost as cache reads,
-- against the whole bill and against no caching at all. Priced requests only.
--   prompt_tokens     all prompt tokens (input + cache writes + cache reads)
--   missed_tokens     input + cache writes: the tokens the cache did not serve
--   hit_rate          cache reads / prompt tokens
--   cost_usd          what the requests cost (prompt and output)
--   cache_miss_usd    prompt cost minus the same prompts all read from the cache
--   no_cache_usd      the same requests without caching (every prompt token as input)
--   saved_usd         no_cache_usd - cost_usd: what caching saved
-- Rounding goes through a decimal, ROUND(CAST(x AS DECIMAL(38, 8)), n), so that DuckDB
-- and Spark round a half alike (docs/parquet.md, "Rounding").
WITH priced AS (
    SELECT agent, session_key, cost_usd, no_cache_usd,
           input_tokens + cache_creation_input_tokens + cache_read_input_tokens
               AS prompt_tokens,
           input_tokens + cache_creation_input_tokens AS missed_tokens,
           cache_read_input_tokens,
           uncached_input_usd + cache_write_usd + cache_read_usd
               - CAST(input_tokens + cache_creation_input_tokens + cache_read_input_tokens
                      AS DOUBLE) * price_cache_read_per_mtok / 1000000 AS miss_usd
    FROM requests
    WHERE has_usage AND cost_usd IS NOT NULL
)
SELECT agent,
       COUNT(DISTINCT session_key) AS sessions,
       COUNT(*) AS requests,
       SUM(prompt_tokens) AS prompt_tokens,
       SUM(missed_tokens) AS missed_tokens,
       ROUND(CAST(CAST(SUM(cache_read_input_tokens) AS DOUBLE) / NULLIF(SUM(prompt_tokens), 0)
                  AS DECIMAL(38, 8)), 4) AS hit_rate,
       ROUND(CAST(SUM(cost_usd) AS DECIMAL(38, 8)), 4) AS cost_usd,
       ROUND(CAST(SUM(miss_usd) AS DECIMAL(38, 8)), 4) AS cache_miss_usd,
       ROUND(CAST(SUM(no_cache_usd) AS DECIMAL(38, 8)), 4) AS no_cache_usd,
       ROUND(CAST(SUM(no_cache_usd) - SUM(cost_usd) AS DECIMAL(38, 8)), 4) AS saved_usd
FROM priced
GROUP BY agent
ORDER BY cache_miss_usd DESC NULLS LAST, agent
