/**
 * Turns for the event loop during long work on the main thread.
 *
 * The embedded process serves the API on the thread that also runs ingest and every processor. A backfill batch
 * is seconds of synchronous work (decoding, building rows, serialising inserts), chained through promises that
 * resolve at once: no request is read meanwhile (`npm run bench:pipeline` measured event-loop delays of 2.5 s).
 * Loops over a batch `await turn()` between items: once the thread has worked `TURN_MS` since the event loop last
 * had a turn, the loop waits for one (setImmediate runs after timers and I/O), so a request waits about that long
 * instead of the batch. Every loop shares the one clock: the thread's, not each loop's.
 */
export const TURN_MS = 10;

/** When the event loop last had a turn (as the clock below or a `turn()` saw it). */
let since = performance.now();
let waiting: Promise<void> | null = null;
/**
 * A clock of the event loop's turns while loops call `turn()`: an idle loop would otherwise leave `since` old and
 * make the next burst of work yield at once. It stops after a second without calls and never keeps the process up.
 */
let clock: NodeJS.Timeout | null = null;
let calledAt = 0;
const tick = () => {
  since = performance.now();
  if (since - calledAt > 1000 && clock) {
    clearInterval(clock);
    clock = null;
  }
};

/** Undefined while the slice lasts (nothing to wait for); else a promise of the event loop's next turn. */
export function turn(): Promise<void> | undefined {
  calledAt = performance.now();
  if (!clock) {
    since = calledAt;
    clock = setInterval(tick, TURN_MS / 2);
    clock.unref();
  }
  if (waiting) return waiting;
  if (performance.now() - since < TURN_MS) return undefined;
  waiting = new Promise((resolve) =>
    setImmediate(() => {
      since = performance.now();
      waiting = null;
      resolve();
    }),
  );
  return waiting;
}

/** `items.map(f)`, giving the event loop its turns. */
export async function mapWithTurns<T, U>(items: readonly T[], f: (item: T) => U): Promise<U[]> {
  const out: U[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    out[i] = f(items[i] as T);
    const t = turn();
    if (t) await t;
  }
  return out;
}
