/**
 * Configuration: one declarative schema, one pure `loadConfig(env)`.
 * Every key is documented here; `npm run docs:config` writes docs/configuration.md and `.env.example` from
 * this list (`npm run docs:check` fails while they differ), and `alephium-indexer config` prints its table.
 */
import { ConfigError } from "./errors.ts";
import { isCidr, isEndpoint, isIpRange, isPeerSubnet } from "./net.ts";

/** A WireGuard key as `wg` prints it: standard base64 of 32 bytes (the last character before `=` has 2 zero bits). */
export const WG_KEY_SOURCE = "[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=";
/** The WG_* key settings: a WireGuard key, or empty. */
const WG_KEY_PATTERN = new RegExp(`^(|${WG_KEY_SOURCE})$`);

type Spec =
  | {
      kind: "string";
      default: string;
      doc: string;
      pattern?: RegExp;
      allowed?: string;
      /** A check beyond the pattern (address ranges, port numbers); false refuses the value. */
      check?: (value: string) => boolean;
    }
  | {
      kind: "list";
      default: readonly string[];
      doc: string;
      /** Each item (trimmed); an item failing it names the item and what is expected. */
      item: (item: string) => boolean;
      allowed: string;
      /** A rule over the whole list (an item that must stand alone). */
      whole?: (items: string[]) => boolean;
    }
  | {
      kind: "map";
      default: Readonly<Record<string, string>>;
      doc: string;
      key: (key: string) => boolean;
      value: (value: string) => boolean;
      allowed: string;
    }
  | {
      kind: "counts";
      default: Readonly<Record<string, number>>;
      doc: string;
      key: (key: string) => boolean;
      max: number;
      allowed: string;
    }
  | { kind: "int"; default: number; doc: string; min: number; max: number }
  | { kind: "bool"; default: boolean; doc: string }
  | { kind: "enum"; default: string; doc: string; values: readonly string[] };

const str = (
  def: string,
  doc: string,
  pattern?: RegExp,
  allowed?: string,
  check?: (value: string) => boolean,
) => ({
  kind: "string" as const,
  default: def,
  doc,
  pattern,
  allowed,
  check,
});
/**
 * A comma-separated list, read as its trimmed items (empty ones dropped). Unset takes the default; set to the empty
 * string it is the empty list (`EXCHANGE_SOURCES=` polls no exchange).
 */
const list = (
  def: readonly string[],
  doc: string,
  item: (item: string) => boolean,
  allowed: string,
  whole?: (items: string[]) => boolean,
) => ({ kind: "list" as const, default: def, doc, item, allowed, whole });
/** A JSON object of string to string (`{"1":"https://eth.example"}`); empty is `{}`. */
const map = (
  doc: string,
  key: (key: string) => boolean,
  value: (value: string) => boolean,
  allowed: string,
) => ({ kind: "map" as const, default: {} as Readonly<Record<string, string>>, doc, key, value, allowed });
/** Comma-separated `key:n` pairs (`free:1,pro:10`), read as a record of counts. */
const counts = (
  def: Readonly<Record<string, number>>,
  doc: string,
  key: (key: string) => boolean,
  max: number,
  allowed: string,
) => ({ kind: "counts" as const, default: def, doc, key, max, allowed });
const HTTP_URL = /^https?:\/\/[^\s]+$/i;
/** The ccxt exchanges EXCHANGE_SOURCES may name (those that list ALPH, with a ccxt class the poller knows). */
export const SUPPORTED_EXCHANGES = ["gate", "gateeu", "mexc"] as const;
const int = (def: number, min: number, max: number, doc: string) => ({
  kind: "int" as const,
  default: def,
  min,
  max,
  doc,
});
const bool = (def: boolean, doc: string) => ({ kind: "bool" as const, default: def, doc });
const oneOf = <const V extends readonly string[]>(values: V, def: V[number], doc: string) => ({
  kind: "enum" as const,
  default: def,
  values,
  doc,
});

const URL_OR_EMPTY = /^(|[a-z][a-z0-9+.-]*:\/\/.+)$/i;

/**
 * Fields of the explorer's transactions and blocks (and names no JSON key should take): DECORATION_KEY may be none
 * of them, or the decoration would overwrite the explorer's own value.
 */
const EXPLORER_FIELDS = new Set([
  "__proto__",
  "constructor",
  "prototype",
  "hash",
  "blockHash",
  "timestamp",
  "inputs",
  "outputs",
  "gasAmount",
  "gasPrice",
  "scriptExecutionOk",
  "coinbase",
  "type",
  "version",
  "networkId",
  "scriptOpt",
  "inputSignatures",
  "scriptSignatures",
  "chainFrom",
  "chainTo",
  "height",
  "txNumber",
  "mainChain",
  "deps",
  "nonce",
  "depStateHash",
  "txsHash",
  "target",
  "hashRate",
  "parent",
  "ghostUncles",
  "lastSeen",
]);

