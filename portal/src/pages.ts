/** The portal's pages: each calls the API's own routes (through `api/…`) and nothing else. */
import { call, portalGet } from "./api.ts";
import { pairChart, seriesChart } from "./charts.ts";
import {
  ago,
  card,
  cellText,
  decodeErrorsOf,
  durationText,
  form,
  h,
  heading,
  notice,
  pretty,
  rowsOf,
  table,
} from "./ui.ts";

type Row = Record<string, unknown>;
export type Page = (main: HTMLElement) => Promise<(() => void) | undefined>;

const enc = encodeURIComponent;

/** Replaces a card's body with a fresh read; errors are shown in place. */
async function refreshInto(target: HTMLElement, read: () => Promise<Node>): Promise<void> {
  try {
    target.replaceChildren(await read());
  } catch (error) {
    target.replaceChildren(notice("error", (error as Error).message));
  }
}

/** A list card that re-reads itself after every action. */
function listCard(title: string, read: (reload: () => Promise<void>) => Promise<Node>, ...extra: Node[]) {
  const body = h("div");
  const reload = () => refreshInto(body, () => read(reload));
  const el = card(title, ...extra, body);
  return { el, reload };
}

const done = (message: string, value?: unknown) =>
  h("div", {}, notice("ok", message), value === undefined ? null : pretty(value));

async function plans(): Promise<string[]> {
  const answer = await call<{ plans: { plan_id: string }[] }>("GET", "system/plans");
  return answer.plans.map((p) => p.plan_id);
}

/** A lag's colour class: caught up, behind, far behind. */
const lagClass = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? "muted" : ms < 120_000 ? "lag-ok" : ms < 600_000 ? "lag-warn" : "lag-bad";

const tile = (title: string, ...children: (Node | string)[]) =>
  h("div", { class: "tile" }, h("div", { class: "muted" }, title), ...children);

/** The status at a glance: indexing phase, watermark lag, processors, price sources, decode and code-hash warnings. */
function overview(status: Row, decodeErrors: Map<string, number> | null): Node {
  const decodeTotal = decodeErrors ? [...decodeErrors.values()].reduce((a, b) => a + b, 0) : null;
  const progress = (status.progress ?? {}) as Row;
  const processors = (progress.processors ?? []) as { name: string; lag_ms: number | null }[];
  const sources = (status.price_sources ?? []) as { source?: string; id?: string; status: string }[];
  const degraded = sources.filter((s) => s.status !== "ok");
  const changes = (status.code_hash_changes ?? []) as { dapp_id: string; contract_address: string }[];
  const recent = (status.recent_decode_errors ?? []) as {
    dapp_id: string;
    contract_address: string;
    contract_event_index: number | null;
    reason: string;
    timestamp: number;
  }[];
  const lag = status.watermark_lag_ms as number | null;
  const phase = String(progress.phase ?? "unknown");
  const toGo = progress.blocks_to_go as number | null | undefined;
  const eta = progress.eta_ms as number | null | undefined;
  return h(
    "div",
    { class: "overview", "data-testid": "status-overview" },
    tile(
      "Indexing",
      h("div", { class: "value" }, heading(phase)),
      h(
        "div",
        { class: "muted" },
        phase === "backfill"
          ? `${cellText(toGo ?? null, "blocks_to_go")} blocks to go${eta ? `, about ${durationText(eta)}` : ""}`
          : typeof progress.updated_at === "number"
            ? `saved ${ago(progress.updated_at)}`
            : "",
      ),
    ),
    tile(
      "Watermark lag (events served up to)",
      h(
        "div",
        { class: `value ${lagClass(lag)}` },
        lag === null || lag === undefined ? "—" : durationText(lag),
      ),
    ),
    tile(
      "Processors' lag behind ingest",
      processors.length === 0
        ? h("div", { class: "muted" }, "none reported yet")
        : h(
            "div",
            {},
            ...processors.map((p) =>
              h(
                "div",
                {},
                `${p.name}: `,
                h("span", { class: lagClass(p.lag_ms) }, p.lag_ms === null ? "—" : durationText(p.lag_ms)),
              ),
            ),
          ),
    ),
    tile(
      "Price sources",
      h(
        "div",
        { class: `value ${degraded.length ? "lag-bad" : "lag-ok"}` },
        sources.length === 0 ? "none" : `${sources.length - degraded.length} of ${sources.length} ok`,
      ),
      degraded.length
        ? h("div", {}, `degraded: ${degraded.map((s) => s.source ?? s.id ?? "?").join(", ")}`)
        : "",
    ),
    tile(
      "Decode errors (this process, since its start)",
      h(
        "div",
        { class: `value ${decodeTotal ? "lag-warn" : "lag-ok"}` },
        decodeTotal === null ? "—" : cellText(decodeTotal, "count"),
      ),
      ...[...(decodeErrors ?? new Map<string, number>()).entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([decoder, n]) => h("div", { class: "muted" }, `${decoder}: ${cellText(n, "count")}`)),
      ...(recent.length
        ? [
            h("div", {}, "Newest refused events:"),
            ...recent
              .slice(0, 5)
              .map((e) =>
                h(
                  "div",
                  { class: "muted", "data-testid": "recent-decode-error" },
                  `${e.dapp_id} ${e.contract_address.slice(0, 12)}… #${e.contract_event_index ?? "?"}: ${e.reason} (${ago(e.timestamp)})`,
                ),
              ),
          ]
        : []),
    ),
    tile(
      "Code-hash warnings",
      h("div", { class: `value ${changes.length ? "lag-bad" : "lag-ok"}` }, String(changes.length)),
      ...changes
        .slice(0, 5)
        .map((c) => h("div", { class: "muted" }, `${c.dapp_id} ${c.contract_address.slice(0, 12)}…`)),
    ),
  );
}

