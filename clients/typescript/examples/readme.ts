/** The README example, type-checked by `npm run typecheck`; the same code as the README's js block (typed-client.test.ts). */
import { createClient } from "@alephium-indexer/client";

// The API's root (or its stage prefix, https://host/prod). The key goes in both X-API-Key and
// Authorization: Bearer, as the API requires.
const baseUrl = process.env.ALEPHIUM_INDEXER_URL ?? "http://127.0.0.1:3000";
const api = createClient(baseUrl, process.env.ALEPHIUM_INDEXER_KEY);

// A public route: the newest normalized events.
const { data, error } = await api.GET("/events/all", { params: { query: { limit: 10 } } });
if (error) throw new Error(`${error.code}: ${error.detail}`);
console.log("events:", data.events.length);
for (const event of data.events) console.log(event.id, event.category, event.sub_kind);

// Poll for what is new since the last id seen.
const next = await api.GET("/events/all", {
  params: { query: { poll: "1", after_id: data.events[0]?.id } },
});
console.log("new events:", next.data?.events.length);

// Your keys, and one key's usage over the last 24 hours by hour.
const keys = await api.GET("/system/keys");
const mine = keys.data?.keys[0];
if (mine) {
  const usage = await api.GET("/system/keys/{keyid}/usage", {
    params: { path: { keyid: mine.key_id }, query: { window: "24h", granularity: "hour" } },
  });
  const requests = usage.data?.last_24h.requests;
  console.log("key", mine.key_prefix, "requests:", requests, "of", usage.data?.limits.rpd);
}

// An admin route (an admin key): create a key for a user. A user key gets the Problem body instead.
const admin = createClient(baseUrl, process.env.ADMIN_KEY);
const created = await admin.POST("/system/keys", { body: { user_id: "alice", plan_id: "pro" } });
if (created.error) console.error("refused:", created.error.status, created.error.code);
else console.log("new key, store it now:", created.data.key);
