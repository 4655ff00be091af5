-- The trade watcher's record of market trades (exchange fills and EVM pool swaps of pairs with
-- enable_trades): each trade once, by its stable key, with the event id assigned when it was first
-- recorded. It is the outbox of the market events: a trade recorded here but not yet written to
-- ClickHouse (a crash in between) is written by the watcher's next start, before it serves anything.
CREATE TABLE IF NOT EXISTS market_trades (
  key text PRIMARY KEY,
  event_id text NOT NULL UNIQUE,
  -- Assignment time (ms): the timestamp part of event_id.
  recorded_at bigint NOT NULL,
  source_id text NOT NULL,
  pair_id integer NOT NULL,
  pair_symbol text NOT NULL,
  -- The venue's own trade id (exchange fills), the cursor of the next read of the pair.
  venue_trade_id text,
  -- The trade as the watcher got it (lib/market/trade.ts MarketTrade).
  trade jsonb NOT NULL,
  -- The normalized event written for it (every field but the served document), so that writing it
  -- again after a crash writes the same row.
  event jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS market_trades_recorded_idx ON market_trades (recorded_at);
CREATE INDEX IF NOT EXISTS market_trades_pair_idx ON market_trades (source_id, pair_symbol, recorded_at);
