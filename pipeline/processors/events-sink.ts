/** Events sink: `alephium.events.v2` → the events tables, written by `lib/events/writer.ts`. */
import { writeEventsBatch } from "../../lib/events/writer.ts";
import { CONSUMER_GROUPS, type EventsMessage } from "../messages.ts";
import { defineProcessor } from "../processor.ts";

export const eventsSinkProcessor = defineProcessor<EventsMessage>({
  name: "events-sink",
  topic: "events",
  group: CONSUMER_GROUPS.eventsSink,
  codec: (codecs) => codecs.events,
  async handle(messages, { deps }) {
    await writeEventsBatch({ ...deps, maxPayloadBytes: deps.config.PAYLOAD_MAX_BYTES }, messages);
  },
});