export const statusPage: Page = async (main) => {
  const top = h("div");
  const body = h("div");
  main.append(card("Overview", top), card("Status: chains, watermark, trade feed, price sources", body));
  const render = (value: Row): Node =>
    h(
      "div",
      {},
      ...Object.entries(value).map(([k, v]) =>
        Array.isArray(v)
          ? h("div", {}, h("h3", {}, heading(k)), table(v as Row[], null))
          : v && typeof v === "object"
            ? h("div", {}, h("h3", {}, heading(k)), render(v as Row))
            : h("p", {}, h("strong", {}, `${heading(k)}: `), cellText(v, k)),
      ),
    );
  const load = async () => {
    let status: Row | null = null;
    await refreshInto(body, async () => {
      status = await call<Row>("GET", "status");
      return render(status);
    });
    if (status) {
      const metrics = await call<string>("GET", "metrics").catch(() => null);
      top.replaceChildren(overview(status, typeof metrics === "string" ? decodeErrorsOf(metrics) : null));
    }
  };
  await load();
  const timer = setInterval(() => void load(), 5000);
  return () => clearInterval(timer);
};

export const keysPage: Page = async (main) => {
  const shown = h("div", { "data-testid": "new-key" });
  const usage = h("div");
  // GET /system/keys lists one owner's keys (the caller's by default): the owner is chosen here.
  const owner = h("input", {
    name: "owner",
    placeholder: "owner (user id); empty: the portal's own",
    "data-testid": "owner",
  });
  const list = listCard(
    "Keys",
    async (reload) => {
      const q = owner.value.trim() ? `?user_id=${enc(owner.value.trim())}` : "";
      const answer = await call<{ keys: Row[] }>("GET", `system/keys${q}`);
      return table(
        answer.keys,
        [
          "key_prefix",
          "user_id",
          "plan_id",
          "level",
          "allowed_origins",
          "valid_until",
          "revoked_at",
          "key_id",
        ],
        [
          {
            label: "Usage",
            run: async (row) => {
              usage.replaceChildren(
                card(
                  `Usage of ${row.key_prefix}`,
                  pretty(await call("GET", `system/keys/${row.key_id}/usage?window=24h`)),
                ),
              );
            },
          },
          {
            label: "Revoke",
            danger: true,
            show: (row) => !row.revoked_at,
            run: async (row) => {
              if (!confirm(`Revoke ${row.key_prefix} of ${row.user_id}?`)) return;
              await call("POST", `system/key/${row.key_id}/delete`);
              await reload();
            },
          },
        ],
        "keys-table",
      );
    },
    h(
      "div",
      { class: "toolbar" },
      "Owner",
      owner,
      h("button", { type: "button", onclick: () => void list.reload() }, "List"),
    ),
  );
  const planIds = await plans().catch(() => ["free"]);
  const create = card(
    "Create a key",
    form(
      [
        { name: "user_id", label: "Owner (user id)", required: true },
        { name: "plan_id", label: "Plan", type: "select", options: planIds },
        { name: "level", type: "select", options: ["user", "admin"] },
        { name: "valid_until", label: "Valid until (empty: the plan's validity)", type: "datetime" },
      ],
      "Create",
      async (v) => {
        const created = await call<{ key: string; key_prefix: string }>("POST", "system/keys", v);
        owner.value = String(v.user_id);
        shown.replaceChildren(
          notice(
            "secret",
            h("strong", {}, "The new key, shown this once: "),
            h("code", { "data-testid": "raw-key" }, created.key),
          ),
        );
        await list.reload();
      },
      "create-key",
    ),
    shown,
  );
  const edit = card(
    "Change a key (origins, plan, validity)",
    form(
      [
        { name: "key_id", label: "Key id", required: true },
        { name: "action", type: "select", options: ["origin/add", "origin/del", "plan/set", "update"] },
        { name: "value", label: "Origin, plan id, or valid until (ISO time, empty: no end)" },
      ],
      "Apply",
      async (v) => {
        const action = String(v.action);
        const value = v.value === undefined ? null : String(v.value);
        const body =
          action === "plan/set"
            ? { plan_id: value }
            : action === "update"
              ? { valid_until: value }
              : { origin: value };
        await call("POST", `system/key/${enc(String(v.key_id))}/${action}`, body);
        await list.reload();
      },
    ),
  );
  main.append(create, list.el, edit, usage);
  await list.reload();
  return undefined;
};