/** Every configuration key with its default and meaning; docs/configuration.md keeps this order per group. */
export const CONFIG_SPEC = {
  STAGE: oneOf(["prod", "dev"], "prod", "Deployment stage; routes are also served under `/<stage>/...`."),
  DATA_DIR: str("./data", "Directory of the embedded stores (PGlite, chDB); one sub-directory per stage."),
  DATABASES: oneOf(["on", "off"], "on", "`off` runs without databases: store-backed routes answer 503."),
  API_KEYS_FILE: str(
    "",
    "With DATABASES=off only: a file of the API keys accepted, one per line (`<key>` for a user key, `<key> admin` for an admin key; `#` starts a comment), read at start. Empty: without a database every route that needs a key answers 503 `key_check_unavailable` (keys cannot be checked). Keys from the file have no plan: no rate limit or usage is counted for them (docs/api.md#no-database-mode).",
  ),
  POSTGRES_URL: str(
    "",
    "PostgreSQL URL; empty uses embedded PGlite in DATA_DIR.",
    URL_OR_EMPTY,
    "a postgres:// URL",
  ),
  POSTGRES_POOL_SIZE: int(10, 1, 200, "Connections in the PostgreSQL pool."),
  CLICKHOUSE_URL: str(
    "",
    "ClickHouse HTTP URL; empty uses embedded chDB in DATA_DIR.",
    URL_OR_EMPTY,
    "an http(s):// URL",
  ),
  CLICKHOUSE_DATABASE: str(
    "",
    "ClickHouse database; empty means `alephium_<STAGE>`.",
    /^[A-Za-z0-9_]*$/,
    "letters, digits, _",
  ),
  CLICKHOUSE_USER: str("default", "ClickHouse user (server mode)."),
  CHDB_CONNECTIONS: int(
    3,
    1,
    32,
    "Connections to the embedded chDB (empty `CLICKHOUSE_URL`): a connection runs one statement at a time, so with more of them the processors and the API's reads do not wait for each other's statements.",
  ),
  CLICKHOUSE_PASSWORD: str("", "ClickHouse password (server mode)."),
  KAFKA_BROKERS: list(
    [],
    "Comma-separated Kafka brokers (`host:port`); empty uses the in-process bus.",
    (b) => /^[^\s,/]+:\d{1,5}$/.test(b),
    "host:port brokers such as kafka-1:9092",
  ),
  KAFKA_CLIENT_ID: str("alephium-indexer", "Kafka client id."),
  KAFKA_TOPIC_PREFIX: str("", "Prefix prepended to every topic name (for example `staging.`)."),
  KAFKA_PRODUCE_MAX_BYTES: int(
    50_000_000,
    1_024,
    1_000_000_000,
    "Most bytes (keys, values and about 32 bytes a record, before compression) one Kafka produce request carries: a larger publish goes out in several requests, in order. When the brokers refuse a record batch as too large (`message.max.bytes`, 1 MiB by default, checked per partition after compression), the send goes again in halves until each is taken, and the process keeps the smaller size.",
  ),
  SCHEMA_REGISTRY_URL: str(
    "",
    "Confluent schema registry URL; empty uses the built-in schema ids.",
    URL_OR_EMPTY,
    "an http(s):// URL",
  ),
  HOST: str("127.0.0.1", "Address the API listens on."),
  PORT: int(3000, 0, 65535, "Port the API listens on."),
  METRICS_PORT: int(
    0,
    0,
    65535,
    "Port on HOST where a pipeline process (`ingest`, `process <name>`, `process jobs`, `trade-watcher`) serves its own Prometheus metrics at /metrics (decode errors of normalize, price sources of trade-watcher, webhook deliveries of jobs ...); 0 = off. The API serves its own at its /metrics.",
  ),
  LOG_LEVEL: oneOf(["fatal", "error", "warn", "info", "debug", "trace", "silent"], "info", "pino log level."),
  TRUST_PROXY: bool(
    false,
    "Trust X-Forwarded-* headers (behind a reverse proxy): the client address of public rate limits and IP bans is then the X-Forwarded-For address; off, the socket's peer address (a forged header changes nothing).",
  ),
  REQUEST_TIMEOUT_MS: int(30_000, 1_000, 600_000, "Server request timeout."),
  RATE_LIMIT_STORE: oneOf(
    ["auto", "memory", "postgres"],
    "auto",
    "Where rate-limit counters live; `auto` = postgres (shared by every API process) when POSTGRES_URL is set, else memory.",
  ),
  PUBLIC_RPM: int(600, 1, 1_000_000, "Requests per minute per client IP on public routes."),
  CORS_PUBLIC_ORIGINS: list(
    ["*"],
    "Browser origins allowed to call the public routes (CORS): `*` any origin, `none` (or set empty) no origin (same-origin pages and non-browser clients only), or comma-separated origins (`https://app.example.com`, scheme://host[:port], compared exactly). User and admin routes follow each key's `allowed_origins` instead (docs/api.md#browsers-cors).",
    (o) => o === "*" || o.toLowerCase() === "none" || /^[a-z][a-z0-9+.-]*:\/\/[^/\s,]+$/i.test(o),
    "origins such as https://app.example.com (no path), or `*` alone, or `none` alone",
    (items) => items.length <= 1 || items.every((o) => o !== "*" && o.toLowerCase() !== "none"),
  ),
  CORS_MAX_AGE_S: int(
    600,
    0,
    86_400,
    "How long browsers may cache a CORS preflight answer (`Access-Control-Max-Age`, seconds; browsers cap it, Chromium at 7200).",
  ),
  BANS_REFRESH_MS: int(
    5_000,
    50,
    600_000,
    "How often each API process reloads the bans (`/system/bans`): a ban added or lifted through another process (another API replica, the bot's /ban) applies here within this delay; one made through this process applies at once, and an expiry applies at its time.",
  ),
  AUTO_BAN_AFTER_429: int(
    0,
    0,
    1_000_000,
    "Automatic temporary IP bans: a client address answered this many 429s (any route) within AUTO_BAN_WINDOW_S is banned for AUTO_BAN_DURATION_S (0 = off).",
  ),
  AUTO_BAN_WINDOW_S: int(
    60,
    1,
    86_400,
    "Window in which AUTO_BAN_AFTER_429 rate-limited requests ban an address.",
  ),
  AUTO_BAN_DURATION_S: int(3_600, 1, 31_536_000, "How long an automatic IP ban lasts."),
  USAGE_FLUSH_MS: int(
    5_000,
    50,
    600_000,
    "How often each API process adds its per-key request counts to PostgreSQL (`key_usage`, read by `GET /system/keys/{keyid}/usage` and the bot's /keys); counts are kept in memory in between, flushed before a usage read and when the process stops.",
  ),
  USAGE_RETENTION_DAYS: int(
    35,
    0,
    3_660,
    "Days of per-minute key usage kept; older minutes are deleted by the flushes (at most once an hour). 0 keeps them all.",
  ),
  SQL_PLANS: list(
    ["enterprise"],
    "Comma-separated plan ids whose keys may call `POST /sql` (read-only SQL over the api_v1_* views); admin keys always may. Empty: admins only.",
    (p) => /^[a-z0-9_-]+$/.test(p),
    "plan ids such as enterprise,pro",
  ),
  SQL_MAX_EXECUTION_MS: int(
    10_000,
    100,
    600_000,
    "Longest run of one `POST /sql` query (ClickHouse max_execution_time); a longer one is stopped and answers 400 naming this key.",
  ),
  SQL_MAX_ROWS_TO_READ: int(
    100_000_000,
    1,
    1_000_000_000_000,
    "Most rows one `POST /sql` query may read from the tables behind the views (ClickHouse max_rows_to_read); beyond it the query answers 400 naming this key.",
  ),
  SQL_MAX_RESULT_ROWS: int(
    100_000,
    1,
    100_000_000,
    "Most rows one `POST /sql` answer may hold (ClickHouse max_result_rows); beyond it the query answers 400 naming this key (page with LIMIT / OFFSET or a WHERE on the key columns).",
  ),
  SQL_MAX_RESULT_BYTES: int(
    100_000_000,
    1_000,
    10_000_000_000,
    "Most bytes (uncompressed, in memory) one `POST /sql` answer may hold (ClickHouse max_result_bytes); beyond it the query answers 400 naming this key.",
  ),
  SQL_MAX_MEMORY_BYTES: int(
    1_000_000_000,
    1_000_000,
    100_000_000_000,
    "Most memory one `POST /sql` query may use (ClickHouse max_memory_usage: big GROUP BYs, sorts and joins); beyond it the query answers 400 naming this key.",
  ),
  NODE_URL: str(
    "https://node.mainnet.alephium.org",
    "Alephium full node REST URL.",
    URL_OR_EMPTY,
    "an http(s):// URL",
  ),
  NODE_API_KEY: str("", "Value of the node's X-API-KEY header, if the node requires one."),
  EXPLORER_URL: str(
    "https://backend.mainnet.alephium.org",
    "Explorer backend URL proxied by decorated routes.",
    URL_OR_EMPTY,
    "an http(s):// URL",
  ),
  EXPLORER_TIMEOUT_MS: int(10_000, 100, 120_000, "Timeout of one explorer backend request."),
  DECORATION_KEY: str(
    "ext",
    "Name of the key that carries this service's own metadata on decorated explorer transactions, blocks and transaction lists (SPEC.md writes it `ext`; the AlphScan explorer frontend reads `alphscan`); the OpenAPI document names the same key. It must not be a field of the explorer's objects.",
    /^[A-Za-z_][A-Za-z0-9_]{0,63}$/,
    "a JSON field name of letters, digits and _ (at most 64, not starting with a digit), not one of the explorer's own fields",
    (value) => !EXPLORER_FIELDS.has(value),
  ),
  INGEST_START_TS: int(
    0,
    0,
    Number.MAX_SAFE_INTEGER,
    "Backfill start (Unix ms); 0 = 1 hour before the node's tip.",
  ),
  INGEST_CONCURRENCY: int(4, 1, 64, "Concurrent node requests during backfill."),
  INGEST_WINDOW_MS: int(
    1_800_000,
    1_000,
    1_800_000,
    "Largest time window per blocks-with-events call (node cap 30 min).",
  ),
  INGEST_FIRST_WINDOW_MS: int(
    60_000,
    1_000,
    1_800_000,
    "Window of the first round after a start (at most INGEST_WINDOW_MS); each round doubles it while the node's answers stay under 2,000 blocks, so a start serves its first events after one small round instead of after a whole first batch of history.",
  ),
  INGEST_PREFETCH: bool(
    true,
    "While backfilling, fetch the next round's windows while the current round publishes, so the node's answer time and the processors' work overlap (one more round of blocks held in memory). false fetches each round's windows when the round starts.",
  ),
  INGEST_POLL_MS: int(
    4_000,
    50,
    600_000,
    "Live-tail polling interval: once caught up, ingest asks the node for new blocks this often and hands what came to every processor as one batch (a round that published every chain up to its confirmed tip waits this long too, as one that found nothing; only a round that left confirmed blocks behind is followed at once). A batch costs each processor's statements whatever it holds, so a longer interval costs less CPU per block (`npm run bench:follow`: 4 s instead of 2 s cut it by a quarter to two fifths) and serves a block's events up to this much later (on top of the CONFIRMATIONS blocks they wait for).",
  ),
  CONFIRMATIONS: int(2, 0, 210, "Blocks on top of a block before its events are served (reorg safety)."),
  EVENTS_WATERMARK_CACHE_MS: int(
    200,
    0,
    10_000,
    "How long each API process reuses the poll watermark, and how often its events tail checks for rewrites of served history (0 = on every request). Past it, the last watermark read is still answered while one background read replaces it (a request waits for the store only on the first read, or on every one with 0).",
  ),
  EVENTS_PAGE_CACHE_MS: int(
    1_000,
    0,
    60_000,
    "How long an identical /events/all page is reused per API process, and how often its kept address labels are checked against label_generation (0 = neither); pages are keyed by the watermark.",
  ),
  EVENTS_TAIL_CACHE: int(
    20_000,
    0,
    1_000_000,
    "Newest events each API process keeps in memory to answer /events/all pages near the tip (0 = off; ~0.9 KB of heap per bench event: its served JSON and the fields filters read; more with big payloads).",
  ),
  STREAM_POLL_MS: int(
    250,
    20,
    60_000,
    "How often each API process reads the watermark while /events/stream connections wait (one read per step for all of them).",
  ),
  STREAM_HEARTBEAT_MS: int(
    15_000,
    1_000,
    300_000,
    "A comment line on an /events/stream connection after this long without data, so proxies keep it open.",
  ),
  STREAM_RETRY_MS: int(
    3_000,
    100,
    600_000,
    "The `retry:` hint of /events/stream: how long EventSource waits before reconnecting.",
  ),
  STREAM_BUFFER_BYTES: int(
    1_048_576,
    4_096,
    268_435_456,
    "Unsent bytes past which an /events/stream client is cut as too slow (after a final `end` event with the id to resume after).",
  ),
  STREAM_DRAIN_MS: int(
    10_000,
    100,
    600_000,
    "How long a blocked /events/stream write may wait for the client to read before it is cut as too slow.",
  ),
  STREAM_CONNECTIONS: counts(
    { free: 1, pro: 10, enterprise: 100 },
    "Open /events/stream connections allowed per API key and API process, by plan id (`plan:n` pairs); plans not listed get STREAM_CONNECTIONS_OTHER.",
    (plan) => /^[a-z0-9_-]{1,64}$/.test(plan),
    999_999,
    "plan:n pairs separated by commas (n from 0 to 999999)",
  ),
  STREAM_CONNECTIONS_OTHER: int(
    1,
    0,
    1_000_000,
    "Open /events/stream connections per key for plans STREAM_CONNECTIONS does not list.",
  ),
  OHLCV_CACHE_MS: int(
    1_000,
    0,
    60_000,
    "How long an identical /price/pair/{id}/ohlcv page is reused per API process (0 = off).",
  ),
  OHLCV_STALE_MS: int(
    5_000,
    0,
    600_000,
    "How long past OHLCV_CACHE_MS an OHLCV page is still served while one background read replaces it (0 = requests wait for the read).",
  ),
  DAPP_DECODERS: bool(
    true,
    "Decode the dapps' events and calls (lib/chain/TAXONOMY.md). false leaves them generic contract events (DEX pools are still decoded); a later `reprocess` with true decodes that history.",
  ),
  CODE_HASH_CHECK_INTERVAL_S: int(
    3_600,
    0,
    604_800,
    "How often the normalizer reads each dapp contract's code hash from the node (`/contracts/{address}/state`) to catch upgrades no event announces; a changed contract's events of later blocks are published generic (decode_error code_hash_changed) and /status names it (docs/dapps.md). 0 = off.",
  ),
  DAPP_CURSOR_SECRET: str(
    "",
    "Key that signs the dapp routes' nextKey cursors (HMAC-SHA256). Empty: a key generated once and kept in Postgres (`shared_secrets`), shared by every API process on the database, so a cursor made by one replica is accepted by another and outlives a restart.",
  ),
  DAPP_CURSOR_TTL_MS: int(
    3_600_000,
    1_000,
    604_800_000,
    "How long a dapp route's nextKey is accepted (a cursor pages through the snapshot of its first page).",
  ),
  DAPP_PAGE_CACHE_MS: int(
    1_000,
    0,
    60_000,
    "How long an identical dapp route page (same query and snapshot) is reused per API process (0 = off).",
  ),
  DAPP_PAGE_STALE_MS: int(
    5_000,
    0,
    600_000,
    "How long past DAPP_PAGE_CACHE_MS a dapp route page is still served while one background read replaces it; a first page is answered with its query's snapshot read within this time while the newer snapshot is read (0 = requests wait for the read).",
  ),
  DIA_HEARTBEAT_MS: int(
    600_000,
    1_000,
    604_800_000,
    "DIA's heartbeat: a feed whose newest value is older than this is reported stale by /dapps/dia-oracle/feeds.",
  ),
  NODE_CALL_TIMEOUT_MS: int(
    5_000,
    100,
    120_000,
    "Timeout of the API's contract calls to the full node (AlphBanX positions).",
  ),
  PAYLOAD_HYDRATION: bool(true, "Merge offloaded payloads back into events on read."),
  PAYLOAD_MAX_BYTES: int(
    4096,
    64,
    10_000_000,
    "Payloads larger than this are offloaded and referenced by payload_ref.",
  ),
  EXCHANGE_SOURCES: list(
    ["gate", "mexc"],
    "Comma-separated ccxt ids of exchanges polled for candles, spot prices and (pairs with enable_trades) fills (`gate`, `gateeu`, `mexc`); each gets a `cex` price source of that id. Default: the exchanges that list ALPH. Empty: none. `start --devnet` uses a simulated Gate unless this is set.",
    (id) => (SUPPORTED_EXCHANGES as readonly string[]).includes(id),
    `exchange ids among ${SUPPORTED_EXCHANGES.join(", ")}`,
  ),
  EXCHANGE_API_URLS: map(
    'JSON object of exchange id to base URL replacing the host of every API URL of that exchange (a proxy or test double), for example `{"gate":"http://127.0.0.1:8080"}`.',
    (id) => /^[a-z0-9]+$/.test(id),
    (url) => HTTP_URL.test(url),
    'a JSON object of exchange id to http(s) URL such as {"gate":"http://127.0.0.1:8080"}',
  ),
  EXCHANGE_POLL_MS: int(
    15_000,
    50,
    3_600_000,
    "How often each exchange is polled for new 1m candles and the ticker.",
  ),
  EXCHANGE_TRADES_POLL_MS: int(
    1_000,
    50,
    3_600_000,
    "How often each exchange is polled for new fills of pairs with enable_trades (the trade watcher); candles and the ticker keep EXCHANGE_POLL_MS.",
  ),
  EXCHANGE_TIMEOUT_MS: int(10_000, 100, 120_000, "Timeout of one exchange request."),
  EVM_RPC_URLS: map(
    'JSON object of EVM chain id to JSON-RPC URL, for the pools of `uniswap` (chain 1) and `pancakeswap` (chain 56) sources, for example `{"1":"https://eth.example","56":"https://bsc.example"}`. Empty: EVM pools are not read.',
    (id) => /^[1-9][0-9]{0,9}$/.test(id),
    (url) => HTTP_URL.test(url),
    'a JSON object of EVM chain id (a positive integer) to http(s) URL such as {"1":"https://eth.example"}',
  ),
  EVM_CONFIRMATIONS: int(12, 0, 1000, "Blocks on top of an EVM block before its swaps are read."),
  EVM_POLL_MS: int(12_000, 50, 3_600_000, "How often the EVM pools are polled for new swaps and reserves."),
  EVM_BLOCK_RANGE: int(2_000, 1, 100_000, "Most blocks per eth_getLogs call."),
  EVM_BACKFILL_BLOCKS: int(
    7_200,
    0,
    10_000_000,
    "How many blocks back a newly watched EVM pool is read (7,200 ≈ one day on Ethereum).",
  ),
  EVM_TIMEOUT_MS: int(10_000, 100, 120_000, "Timeout of one EVM JSON-RPC request."),
  TRADE_FEED_HEARTBEAT_MS: int(
    5_000,
    20,
    60_000,
    "How often the trade watcher moves its feed position to the clock when no trade arrives (one ClickHouse insert each): while it runs, events are served up to the older of the chains' watermark and this position, so this is the most it can delay them. A block's events are published CONFIRMATIONS blocks after it (16 s on mainnet at the default 2), so the default delays none; with CONFIRMATIONS=0 a lower value serves them sooner.",
  ),
  EXCHANGE_BACKFILL_DAYS: int(
    0,
    0,
    36_500,
    "How far back a new exchange pair's 1m candles are read; 0 = from the pair's listing.",
  ),
  BURN_ADDRESSES: list(
    ["111111111111111111111111111111111"],
    "Comma-separated Alephium addresses whose received tokens count as burned (burnedSupply). Default: the all-zero P2PKH address, which nobody can spend. A change applies to new blocks; `figures backfill --rebuild` brings it to history.",
    (a) => /^[1-9A-HJ-NP-Za-km-z]{1,100}$/.test(a),
    "base58 addresses",
  ),
  FIGURES_REFRESH_MS: int(
    15_000,
    0,
    3_600_000,
    "How often the figures processor recomputes token market figures (price_usd, supplies, circulatingSupplyUsd) and TVL; 0 = after every batch.",
  ),
  FIGURES_SUPPLY_REFRESH_MS: int(
    60_000,
    0,
    86_400_000,
    "How often the figures processor asks the node for the total supply (maxSupply) of up to 50 tokens: those without one (getTotalSupply) and bridged ones (what left their bridge pool, from the pool's state: the bridged amount moves), least recently read first; 0 = never.",
  ),
  ALPH_SUPPLY_REFRESH_MS: int(
    300_000,
    0,
    86_400_000,
    "How often the figures processor reads ALPH's supply again (the explorer backend's /infos/supply, and the index's total when it holds the chain from genesis); between reads the last figures are used, and a failing explorer leaves its last figures in place; 0 = at every figures refresh.",
  ),
  FIGURES_MAX_PRICE_AGE_MS: int(
    7 * 86_400_000,
    60_000,
    365 * 86_400_000,
    "A watched pair whose newest trade or value is older than this is not used for price_usd.",
  ),
  TELEGRAM_BOT_TOKEN: str(
    "",
    "Telegram bot token from @BotFather; empty turns the bot off (its webhook route answers 404).",
  ),
  TELEGRAM_WEBHOOK_SECRET: str(
    "",
    "Secret Telegram sends in X-Telegram-Bot-Api-Secret-Token on every webhook call (`bot set-webhook` registers it); required in webhook mode.",
    /^[A-Za-z0-9_-]{0,256}$/,
    "1-256 characters A-Z, a-z, 0-9, _ and -",
  ),
  TELEGRAM_API_ROOT: str(
    "https://api.telegram.org",
    "Bot API root the bot calls (a local double in tests and the offline demo).",
    /^[a-z][a-z0-9+.-]*:\/\/.+$/i,
    "an http(s):// URL",
  ),
  TELEGRAM_MODE: oneOf(
    ["webhook", "polling"],
    "webhook",
    "`webhook`: Telegram posts updates to POST /telegram/webhook; `polling`: `start` (or `bot poll`) fetches them with getUpdates (local use, one process only).",
  ),
  TELEGRAM_WEBHOOK_URL: str(
    "",
    "Public https URL of POST /telegram/webhook that `bot set-webhook` registers with Telegram.",
    URL_OR_EMPTY,
    "an https:// URL",
  ),
  JOBS_WORKERS: bool(
    true,
    "Run the job workers (reindex jobs, webhook deliveries and NFT metadata fetches) in `start` (they also run alone as `process jobs`); false leaves them to other processes.",
  ),
  JOBS_CONCURRENCY: int(1, 1, 64, "Reindex job chunks one worker process runs at once."),
  JOBS_CHUNK_BLOCKS: int(
    5_000,
    1,
    10_000_000,
    "Blocks per queue message of a reindex job: a dead worker's chunk is retried from its last saved page.",
  ),
  JOBS_PAGE_BLOCKS: int(500, 1, 100_000, "Blocks a reindex job publishes between two progress saves."),
  JOBS_RETRY_LIMIT: int(3, 0, 100, "Retries of a failing reindex chunk before the job is `failed`."),
  JOBS_RETRY_DELAY_S: int(
    10,
    1,
    86_400,
    "Seconds before the first retry of a failed reindex chunk; doubles with each retry (pg-boss backoff).",
  ),
  JOBS_EXPIRE_S: int(
    600,
    1,
    86_400,
    "Seconds after which a reindex chunk whose worker died is expired and retried (pg-boss also gives up on a handler running longer); keep it well above one chunk's run.",
  ),
  JOBS_POLL_S: int(2, 1, 3_600, "Seconds between a job worker's polls of the queue when it is empty."),
  JOBS_MAINTENANCE_S: int(
    60,
    1,
    3_600,
    "Seconds between the queue's maintenance runs (expiring dead workers' chunks, scheduling retries).",
  ),
  WEBHOOK_CONCURRENCY: int(
    4,
    0,
    64,
    "Webhook deliveries one job worker process (`start`, `process jobs`) runs at once; 0 delivers none in this process.",
  ),
  WEBHOOK_BATCH: int(100, 1, 1_000, "Events per webhook POST at most (one batch, in id order)."),
  WEBHOOK_STEP_BATCHES: int(
    50,
    1,
    10_000,
    "Full batches one delivery message sends back to back while a webhook catches up, each acknowledged by its own 2xx (it stops sooner when half of WEBHOOK_EXPIRE_S is near); then the next message carries on.",
  ),
  WEBHOOK_TIMEOUT_MS: int(
    10_000,
    100,
    120_000,
    "How long a webhook receiver has to answer a POST (connection, status and body); past it the attempt failed.",
  ),
  WEBHOOK_POLL_S: int(
    5,
    1,
    3_600,
    "Seconds a caught-up webhook waits before looking for new matching events again (a full batch is followed at once).",
  ),
  WEBHOOK_WAKE_MS: int(
    200,
    0,
    60_000,
    "How often a job worker process reads the events watermark for webhooks while a caught-up webhook's message it left waiting has not been taken (none waiting: no reads); on a step (new events served), every caught-up webhook waiting out WEBHOOK_POLL_S is made due at once, so live events go out right after they are served (0 = off: they wait for WEBHOOK_POLL_S).",
  ),
  WEBHOOK_RETRY_LIMIT: int(
    12,
    0,
    50,
    "Retries of a failed webhook batch (non-2xx, timeout, refused address) before the webhook is disabled.",
  ),
  WEBHOOK_RETRY_DELAY_S: int(
    10,
    1,
    86_400,
    "Seconds before the first retry of a failed webhook batch; each retry waits between 1 and 2 times double the previous base delay (pg-boss backoff with jitter).",
  ),
  WEBHOOK_EXPIRE_S: int(
    120,
    1,
    86_400,
    "Seconds after which a webhook delivery whose worker died (or hangs) is expired and retried; keep it well above WEBHOOK_TIMEOUT_MS.",
  ),
  WEBHOOK_ALLOWED_CIDRS: list(
    [],
    "Address ranges webhooks may point to although they are loopback, private, link-local or reserved (comma-separated CIDR ranges or addresses, e.g. `127.0.0.0/8`); empty allows public addresses only.",
    isIpRange,
    "IP addresses or CIDR ranges",
  ),
  WEBHOOK_LOG_KEEP: int(1_000, 10, 1_000_000, "Delivery log rows kept per webhook (the newest)."),
  WEBHOOK_MAX_PER_OWNER: int(20, 1, 100_000, "Webhooks one owner (`user_id` of API keys) may have."),
  NFT_METADATA_FETCH: bool(
    true,
    "Fetch NFT token and collection URIs (http(s)://, ipfs:// through NFT_METADATA_IPFS_GATEWAY, data:) in the job worker and fill the NFT details' display fields from their JSON; off leaves every URI `pending`.",
  ),
  NFT_METADATA_IPFS_GATEWAY: str(
    "https://ipfs.io/ipfs/",
    "HTTP gateway `ipfs://<cid>/<path>` URIs are fetched through (and NFT images shown through): `<gateway><cid>/<path>`.",
    /^https?:\/\/[^\s]+\/$/,
    "an http(s) URL ending with /",
  ),
  NFT_METADATA_TIMEOUT_MS: int(
    10_000,
    100,
    120_000,
    "How long one NFT metadata fetch may take, redirects included; past it the fetch failed.",
  ),
  NFT_METADATA_MAX_BYTES: int(
    262_144,
    1_024,
    16_777_216,
    "Bytes of an NFT metadata document at most (the body of an http(s) answer, or a data: URI's decoded content); a larger one failed.",
  ),
  NFT_METADATA_MAX_REDIRECTS: int(
    3,
    0,
    10,
    "Redirects one NFT metadata fetch follows, each target's addresses checked again; one more failed.",
  ),
  NFT_METADATA_ALLOWED_CIDRS: list(
    [],
    "Address ranges NFT metadata may be fetched from although they are loopback, private, link-local or reserved (comma-separated CIDR ranges or addresses, as WEBHOOK_ALLOWED_CIDRS); empty allows public addresses only.",
    isIpRange,
    "IP addresses or CIDR ranges",
  ),
  NFT_METADATA_RETRY_BASE_S: int(
    60,
    1,
    86_400,
    "Seconds before a failed NFT metadata URI is fetched again; doubles with each failure up to NFT_METADATA_RETRY_MAX_S.",
  ),
  NFT_METADATA_RETRY_MAX_S: int(
    86_400,
    1,
    30 * 86_400,
    "Longest wait between two fetches of a failing NFT metadata URI; a refused URI is tried again after this long.",
  ),
  NFT_METADATA_CONCURRENCY: int(
    4,
    0,
    64,
    "NFT metadata URIs one job worker process fetches at once; 0 fetches none in this process.",
  ),
  NFT_METADATA_POLL_S: int(
    5,
    1,
    3_600,
    "Seconds the NFT metadata fetcher waits, once nothing is due, before looking for due URIs again.",
  ),
  PAYMENT_ADDRESS: str(
    "",
    "Alephium address that receives ALPH payments for plans; empty turns payments off.",
    /^[1-9A-HJ-NP-Za-km-z]{0,128}$/,
    "a base58 Alephium address",
  ),
  INVOICE_TTL_MS: int(
    3_600_000,
    60_000,
    30 * 86_400_000,
    "How long an invoice waits for its transfer; a transfer in a later block is recorded as late, not credited.",
  ),
  SERIES_ARCHIVE_DIR: str(
    "",
    "Directory of the series archive pages when no S3 store is configured; empty means `<DATA_DIR>/<STAGE>/series-archive`.",
  ),
  SERIES_S3_ENDPOINT: str(
    "",
    "S3-compatible endpoint for series archive pages (path-style requests); empty uses SERIES_ARCHIVE_DIR.",
    URL_OR_EMPTY,
    "an http(s):// URL",
  ),
  SERIES_S3_BUCKET: str(
    "",
    "Bucket of the series archive pages (required with SERIES_S3_ENDPOINT; created when missing).",
  ),
  SERIES_S3_REGION: str("us-east-1", "Region sent to the S3 store."),
  SERIES_S3_ACCESS_KEY_ID: str("", "Access key id of the S3 store."),
  SERIES_S3_SECRET_ACCESS_KEY: str("", "Secret access key of the S3 store."),
  SERIES_RAW_RETENTION_HOURS: int(
    720,
    1,
    876_000,
    "Raw-scale (`0`) series points older than this, counted back from the instance's newest point, are archived to the object store in pages.",
  ),
  SERIES_RAW_ARCHIVE_PAGE_DAYS: int(
    7,
    1,
    366,
    "Width of a raw-scale archive page in days (per instance: PATCH /series/instances/{instanceid} rawArchivePageDays).",
  ),
  SERIES_SEGMENT_POINTS: int(
    1440,
    2,
    1_000_000,
    "Buckets per series segment at the 1m, 1h and 1d scales (a segment spans this many bucket widths).",
  ),
  SERIES_RAW_SEGMENT_MS: int(
    3_600_000,
    1_000,
    86_400_000,
    "Time span of a raw-scale series segment in ms (a divisor of one day, so pages hold whole segments).",
  ),
  RECOMPUTE_COALESCE_MS: int(
    60_000,
    0,
    86_400_000,
    "Embedded pipeline (no KAFKA_BROKERS) only: series-recompute and holders-recompute hold rounds whose blocks span less than this (ms of block time) and recompute the held rounds together once their span reaches it, or this long (wall clock) after the first was held, or with a round at least this long (backfill), or on shutdown. A held round is kept in PostgreSQL (`processor_held_batches`) until its recompute is written, so a crash loses nothing. While following, series points, segments, instances and token holders then lag the served events by up to this much; 0 = recompute every round (no lag, more CPU per block: `npm run bench:follow`).",
  ),
  WG_SERVER_PUBLIC_KEY: str(
    "",
    "WireGuard: public key of the server's interface (`wg pubkey < server.key`), written as the [Peer] of every client configuration; empty turns peer creation off (POST /system/wireguard/peers answers 503 `wireguard_not_configured`).",
    WG_KEY_PATTERN,
    "a WireGuard key: the base64 of 32 bytes (44 characters ending in =), as `wg pubkey` prints it",
  ),
  WG_ENDPOINT: str(
    "",
    "WireGuard: `host:port` clients connect to (`Endpoint` of their configuration), e.g. `vpn.example.com:51820` or `[2001:db8::1]:51820`; empty turns peer creation off.",
    /^[^\s]*$/,
    "host:port (a host name, an IPv4 address or a bracketed IPv6 address, and a port from 1 to 65535)",
    (v) => isEndpoint(v),
  ),
  WG_SUBNET: str(
    "10.87.0.0/24",
    "WireGuard: IPv4 subnet of the tunnel; the server's interface takes its first host address (10.87.0.1), peers the following ones, one /32 each.",
    /^[0-9./]+$/,
    "an IPv4 CIDR with a prefix from /8 to /30, e.g. 10.87.0.0/24",
    isPeerSubnet,
  ),
  WG_DNS: list(
    [],
    "WireGuard: `DNS` of client configurations (comma-separated addresses or search domains, e.g. `10.87.0.1`); empty leaves it out.",
    (d) => /^[A-Za-z0-9.:-]+$/.test(d),
    "IP addresses or domain names",
  ),
  WG_ALLOWED_IPS: list(
    [],
    "WireGuard: what clients route through the tunnel (`AllowedIPs` of their [Peer]): comma-separated CIDRs, e.g. `10.87.0.0/24, 10.20.0.0/16` to reach private services beside the tunnel; empty means WG_SUBNET.",
    isCidr,
    "CIDRs (IPv4 or IPv6), e.g. 10.87.0.0/24, fd00::/64",
  ),
  WG_PERSISTENT_KEEPALIVE: int(
    25,
    0,
    65535,
    "WireGuard: `PersistentKeepalive` (seconds) of client configurations, to keep NAT mappings open; 0 leaves it out.",
  ),
  PORTAL_OIDC_ISSUER: str(
    "",
    "Admin portal (`/portal`): the OpenID Connect issuer URL of the identity provider admins sign in with (its `/.well-known/openid-configuration` is read at the first sign-in); empty turns portal sign-in off. Plain http only for a provider on 127.0.0.1/localhost. `npm run demo` sets it to its own local provider.",
    URL_OR_EMPTY,
    "an http(s) URL, or empty",
  ),
  PORTAL_OIDC_CLIENT_ID: str(
    "alephium-portal",
    "Admin portal: the client id registered at the identity provider.",
  ),
  PORTAL_OIDC_CLIENT_SECRET: str(
    "",
    "Admin portal: the client secret registered at the identity provider (sent as `client_secret_post`); empty for a public client (PKCE only).",
  ),
  PORTAL_ADMIN_EMAILS: list(
    [],
    "Admin portal: comma-separated e-mail addresses allowed to sign in (compared case-insensitively, and only when the provider says the address is verified). An account on neither list is refused.",
    (e) => /^[^\s@,]+@[^\s@,]+$/.test(e),
    "e-mail addresses such as admin@example.com",
  ),
  PORTAL_ADMIN_SUBJECTS: list(
    [],
    "Admin portal: comma-separated subjects (`sub` claims of the identity provider) allowed to sign in.",
    (sub) => !/\s/.test(sub),
    "subjects without spaces",
  ),
  PORTAL_SESSION_SECRET: str(
    "",
    "Admin portal: secret that signs the session and CSRF cookies and tokens (at least 32 characters); empty: one generated once and kept in Postgres (`shared_secrets`), shared by every API process on the database, so a session and its CSRF token made by one replica work on another.",
    /^(|.{32,})$/,
    "empty or at least 32 characters",
  ),
  PORTAL_SESSION_TTL_S: int(
    3_600,
    60,
    86_400,
    "Admin portal: lifetime of a session and of the admin key it holds (seconds); the key is revoked at sign-out and when the session expires.",
  ),
  PORTAL_KEY_PLAN: str("enterprise", "Admin portal: the plan of the admin keys that sessions hold."),
  PORTAL_SWEEP_MS: int(
    30_000,
    100,
    3_600_000,
    "Admin portal: how often expired sessions are ended and their admin keys revoked.",
  ),
  PORTAL_URL: str(
    "",
    "Admin portal: its public URL (e.g. `https://api.example.com/prod/portal`), from which the sign-in's redirect URI `<PORTAL_URL>/callback` is made; empty derives it from the request (scheme and host, honouring X-Forwarded-* with TRUST_PROXY).",
    URL_OR_EMPTY,
    "an http(s) URL, or empty",
  ),
  DEVNET_BLOCKS: int(
    14_400,
    16,
    1_000_000,
    "The demo (`npm run demo`, `start --devnet`): blocks the simulated network makes ahead at its first start, across its 16 chains (14400: two hours of chain time; 3600: half an hour). `--devnet-blocks` wins over it; a data directory whose `devnet.json` exists keeps the history it was made with.",
  ),
  DEVNET_REORG_EVERY: int(
    60,
    0,
    1_000_000,
    "The demo (`npm run demo`, `start --devnet`): the simulated network reorgs a random chain, 1 to 4 blocks deep, every this many live blocks (60: half a minute at 2 blocks/s; the reorgs deeper than CONFIRMATIONS reach the events as reorg notices); 0 = never. `--devnet-reorg-every` wins over it; a data directory whose `devnet.json` exists keeps the rhythm it was made with.",
  ),
} as const satisfies Record<string, Spec>;

