import type { Config } from "../lib/config.ts";
import type { Logger } from "../lib/logger.ts";
import type { Metrics } from "../lib/metrics.ts";
import type { Bus } from "../lib/stores/bus.ts";
import type { Ch } from "../lib/stores/clickhouse.ts";
import type { Pg } from "../lib/stores/postgres.ts";
import type { Codecs } from "./messages.ts";

/** The dependency bag of every pipeline process, built once in its main and passed down. */
export interface PipelineDeps {
  config: Config;
  log: Logger;
  metrics: Metrics;
  pg: Pg;
  ch: Ch;
  bus: Bus;
  codecs: Codecs;
  /**
   * Set for a processor that holds a lock (holders): checks that this process still holds it (its fencing
   * token is the newest), throwing `fenced` otherwise. `ch` is then already fenced; other writes call it first.
   */
  fence?: () => Promise<void>;
}