export const plansPage: Page = async (main) => {
  const list = listCard("Plans", async () =>
    table((await call<{ plans: Row[] }>("GET", "system/plans")).plans, null),
  );
  main.append(
    list.el,
    card(
      "Add or update a plan",
      form(
        [
          { name: "plan_id", required: true },
          { name: "name", required: true },
          { name: "rpm", type: "number", required: true },
          { name: "rpd", type: "number", required: true },
          { name: "price", value: "0" },
          { name: "price_alph", value: "0" },
          { name: "validity_days", type: "number", value: "30" },
        ],
        "Save",
        async (v) => {
          await call("POST", "system/plans/upsert", v);
          await list.reload();
        },
      ),
    ),
  );
  await list.reload();
  return undefined;
};

export const bansPage: Page = async (main) => {
  const list = listCard("Bans", async (reload) =>
    table(
      rowsOf(await call("GET", "system/bans?limit=200")),
      ["ban_id", "kind", "value", "reason", "state", "expires_at", "created_by", "created_at"],
      [
        {
          label: "Lift",
          show: (r) => r.state === "active",
          run: async (r) => {
            await call("POST", `system/bans/${r.ban_id}/delete`);
            await reload();
          },
        },
      ],
    ),
  );
  main.append(
    card(
      "Ban",
      form(
        [
          { name: "kind", type: "select", options: ["user", "telegram", "ip"] },
          { name: "value", label: "User id, Telegram user id, or IP/CIDR", required: true },
          { name: "reason", required: true },
          { name: "duration_s", label: "Duration (s, empty: no end)", type: "number" },
        ],
        "Ban",
        async (v) => {
          await call("POST", "system/bans", v);
          await list.reload();
        },
      ),
    ),
    list.el,
  );
  await list.reload();
  return undefined;
};

const ACTIVE_JOB = new Set(["queued", "counting", "running", "pending", "active", "created", "retry"]);

export const jobsPage: Page = async (main) => {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const list = listCard("Reindex jobs", async (reload) => {
    const jobs = rowsOf(await call("GET", "system/jobs?limit=50"));
    if (timer) clearTimeout(timer);
    // Progress while a job runs: the list re-reads itself every second until none is active.
    if (jobs.some((j) => ACTIVE_JOB.has(String(j.state)))) timer = setTimeout(() => void reload(), 1000);
    return table(
      jobs.map(
        (j): Row => ({
          ...j,
          percent: (j.progress as { percent: number | null } | undefined)?.percent ?? null,
        }),
      ),
      [
        "job_id",
        "state",
        "from_ts",
        "to_ts",
        "dapp_id",
        "blocks_done",
        "blocks_total",
        "percent",
        "error",
        "created_by",
      ],
      [
        {
          label: "Cancel",
          danger: true,
          show: (j) => ACTIVE_JOB.has(String(j.state)),
          run: async (j) => {
            await call("POST", `system/jobs/${j.job_id}/cancel`);
            await reload();
          },
        },
      ],
      "jobs-table",
    );
  });
  const now = Date.now();
  main.append(
    card(
      "Create a reindex job",
      form(
        [
          {
            name: "from",
            label: "From (Unix ms)",
            type: "number",
            value: String(now - 3_600_000),
            required: true,
          },
          { name: "to", label: "To (Unix ms)", type: "number", value: String(now), required: true },
          { name: "dapp_id", label: "Dapp (optional)" },
          { name: "contract_address", label: "Contract (optional)" },
        ],
        "Start",
        async (v) => {
          await call("POST", "system/jobs", v);
          await list.reload();
        },
        "create-job",
      ),
    ),
    list.el,
  );
  await list.reload();
  return () => {
    if (timer) clearTimeout(timer);
  };
};