type SpecValue<S> = S extends { kind: "list" }
  ? string[]
  : S extends { kind: "counts" }
    ? Record<string, number>
    : S extends { kind: "map" }
      ? Record<string, string>
      : S extends { kind: "int" }
        ? number
        : S extends { kind: "bool" }
          ? boolean
          : S extends { kind: "enum"; values: readonly (infer V)[] }
            ? V
            : string;
export type Config = { -readonly [K in keyof typeof CONFIG_SPEC]: SpecValue<(typeof CONFIG_SPEC)[K]> };

function parseOne(
  key: string,
  spec: Spec,
  raw: string,
): string | number | boolean | string[] | Record<string, string> | Record<string, number> {
  const fail = (allowed: string): never => {
    throw new ConfigError(`Invalid configuration ${key}=${JSON.stringify(raw)}: expected ${allowed}.`);
  };
  switch (spec.kind) {
    case "list": {
      const items = raw
        .split(",")
        .map((item) => item.trim())
        .filter(Boolean);
      const bad = items.find((item) => !spec.item(item));
      if (bad !== undefined)
        return fail(`comma-separated ${spec.allowed} (${JSON.stringify(bad)} is not one)`);
      if (spec.whole && !spec.whole(items)) return fail(`comma-separated ${spec.allowed}`);
      return items;
    }
    case "counts": {
      const out: Record<string, number> = {};
      for (const pair of raw
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean)) {
        const m = /^([^:\s]+):(\d{1,15})$/.exec(pair);
        const n = m ? Number(m[2]) : Number.NaN;
        if (!m || !spec.key(m[1]!) || !(n <= spec.max))
          return fail(`${spec.allowed} (${JSON.stringify(pair)} is not one)`);
        out[m[1]!] = n;
      }
      return out;
    }
    case "map": {
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch {
        return fail(spec.allowed);
      }
      if (typeof value !== "object" || value === null || Array.isArray(value)) return fail(spec.allowed);
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(value)) {
        if (!spec.key(k)) return fail(`${spec.allowed} (${JSON.stringify(k)} is not a key it takes)`);
        if (typeof v !== "string" || !spec.value(v))
          return fail(`${spec.allowed} (the value of ${JSON.stringify(k)} is not one it takes)`);
        out[k] = v;
      }
      return out;
    }
    case "int": {
      const n = /^-?\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
      if (!Number.isSafeInteger(n) || n < spec.min || n > spec.max) {
        return fail(`an integer from ${spec.min} to ${spec.max}`);
      }
      return n;
    }
    case "bool": {
      const v = raw.trim().toLowerCase();
      if (["1", "true", "yes", "on"].includes(v)) return true;
      if (["0", "false", "no", "off"].includes(v)) return false;
      return fail("true or false (also 1/0, yes/no, on/off)");
    }
    case "enum":
      if (!spec.values.includes(raw)) return fail(`one of ${spec.values.join(", ")}`);
      return raw;
    case "string":
      if ((spec.pattern && !spec.pattern.test(raw)) || (spec.check && !spec.check(raw)))
        return fail(spec.allowed ?? `a value matching ${spec.pattern}`);
      return raw;
  }
}

