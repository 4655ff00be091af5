/**
 * The devnet's state file: what a restart needs to rebuild the same chain (seed, first block time, blocks made
 * ahead, pace, reorg rhythm, time of the first start). The chain itself is never stored: it is a function of
 * these values and the clock.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** Contents of the state file (JSON). */
export interface DevnetState {
  /** Format of this file; a file of another format is refused. */
  format: 1;
  seed: number;
  /** Timestamp (ms) of the first non-genesis block. */
  startTimestamp: number;
  /** Blocks made ahead at the first start. */
  blocks: number;
  /** Live rate in blocks per second (2 = timestamps follow the wall clock); 0 = no live production. */
  live: number;
  /** Random reorg after every N live blocks; 0 = never. */
  reorgEvery: number;
  /** Deepest random reorg (absent in files written before it existed: 2). */
  reorgDepth?: number;
  /** Wall-clock time (ms) of the first start. */
  createdAt: number;
}

const FIELDS = ["seed", "startTimestamp", "blocks", "live", "reorgEvery", "createdAt"] as const;

/** Reads a state file; undefined when it does not exist, an error naming the file when it is not valid. */
export function readDevnetState(path: string): DevnetState | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const invalid = (why: string) =>
    new Error(`devnet state file ${path} is not valid (${why}); delete it to start a new chain`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid("not JSON");
  }
  if (typeof parsed !== "object" || parsed === null) throw invalid("not an object");
  const record = parsed as Record<string, unknown>;
  if (record["format"] !== 1) throw invalid(`format ${String(record["format"])}, expected 1`);
  for (const key of FIELDS) {
    const v = record[key];
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) throw invalid(`${key} is ${String(v)}`);
  }
  const depth = record["reorgDepth"];
  if (depth !== undefined && (typeof depth !== "number" || !Number.isSafeInteger(depth) || depth < 1))
    throw invalid(`reorgDepth is ${String(depth)}`);
  return parsed as DevnetState;
}

/** Writes a state file atomically (temporary file, then rename), creating its directory. */
export function writeDevnetState(path: string, state: DevnetState): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(tmp, path);
}