export const pricesPage: Page = async (main) => {
  const sources = rowsOf(await call("GET", "price/source/all"));
  const source = h(
    "select",
    { "data-testid": "source" },
    ...sources.map((s) => h("option", { value: String(s.id) }, String(s.id))),
  );
  const chartBox = h("div");
  const legs = h("div");
  let cleanup: (() => void) | undefined;
  const flag = (name: string, label: string) => ({
    label,
    run: async (p: Row) => {
      await call("POST", `price/source/${enc(source.value)}/pair/${p.id}/update`, { [name]: !p[name] });
      await list.reload();
    },
  });
  const showLegs = async (p: Row) => {
    const base = `price/source/${enc(source.value)}/pair/${p.id}/token`;
    const body = listCard(`Token legs of pair ${p.id} (${p.pair_label})`, async (reload) =>
      table(rowsOf(await call("GET", `${base}/all`)), null, [
        {
          label: "Delete",
          danger: true,
          run: async (t) => {
            await call("POST", `${base}/del`, { id: t.id });
            await reload();
          },
        },
      ]),
    );
    body.el.append(
      form(
        [
          { name: "type", type: "select", options: ["base", "quote"] },
          { name: "chain", value: "alph" },
          { name: "token_id", label: "Token id" },
          { name: "token_contract", label: "Token contract" },
          { name: "in_consolidated_market", label: "In consolidated market", type: "checkbox" },
        ],
        "Add leg",
        async (v) => {
          await call("POST", `${base}/add`, v);
          await body.reload();
        },
      ),
    );
    legs.replaceChildren(body.el);
    await body.reload();
  };
  const list = listCard("Pairs", async (reload) => {
    const pairs = rowsOf(await call("GET", `price/source/${enc(source.value)}/pair/all`));
    return table(
      pairs,
      [
        "id",
        "pair_label",
        "pair_symbol",
        "denomination",
        "enabled",
        "enable_trades",
        "includeInTVL",
        "available",
      ],
      [
        {
          label: "Chart",
          run: (p) => {
            cleanup?.();
            chartBox.replaceChildren();
            cleanup = pairChart(chartBox, Number(p.id), `${p.pair_label} (${source.value} #${p.id})`);
          },
        },
        flag("enabled", "Toggle enabled"),
        flag("enable_trades", "Toggle trades"),
        flag("includeInTVL", "Toggle TVL"),
        { label: "Token legs", run: showLegs },
        {
          label: "Delete",
          danger: true,
          run: async (p) => {
            if (!confirm(`Delete pair ${p.pair_label}?`)) return;
            await call("POST", `price/source/${enc(source.value)}/pair/${p.id}/del`);
            await reload();
          },
        },
      ],
      "pairs-table",
    );
  });
  const available = h("div");
  source.addEventListener("change", () => void list.reload());
  main.append(
    card(
      "Price sources",
      table(sources, null),
      h("div", { class: "toolbar" }, "Source", source),
      form(
        [
          { name: "pair_symbol", label: "Pair symbol or pool address" },
          { name: "token_id", label: "Token id (optional)" },
          { name: "chain_id", label: "Chain id (optional)", type: "number" },
        ],
        "Add pair",
        async (v) => {
          const added = await call<{ id: number }>("POST", `price/source/${enc(source.value)}/pair/add`, v);
          await list.reload();
          available.replaceChildren(notice("ok", `Pair ${added.id} added.`));
        },
        "add-pair",
      ),
      h(
        "button",
        {
          type: "button",
          onclick: async () =>
            refreshInto(available, async () =>
              table(rowsOf(await call("GET", `price/source/${enc(source.value)}/pair/available`)), null),
            ),
        },
        "Available pairs of the source",
      ),
      available,
    ),
    list.el,
    legs,
    chartBox,
  );
  await list.reload();
  return () => cleanup?.();
};