/**
 * Rules across keys, or beyond what one key's kind checks, run once every key is read: each answers the message of
 * the start-up error (naming the keys) or null.
 */
const CONFIG_RULES: ((c: Config) => string | null)[] = [
  (c) =>
    86_400_000 % c.SERIES_RAW_SEGMENT_MS === 0
      ? null
      : `SERIES_RAW_SEGMENT_MS=${c.SERIES_RAW_SEGMENT_MS}: expected a divisor of 86400000 (one day)`,
  (c) =>
    c.SERIES_S3_ENDPOINT && !c.SERIES_S3_BUCKET
      ? 'SERIES_S3_BUCKET="": expected a bucket name with SERIES_S3_ENDPOINT'
      : null,
  (c) =>
    c.NFT_METADATA_RETRY_BASE_S > c.NFT_METADATA_RETRY_MAX_S
      ? `NFT_METADATA_RETRY_BASE_S=${c.NFT_METADATA_RETRY_BASE_S}: expected at most NFT_METADATA_RETRY_MAX_S (${c.NFT_METADATA_RETRY_MAX_S})`
      : null,
];

/** Pure: builds the validated config from an environment-like record. Throws ConfigError on a bad value. */
export function loadConfig(env: Record<string, string | undefined> = {}): Config {
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(CONFIG_SPEC) as [string, Spec][]) {
    const raw = env[key];
    if (raw === undefined) out[key] = copyDefault(spec);
    else if (raw.trim() === "") out[key] = spec.kind === "list" ? [] : copyDefault(spec);
    else out[key] = parseOne(key, spec, raw);
  }
  const config = out as Config;
  for (const rule of CONFIG_RULES) {
    const broken = rule(config);
    if (broken) throw new ConfigError(`Invalid configuration ${broken}.`);
  }
  return config;
}

