/**
 * The order a pass hands its files to the workers: the longest first, by the wall times of a measured run kept in
 * test/weights.json (`npm run test:times -- <report> --save-weights` writes a pass's entry from its report). The
 * workers take the next file as they finish one, so a long file started last is the pass's tail: with vitest's own
 * order on a fresh clone (no results cache: larger files first) `replay-reorg` (130 s of the server pass's 396)
 * started late. A file not in the list counts as UNKNOWN_SECONDS; ties go by path, so the order is the same in every
 * run.
 */
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { TestSequencerConstructor, TestSpecification } from "vitest/node";
import { BaseSequencer } from "vitest/node";

/** A pass's measured wall seconds per file, relative paths with forward slashes. */
export type Weights = Record<string, Record<string, number>>;

/** A new file's weight until a run measures it: about the median of the embedded pass. */
export const UNKNOWN_SECONDS = 5;

export const WEIGHTS_FILE = join(import.meta.dirname, "weights.json");

export function readWeights(file = WEIGHTS_FILE): Weights {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Weights;
  } catch {
    return {};
  }
}

/** Paths, longest first (a pure function of the paths and the weights: unit-tested). */
export function orderByWeight(paths: string[], weights: Record<string, number>): string[] {
  const weight = (p: string) => weights[p] ?? UNKNOWN_SECONDS;
  return [...paths].sort((a, b) => weight(b) - weight(a) || (a < b ? -1 : a > b ? 1 : 0));
}

export function weightedSequencer(pass: string): TestSequencerConstructor {
  return class WeightedSequencer extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const root = this.ctx.config.root;
      const key = (s: TestSpecification) => relative(root, s.moduleId).split("\\").join("/");
      const byPath = new Map(files.map((s) => [key(s), s]));
      return orderByWeight([...byPath.keys()], readWeights()[pass] ?? {}).map((p) => byPath.get(p)!);
    }
  };
}