export const categoriesPage: Page = async (main) => {
  const list = listCard("Categories", async (reload) =>
    table(rowsOf(await call("GET", "category/all?include_deleted=true")), null, [
      {
        label: "Delete",
        danger: true,
        run: async (c) => {
          await call("POST", "category/del", { id: c.id });
          await reload();
        },
      },
    ]),
  );
  main.append(
    card(
      "Add or re-activate a category",
      form(
        [
          { name: "id", required: true },
          { name: "sort_order", type: "number" },
        ],
        "Add",
        async (v) => {
          await call("POST", "category/add", v);
          await list.reload();
        },
      ),
    ),
    list.el,
  );
  await list.reload();
  return undefined;
};

export const tokensPage: Page = async (main) => {
  const results = h("div");
  const detail = h("div");
  const search = async (v: Record<string, unknown>) => {
    const q = new URLSearchParams({ pageSize: "50" });
    for (const [k, value] of Object.entries(v))
      if (value !== "" && value !== undefined) q.set(k, String(value));
    const rows = rowsOf(await call("GET", `token/all?${q}`));
    results.replaceChildren(
      table(
        rows,
        ["id", "symbol", "name", "chain", "registered", "moderation", "categories", "decimals"],
        [
          {
            label: "Details",
            run: async (t) =>
              detail.replaceChildren(
                card(`Token ${t.symbol}`, pretty(await call("GET", `token/${t.id}/details`))),
              ),
          },
          {
            label: "Delete",
            danger: true,
            run: async (t) => {
              if (!confirm(`Delete token ${t.symbol}?`)) return;
              await call("POST", `token/${t.id}/del`);
              detail.replaceChildren(notice("ok", `Token ${t.symbol} deleted.`));
            },
          },
        ],
      ),
    );
  };
  main.append(
    card(
      "Search tokens",
      form(
        [
          { name: "search", label: "Symbol, name or id" },
          { name: "registered", type: "select", options: ["", "true", "false"] },
          { name: "moderation", type: "select", options: ["", "show", "hide"] },
          { name: "category", label: "Category" },
        ],
        "Search",
        search,
      ),
      results,
    ),
    detail,
    card(
      "Update a token (registration, categories, metadata)",
      form(
        [
          { name: "token_id", label: "Token id", required: true },
          { name: "registered", type: "select", options: ["", "true", "false"] },
          { name: "category_ids", label: "Categories (comma-separated)", type: "list" },
          { name: "metadata", label: "Metadata (JSON)", type: "json" },
          { name: "logo_uri", label: "Logo URI" },
        ],
        "Update",
        async (v) => {
          const { token_id: id, registered, category_ids: cats, ...rest } = v;
          const body: Row = { ...rest };
          if (registered !== undefined) body.registered = registered === "true";
          if (Array.isArray(cats) && cats.length > 0) body.category_ids = cats;
          detail.replaceChildren(
            card("Updated", pretty(await call("POST", `token/${enc(String(id))}/update`, body))),
          );
        },
      ),
    ),
  );
  await search({});
  return undefined;
};

export const seriesPage: Page = async (main) => {
  const available = await call<Row>("GET", "series/available");
  const ids = rowsOf(available).map((s) => String(s.seriesId ?? s.id));
  const seriesSelect = h(
    "select",
    { "data-testid": "series" },
    ...ids.map((s) => h("option", { value: s }, s)),
  );
  if (ids.includes("chain-transactions")) seriesSelect.value = "chain-transactions";
  const instances = h("div");
  const chartBox = h("div");
  let cleanup: (() => void) | undefined;
  const loadInstances = () =>
    refreshInto(instances, async () =>
      table(
        rowsOf(await call("GET", `series/${enc(seriesSelect.value)}/instances?limit=100`)),
        ["instanceId", "dimensions", "lastSeenAt"],
        [
          {
            label: "Chart",
            run: async (i) => {
              const scales = rowsOf(
                await call("GET", `series/instances/${i.instanceId}/scales?has_data=true`),
              )
                .filter((s) => s.hasData !== false)
                .map((s) => String(s.scale));
              cleanup?.();
              chartBox.replaceChildren(h("h3", {}, `${seriesSelect.value} ${cellText(i.dimensions)}`));
              cleanup = seriesChart(chartBox, String(i.instanceId), scales.length ? scales : ["raw"]);
            },
          },
        ],
        "instances-table",
      ),
    );
  seriesSelect.addEventListener("change", () => void loadInstances());
  const patched = h("div");
  main.append(
    card("Series instances", h("div", { class: "toolbar" }, "Series", seriesSelect), instances),
    chartBox,
    card(
      "Instance settings (admin)",
      form(
        [
          { name: "instance_id", label: "Instance id", required: true },
          { name: "rawArchivePageDays", label: "Raw archive page days", type: "number", required: true },
        ],
        "Save",
        async (v) => {
          const answer = await call("PATCH", `series/instances/${enc(String(v.instance_id))}`, {
            rawArchivePageDays: v.rawArchivePageDays,
          });
          patched.replaceChildren(done("Saved.", answer));
        },
      ),
      patched,
    ),
  );
  await loadInstances();
  return () => cleanup?.();
};