/** A key's default, copied when it is a list or a map (a config object's values are its own). */
function copyDefault(spec: Spec): unknown {
  if (spec.kind === "list") return [...spec.default];
  if (spec.kind === "map" || spec.kind === "counts") return { ...spec.default };
  return spec.default;
}

/**
 * A value as it is written in the environment: lists comma-separated, counts as `key:n` pairs, maps as JSON, an
 * empty map empty.
 */
export function configText(value: unknown): string {
  if (Array.isArray(value)) return value.join(",");
  if (typeof value === "object" && value !== null && Object.values(value).every((v) => typeof v === "number"))
    return Object.entries(value)
      .map(([k, n]) => `${k}:${n}`)
      .join(",");
  if (typeof value === "object" && value !== null)
    return Object.keys(value).length === 0 ? "" : JSON.stringify(value);
  return String(value);
}

/** Markdown table of every key (`config`) or `.env.example` lines. */
export function describeConfig(format: "markdown" | "env"): string {
  const rows = Object.entries(CONFIG_SPEC) as [string, Spec][];
  if (format === "env") {
    return rows
      .map(([k, s]) => `# ${s.doc}\n${k}=${configText(s.default)}`)
      .join("\n\n")
      .concat("\n");
  }
  const lines = ["| Key | Default | Meaning |", "|---|---|---|"];
  for (const [k, s] of rows) {
    const allowed = s.kind === "enum" ? ` One of: ${s.values.join(", ")}.` : "";
    lines.push(`| \`${k}\` | \`${configText(s.default)}\` | ${s.doc}${allowed} |`);
  }
  return lines.join("\n").concat("\n");
}

/** Effective ClickHouse database name. */
export function clickhouseDatabase(config: Config): string {
  return config.CLICKHOUSE_DATABASE || `alephium_${config.STAGE}`;
}
