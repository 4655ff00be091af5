/**
 * The client side of bench:stream, in a process of its own (so that parsing 1,000 connections does not run on the
 * API's event loop): N Server-Sent Events clients of /events/stream, or N pollers of /events/all?poll=1, each
 * recording when it received which event id. Prints one JSON object { received: { [id]: [ms, …] }, errors } on
 * stdout after `seconds`.
 * Run by bench/stream-fanout.ts: node --import tsx bench/stream-clients.ts <stream|poll> <base> <key> <n> <seconds> <after_id> <poll_ms>
 */
import { Agent, fetch } from "undici";

const [mode, base, key, nText, secondsText, afterId, pollMsText] = process.argv.slice(2);
const n = Number(nText);
const seconds = Number(secondsText);
const pollMs = Number(pollMsText ?? 1000);
const dispatcher = new Agent({ connections: n + 10, keepAliveTimeout: 60_000 });
const headers = { "x-api-key": key!, authorization: `Bearer ${key}` };
const received = new Map<string, number[]>();
let errors = 0;
const stop = new AbortController();
const note = (id: string) => {
  let list = received.get(id);
  if (!list) {
    list = [];
    received.set(id, list);
  }
  list.push(Date.now());
};

async function streamClient() {
  try {
    const res = await fetch(`${base}/events/stream?after_id=${afterId}`, {
      headers,
      signal: stop.signal,
      dispatcher,
    });
    if (res.status !== 200) {
      errors++;
      return;
    }
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (.*)$/m.exec(block)?.[1];
        if (id) note(id);
      }
    }
  } catch (error) {
    if (!stop.signal.aborted) {
      if (errors++ === 0) process.stderr.write(`stream client error: ${String(error)}\n`);
    }
  }
}

async function poller(offset: number) {
  let after = afterId!;
  await new Promise((r) => setTimeout(r, offset));
  while (!stop.signal.aborted) {
    try {
      const res = await fetch(`${base}/events/all?poll=1&limit=200&after_id=${after}`, {
        headers,
        signal: stop.signal,
        dispatcher,
      });
      const body = (await res.json()) as { events?: { id: string }[] };
      for (const e of body.events ?? []) note(e.id);
      const last = body.events?.at(-1)?.id;
      if (last) after = last;
      if ((body.events?.length ?? 0) === 200) continue;
    } catch {
      if (!stop.signal.aborted) errors++;
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

const clients = Array.from({ length: n }, (_, i) =>
  mode === "stream" ? streamClient() : poller((i * pollMs) / n),
);
await new Promise((r) => setTimeout(r, seconds * 1000));
stop.abort();
await Promise.allSettled(clients);
process.stdout.write(JSON.stringify({ received: Object.fromEntries(received), errors }));
