/**
 * The batch rule every processor keeps, in one place: a batch is applied in message order, each run of
 * consecutive block messages as one write, and each retraction after the run before it. So a block and its
 * retraction in one batch leave the block retracted, and a replay of any batch (or any split of it into batches)
 * leaves the state of one clean pass: the replay guarantees of every processor rest on this order.
 */
type Message = { kind: "block" } | { kind: "retraction" };
export type Block<M> = Extract<M, { kind: "block" }>;
export type Retraction<M> = Extract<M, { kind: "retraction" }>;

export interface RunWriter<M extends Message> {
  /** Writes one run of consecutive block messages (never empty), in message order. */
  blocks(run: Block<M>[]): Promise<void>;
  /** Applies one retraction, after every block message before it is written. */
  retraction(message: Retraction<M>): Promise<void>;
}

export async function applyInRuns<M extends Message>(
  messages: readonly M[],
  writer: RunWriter<M>,
): Promise<void> {
  let run: Block<M>[] = [];
  for (const m of messages) {
    if (m.kind === "block") {
      run.push(m as Block<M>);
      continue;
    }
    if (run.length > 0) await writer.blocks(run);
    run = [];
    await writer.retraction(m as Retraction<M>);
  }
  if (run.length > 0) await writer.blocks(run);
}
