-- Read-only direct access to the versioned api_v1_* views, for data engineers on a ClickHouse server (server
-- mode; the embedded engine has no users: use POST /sql there). Not applied by the migration runner: access
-- control is the operator's (who gets it, which password or certificate), and the runner's own user may lack
-- the rights to create roles. Apply it as a user with access management, after the migrations ran:
--
--   clickhouse-client --multiquery < clickhouse/roles/api_v1_reader.sql
--
-- It is written for the database alephium_prod (CLICKHOUSE_DATABASE, default alephium_<STAGE>); for another:
--
--   sed 's/alephium_prod/alephium_dev/g' clickhouse/roles/api_v1_reader.sql | clickhouse-client --multiquery
--
-- Then give the role to people:
--
--   CREATE USER analyst IDENTIFIED WITH sha256_password BY '...' DEFAULT ROLE api_v1_reader;
--
-- Re-applying it is harmless (IF NOT EXISTS, grants repeat). When a release adds a view, re-apply it.

-- The limits of POST /sql's defaults, as constraints the role's users cannot raise. readonly = 2 lets clients
-- send the format settings they need while writes, DDL and raising these limits stay refused.
CREATE SETTINGS PROFILE IF NOT EXISTS api_v1_reader_limits SETTINGS
  readonly = 2 CONST,
  max_execution_time = 10 MAX 60,
  timeout_overflow_mode = 'throw' CONST,
  max_rows_to_read = 100000000 MAX 1000000000,
  read_overflow_mode = 'throw' CONST,
  max_result_rows = 100000 MAX 10000000,
  max_result_bytes = 100000000 MAX 1000000000,
  result_overflow_mode = 'throw' CONST;

CREATE ROLE IF NOT EXISTS api_v1_reader SETTINGS PROFILE 'api_v1_reader_limits';

-- The views read the internal tables with their definer's rights (SQL SECURITY DEFINER, the user applying this
-- file), so the role needs grants on the views only: the internal tables stay out of reach.
ALTER TABLE alephium_prod.api_v1_events MODIFY SQL SECURITY DEFINER;
ALTER TABLE alephium_prod.api_v1_blocks MODIFY SQL SECURITY DEFINER;
ALTER TABLE alephium_prod.api_v1_chain_progress MODIFY SQL SECURITY DEFINER;
ALTER TABLE alephium_prod.api_v1_trades MODIFY SQL SECURITY DEFINER;
ALTER TABLE alephium_prod.api_v1_candles MODIFY SQL SECURITY DEFINER;
ALTER TABLE alephium_prod.api_v1_spot MODIFY SQL SECURITY DEFINER;
ALTER TABLE alephium_prod.api_v1_series_instances MODIFY SQL SECURITY DEFINER;
ALTER TABLE alephium_prod.api_v1_series_points MODIFY SQL SECURITY DEFINER;
ALTER TABLE alephium_prod.api_v1_market_figures MODIFY SQL SECURITY DEFINER;

-- SELECT on the views and nothing else: no table functions (they need their own source grants: URL, S3, FILE,
-- REMOTE ...), no other database, no writes.
GRANT SELECT ON alephium_prod.api_v1_events TO api_v1_reader;
GRANT SELECT ON alephium_prod.api_v1_blocks TO api_v1_reader;
GRANT SELECT ON alephium_prod.api_v1_chain_progress TO api_v1_reader;
GRANT SELECT ON alephium_prod.api_v1_trades TO api_v1_reader;
GRANT SELECT ON alephium_prod.api_v1_candles TO api_v1_reader;
GRANT SELECT ON alephium_prod.api_v1_spot TO api_v1_reader;
GRANT SELECT ON alephium_prod.api_v1_series_instances TO api_v1_reader;
GRANT SELECT ON alephium_prod.api_v1_series_points TO api_v1_reader;
GRANT SELECT ON alephium_prod.api_v1_market_figures TO api_v1_reader;
