-- How often compaction fires, per agent: the compactions the logs record (by trigger)
-- and those the agent's own threshold predicts along the real prompt sizes.
--   sessions                sessions with at least one request
--   sessions_compacted      sessions with at least one recorded compaction
--   main_requests           requests of the main conversation
--   compactions             recorded compactions (auto + manual + inferred + unknown)
--   per_100_main_requests   compactions per 100 main requests
--   predicted               requests where the threshold fires (a recorded compaction
--                           near one is explained by it)
-- Rounding goes through a decimal, ROUND(CAST(x AS DECIMAL(38, 8)), n), so that DuckDB
-- and Spark round a half alike (docs/parquet.md, "Rounding").
SELECT agent,
       COUNT(DISTINCT session_key) AS sessions,
       COUNT(DISTINCT CASE WHEN compaction_observed THEN session_key END) AS sessions_compacted,
       SUM(CASE WHEN role = 'main' THEN 1 ELSE 0 END) AS main_requests,
       SUM(CASE WHEN compaction_observed THEN 1 ELSE 0 END) AS compactions,
       SUM(CASE WHEN compaction_trigger = 'auto' THEN 1 ELSE 0 END) AS auto,
       SUM(CASE WHEN compaction_trigger = 'manual' THEN 1 ELSE 0 END) AS manual,
       SUM(CASE WHEN compaction_trigger = 'inferred' THEN 1 ELSE 0 END) AS inferred,
       SUM(CASE WHEN compaction_predicted THEN 1 ELSE 0 END) AS predicted,
       ROUND(CAST(100 * CAST(SUM(CASE WHEN compaction_observed THEN 1 ELSE 0 END) AS DOUBLE)
             / NULLIF(SUM(CASE WHEN role = 'main' THEN 1 ELSE 0 END), 0) AS DECIMAL(38, 8)), 2)
           AS per_100_main_requests
FROM requests
GROUP BY agent
ORDER BY compactions DESC, agent
