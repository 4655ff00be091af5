/**
 * The client side of bench:stream, in a process of its own (so that parsing thousands of connections does not run on
 * the API's event loop): N Server-Sent Events clients of `<base>/events/stream` (the route, or the bench's bare SSE
 * server, which answers any path), or N pollers of /events/all?poll=1, each recording when it received which event
 * id. Prints `ready` on stdout once every stream client has its response headers (pollers at once), then, `seconds`
 * after that, one JSON object { received: { [id]: [ms, …] }, errors }.
 * Run by bench/stream-fanout.ts: node --import tsx bench/stream-clients.ts <stream|poll> <base> <key> <n> <seconds> <after_id> <poll_ms>
 */
import { setMaxListeners } from "node:events";
import { Agent as HttpAgent, get as httpGet } from "node:http";
import { Agent, fetch } from "undici";

const [mode, base, key, nText, secondsText, afterId, pollMsText] = process.argv.slice(2);
const n = Number(nText);
const seconds = Number(secondsText);
const pollMs = Number(pollMsText ?? 1000);
const dispatcher = new Agent({ connections: n + 10, keepAliveTimeout: 60_000 });
const agent = new HttpAgent({ keepAlive: true, maxSockets: n + 10 });
const headers = { "x-api-key": key!, authorization: `Bearer ${key}` };
const received = new Map<string, number[]>();
let errors = 0;
let connected = 0;
let onConnected = () => {};
const stop = new AbortController();
setMaxListeners(0, stop.signal); // every client listens to it
const note = (id: string, at: number) => {
  let list = received.get(id);
  if (!list) {
    list = [];
    received.set(id, list);
  }
  list.push(at);
};

/**
 * One stream client on node:http (cheaper per chunk than fetch's web streams: at 10,000 connections the clients'
 * own parsing was what the figures measured): records the receipt time of each `id:` line.
 */
function streamClient(): Promise<void> {
  return new Promise<void>((resolve) => {
    let buffer = "";
    const req = httpGet(
      `${base}/events/stream?after_id=${afterId}`,
      { headers, agent, signal: stop.signal },
      (res) => {
        if (res.statusCode !== 200) {
          errors++;
          onConnected();
          res.resume();
          return resolve();
        }
        connected++;
        onConnected();
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          const at = Date.now();
          buffer += chunk;
          const end = buffer.lastIndexOf("\n\n");
          if (end < 0) return;
          const blocks = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          for (let i = blocks.indexOf("id: "); i >= 0; i = blocks.indexOf("id: ", i + 4)) {
            if (i > 0 && blocks[i - 1] !== "\n") continue;
            note(blocks.slice(i + 4, blocks.indexOf("\n", i)), at);
          }
        });
        res.on("close", resolve);
        res.on("error", () => resolve());
      },
    );
    req.on("error", (error) => {
      if (!stop.signal.aborted) {
        if (errors++ === 0) process.stderr.write(`stream client error: ${String(error)}\n`);
        onConnected();
      }
      resolve();
    });
  });
}

async function poller(offset: number) {
  let after = afterId!;
  await new Promise((r) => setTimeout(r, offset));
  while (!stop.signal.aborted) {
    try {
      // No abort signal: undici's fetch refuses this process's AbortSignal ("emitter must be an EventEmitter");
      // a poll is short, and the loop stops at the next turn.
      const res = await fetch(`${base}/events/all?poll=1&limit=200&after_id=${after}`, {
        headers,
        dispatcher,
      });
      const body = (await res.json()) as { events?: { id: string }[] };
      const at = Date.now();
      for (const e of body.events ?? []) note(e.id, at);
      const last = body.events?.at(-1)?.id;
      if (last) after = last;
      if ((body.events?.length ?? 0) === 200) continue;
    } catch (error) {
      if (!stop.signal.aborted && errors++ === 0) process.stderr.write(`poller error: ${String(error)}\n`);
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

let clients: Promise<void>[] = [];
if (mode === "stream") {
  // Connect in waves of 500, so that the API's accept queue is not the thing measured.
  const all = new Promise<void>((resolve) => {
    onConnected = () => {
      if (connected + errors >= n) resolve();
    };
  });
  for (let i = 0; i < n; i += 500) {
    const wave = Array.from({ length: Math.min(500, n - i) }, () => streamClient());
    clients = clients.concat(wave);
    const target = i + wave.length;
    while (connected + errors < target) await new Promise((r) => setTimeout(r, 10));
  }
  await all;
} else {
  clients = Array.from({ length: n }, (_, i) => poller((i * pollMs) / n));
}
process.stdout.write("ready\n");
await new Promise((r) => setTimeout(r, seconds * 1000));
stop.abort();
await Promise.allSettled(clients);
process.stdout.write(JSON.stringify({ received: Object.fromEntries(received), errors }));
