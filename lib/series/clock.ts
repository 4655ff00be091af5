import type { Ch } from "../stores/clickhouse.ts";
import type { SeriesDeps } from "./settings.ts";

/**
 * The write clock: wall-clock nanoseconds (ms × 1e6, then one more per write), never below a version
 * already stored in the series tables, so a restart after a clock step back still writes newer rows.
 * Versions are decimal text (UInt64 past 2^53).
 */
interface WriteClock {
  last: bigint;
  loaded: Promise<void>;
}
const clocks = new WeakMap<Ch, WriteClock>();

/** Raises the clock to the newest stored version (it never goes back); a failed read is retried by the next write. */
function loadClock(ch: Ch, clock: WriteClock, after: Promise<void>): void {
  clock.loaded = after.then(async () => {
    const [row] = await ch.query<{ v: string }>(
      "series_versions_max",
      `SELECT toString(greatest(
         (SELECT max(version) FROM series_points), (SELECT max(version) FROM series_segments),
         (SELECT max(version) FROM series_instances), (SELECT max(version) FROM series_archive_pages),
         (SELECT max(version) FROM holder_changes), (SELECT max(version) FROM holder_pending_token_moments),
         (SELECT max(version) FROM holder_hour_sums),
         (SELECT max(version) FROM holder_period_sums))) AS v`,
    );
    const stored = BigInt(row?.v ?? "0");
    if (stored > clock.last) clock.last = stored;
  });
  clock.loaded.catch(() => {
    if (clocks.get(ch) === clock) clocks.delete(ch);
  });
}

export async function nextVersion(deps: Pick<SeriesDeps, "ch">): Promise<string> {
  let clock = clocks.get(deps.ch);
  if (!clock) {
    clock = { last: 0n, loaded: Promise.resolve() };
    loadClock(deps.ch, clock, Promise.resolve());
    clocks.set(deps.ch, clock);
  }
  await clock.loaded;
  const now = BigInt(Date.now()) * 1_000_000n;
  clock.last = now > clock.last ? now : clock.last + 1n;
  return clock.last.toString();
}

/**
 * Reads the newest stored version again before the next write (series-recompute, when its Kafka group rebalanced):
 * instances taken over from another replica then get versions above what it wrote, whatever its clock said.
 */
export function refreshVersionClock(ch: Ch): void {
  const clock = clocks.get(ch);
  if (clock)
    loadClock(
      ch,
      clock,
      clock.loaded.catch(() => undefined),
    );
}
