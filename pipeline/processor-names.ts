/**
 * The processors' command-line names (`process <name>`), in the order `start` starts them. pipeline/runtime.ts
 * maps each to its factory; the names live apart so that the CLI checks and lists them without loading the pipeline.
 */
export const PROCESSOR_NAMES = [
  "normalize",
  "raw-sink",
  "events-sink",
  "registry",
  "candles",
  "figures",
  "payments",
  "series",
  "series-recompute",
  "holders",
  "holders-recompute",
] as const;

export type ProcessorName = (typeof PROCESSOR_NAMES)[number];