export const paymentsPage: Page = async (main) => {
  const invoices = listCard("Invoices", async (reload) =>
    table(rowsOf(await call("GET", "payments/invoices?limit=100")), null, [
      {
        label: "Cancel",
        danger: true,
        show: (i) => i.status === "open" || i.status === "pending",
        run: async (i) => {
          await call("POST", `payments/invoice/${i.invoice_id}/cancel`);
          await reload();
        },
      },
    ]),
  );
  const payments = listCard("Payments", async () =>
    table(rowsOf(await call("GET", "payments?limit=100")), null),
  );
  main.append(
    card(
      "Record a manual payment",
      form(
        [
          { name: "invoice_id", label: "Invoice id", required: true },
          { name: "amount_alph", label: "Amount (ALPH)", required: true },
          { name: "note" },
        ],
        "Record",
        async (v) => {
          await call("POST", "payments/manual", v);
          await invoices.reload();
          await payments.reload();
        },
      ),
    ),
    invoices.el,
    payments.el,
  );
  await Promise.all([invoices.reload(), payments.reload()]);
  return undefined;
};

export const botAdminsPage: Page = async (main) => {
  const list = listCard("Bot admins", async (reload) =>
    table(rowsOf(await call("GET", "system/telegram/admins")), null, [
      {
        label: "Remove",
        danger: true,
        run: async (a) => {
          await call("POST", "system/telegram/admins/remove", { telegram_user_id: a.telegram_user_id });
          await reload();
        },
      },
    ]),
  );
  main.append(
    card(
      "Add a bot admin",
      form(
        [
          { name: "telegram_user_id", label: "Telegram user id", type: "number", required: true },
          { name: "username" },
        ],
        "Add",
        async (v) => {
          await call("POST", "system/telegram/admins/add", v);
          await list.reload();
        },
      ),
    ),
    list.el,
  );
  await list.reload();
  return undefined;
};

export const wireguardPage: Page = async (main) => {
  const created = h("div");
  const server = h("div");
  const list = listCard("WireGuard peers", async (reload) =>
    table(rowsOf(await call("GET", "system/wireguard/peers?pageSize=100")), null, [
      {
        label: "Revoke",
        danger: true,
        show: (p) => !p.revoked_at,
        run: async (p) => {
          await call("POST", `system/wireguard/peers/${p.peer_id}/revoke`);
          await reload();
        },
      },
    ]),
  );
  main.append(
    card(
      "Add a peer",
      form(
        [
          { name: "user_id", required: true },
          { name: "name", required: true },
        ],
        "Add",
        async (v) => {
          const answer = await call("POST", "system/wireguard/peers", v);
          created.replaceChildren(done("Peer created; its client configuration is shown this once:", answer));
          await list.reload();
        },
      ),
      created,
    ),
    list.el,
    card(
      "Server [Peer] sections",
      h(
        "button",
        {
          type: "button",
          onclick: () =>
            void refreshInto(server, async () => pretty(await call("GET", "system/wireguard/server-peers"))),
        },
        "Show",
      ),
      server,
    ),
  );
  await list.reload();
  return undefined;
};

export const auditPage: Page = async (main) => {
  const list = listCard("Audit log (who, what, when)", async () =>
    table(
      (await portalGet<{ entries: Row[] }>("audit?limit=200")).entries,
      ["at", "actor", "action", "target", "status", "detail"],
      [],
      "audit-table",
    ),
  );
  main.append(list.el);
  await list.reload();
  return undefined;
};
