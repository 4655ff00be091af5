/** The README's example, type-checked by `npm run typecheck` (keep the two the same). */
import { createClient, type Problem } from "@alephium-indexer/client";

// The key goes in both X-API-Key and Authorization: Bearer, as the API requires.
const api = createClient("https://indexer.example", process.env.ALEPHIUM_INDEXER_KEY);

// A public route: the newest normalized events.
const { data, error } = await api.GET("/events/all", { params: { query: { limit: 10 } } });
if (error) throw new Error(`${error.code}: ${error.detail}`);
for (const event of data.events) console.log(event.id, event.category, event.sub_kind);

// Poll for what is new since the last id seen.
const next = await api.GET("/events/all", {
  params: { query: { poll: "1", after_id: data.events[0]?.id } },
});
console.log(next.data?.events.length, "new events");

// Your keys, and one key's usage over the last 24 hours by hour.
const keys = await api.GET("/system/keys");
const usage = await api.GET("/system/keys/{keyid}/usage", {
  params: { path: { keyid: keys.data!.keys[0]!.key_id }, query: { window: "24h", granularity: "hour" } },
});
console.log(usage.data?.last_24h.requests, "of", usage.data?.limits.rpd);

// An admin route (an admin key): create a key for a user.
const admin = createClient("https://indexer.example", process.env.ADMIN_KEY);
const created = await admin.POST("/system/keys", { body: { user_id: "alice", plan_id: "pro" } });
if (created.error) {
  const problem: Problem = created.error; // { status, code, detail, ... }: 403 admin_required with a user key
  console.error(problem.status, problem.code);
} else console.log("store it now:", created.data.key);
