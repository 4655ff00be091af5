/** Small DOM helpers: elements, tables of API rows, forms and notices (no framework, no inline script). */
type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | ((e: Event) => void)> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === "function") node.addEventListener(name.replace(/^on/, ""), value);
    else if (value === true) node.setAttribute(name, "");
    else if (value !== false) node.setAttribute(name, value);
  }
  for (const c of children)
    if (c !== null && c !== undefined && c !== false) node.append(typeof c === "number" ? String(c) : c);
  return node;
}

export function card(title: string, ...children: Child[]): HTMLElement {
  return h("section", { class: "card" }, h("h2", {}, title), ...children);
}

export function notice(kind: "ok" | "error" | "secret", ...children: Child[]): HTMLElement {
  return h("div", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, ...children);
}

/** Fields that hold a time in Unix ms (`block_ts`, `lastSeenAt`, `updated_at`, `watermark` …): shown as dates. */
const MS_TIME = /(_ts|At|_at|^now|^watermark|^from|^to)$/;
/** Fields that hold an ISO time (`created_at`, `expires_at` …). */
const ISO_TIME = /(_at|At|_until|^since)$/;
/** Fields whose numbers are identifiers or small codes: no thousands separators. */
const PLAIN_NUMBER = /(id|Id|_index|index|port|status|decimals|year)$/;

/** A date as `2026-11-28 17:45:56 UTC`. */
export function dateText(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** How long ago (or ahead) a time is: `3 s ago`, `5 min ago`, `2 h ago`, `4 d ago`, `in 10 min`. */
export function ago(ms: number, now = Date.now()): string {
  const d = Math.round((now - ms) / 1000);
  const a = Math.abs(d);
  const text =
    a < 60
      ? `${a} s`
      : a < 3600
        ? `${Math.round(a / 60)} min`
        : a < 86400
          ? `${Math.round(a / 3600)} h`
          : `${Math.round(a / 86400)} d`;
  return d >= 0 ? `${text} ago` : `in ${text}`;
}

/** A duration in ms as `850 ms`, `12 s`, `3 min`, `2.5 h`, `4 d`. */
export function durationText(ms: number): string {
  const a = Math.abs(ms);
  if (a < 1000) return `${Math.round(ms)} ms`;
  if (a < 60_000) return `${Math.round(ms / 1000)} s`;
  if (a < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (a < 86_400_000) return `${(ms / 3_600_000).toFixed(1)} h`;
  return `${(ms / 86_400_000).toFixed(1)} d`;
}

const NUMBER = new Intl.NumberFormat("en-US", { maximumFractionDigits: 8 });

/** A column name as a heading: `updated_at` → `Updated at`, `lastSeenAt` → `Last seen at`. */
export function heading(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .trim()
    .toLowerCase()
    .replace(/\bid\b/g, "ID")
    .replace(/ ms$/, "")
    .replace(/\burl\b/g, "URL");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The time a value holds, in Unix ms, or null: numbers in ms under a time-like name, ISO strings. */
function timeOf(value: unknown, name: string): number | null {
  if (typeof value === "number" && value > 1e11 && value < 1e14 && MS_TIME.test(name)) return value;
  if (typeof value === "string" && ISO_TIME.test(name) && /^\d{4}-\d\d-\d\dT/.test(value)) {
    const t = Date.parse(value);
    return Number.isNaN(t) ? null : t;
  }
  return null;
}

/** A cell's text: objects as `key: value` pairs, nulls as an em dash, times as dates, numbers with separators. */
export function cellText(value: unknown, name = ""): string {
  if (value === null || value === undefined) return "—";
  const t = timeOf(value, name);
  if (t !== null) return `${dateText(t)} (${ago(t)})`;
  if (typeof value === "number" && /(_ms|Ms)$/.test(name)) return durationText(value);
  if (typeof value === "number") return PLAIN_NUMBER.test(name) ? String(value) : NUMBER.format(value);
  if (Array.isArray(value)) return value.map((v) => cellText(v)).join(", ");
  if (typeof value === "object")
    return Object.entries(value)
      .map(([k, v]) => `${k}: ${typeof v === "object" && v !== null ? JSON.stringify(v) : String(v)}`)
      .join(", ");
  return String(value);
}

/** A cell's content: times with the exact value on hover, objects and lists as chips, the rest as text. */
export function cell(value: unknown, name = ""): Node {
  const t = timeOf(value, name);
  if (t !== null)
    return h(
      "time",
      { datetime: new Date(t).toISOString(), title: new Date(t).toISOString() },
      dateText(t),
      h("span", { class: "muted" }, ` · ${ago(t)}`),
    );
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value)
      ? value.map((v) => [null, v] as const)
      : Object.entries(value).map(([k, v]) => [k, v] as const);
    if (entries.length === 0) return h("span", { class: "muted" }, "—");
    return h(
      "span",
      { class: "chips" },
      ...entries.map(([k, v]) =>
        h("span", { class: "chip" }, k === null ? "" : h("b", {}, `${heading(k)} `), cellText(v, k ?? "")),
      ),
    );
  }
  return document.createTextNode(cellText(value, name));
}

/**
 * Decode errors by decoder from the API's `/metrics` (`alephium_normalize_decode_errors_total`): counted by the
 * normalize processor of this process since it started (none where normalize runs in its own process).
 */
export function decodeErrorsOf(metrics: string): Map<string, number> {
  const byDecoder = new Map<string, number>();
  for (const line of metrics.split("\n")) {
    const m = /^alephium_normalize_decode_errors_total\{([^}]*)\} ([0-9.e+]+)$/.exec(line);
    if (!m) continue;
    const decoder = /decoder="([^"]*)"/.exec(m[1]!)?.[1] ?? "?";
    byDecoder.set(decoder, (byDecoder.get(decoder) ?? 0) + Number(m[2]));
  }
  return byDecoder;
}

export interface RowAction<R> {
  label: string;
  danger?: boolean;
  show?: (row: R) => boolean;
  run: (row: R) => void | Promise<void>;
}

export function table<R extends Record<string, unknown>>(
  rows: R[],
  columns: string[] | null,
  actions: RowAction<R>[] = [],
  testId = "",
): HTMLElement {
  if (rows.length === 0) return h("p", { class: "muted" }, "None.");
  const cols = columns ?? Object.keys(rows[0] ?? {});
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      testId ? { "data-testid": testId } : {},
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...cols.map((c) => h("th", { title: c }, heading(c))),
          actions.length ? h("th", {}, "") : null,
        ),
      ),
      h(
        "tbody",
        {},
        ...rows.map((row) =>
          h(
            "tr",
            {},
            ...cols.map((c) => h("td", {}, cell(row[c], c))),
            actions.length
              ? h(
                  "td",
                  {},
                  ...actions
                    .filter((a) => !a.show || a.show(row))
                    .map((a) =>
                      h(
                        "button",
                        { class: a.danger ? "danger" : "", onclick: () => void a.run(row) },
                        a.label,
                      ),
                    ),
                )
              : null,
          ),
        ),
      ),
    ),
  );
}

export interface Field {
  name: string;
  label?: string;
  type?: "text" | "number" | "checkbox" | "select" | "json" | "datetime" | "list";
  options?: string[];
  placeholder?: string;
  required?: boolean;
  value?: string;
}

/** Reads a form field the way the API takes it (numbers, booleans, JSON, times as ISO, comma lists). */
function fieldValue(field: Field, input: HTMLInputElement | HTMLSelectElement): unknown {
  const raw = input.value.trim();
  switch (field.type) {
    case "checkbox":
      return (input as HTMLInputElement).checked;
    case "number":
      return raw === "" ? undefined : Number(raw);
    case "json":
      return raw === "" ? undefined : JSON.parse(raw);
    case "datetime":
      return raw === "" ? undefined : new Date(raw).toISOString();
    case "list":
      return raw === "" ? [] : raw.split(",").map((s) => s.trim());
    default:
      return raw === "" ? undefined : raw;
  }
}

export function form(
  fields: Field[],
  submitLabel: string,
  onSubmit: (values: Record<string, unknown>) => Promise<void>,
  testId = "",
): HTMLFormElement {
  const inputs = new Map<Field, HTMLInputElement | HTMLSelectElement>();
  const labels = fields.map((f) => {
    let input: HTMLInputElement | HTMLSelectElement;
    if (f.type === "select") {
      input = h(
        "select",
        { name: f.name },
        ...(f.options ?? []).map((o) => h("option", { value: o }, o || "—")),
      );
      if (f.value !== undefined) input.value = f.value;
    } else {
      input = h("input", {
        name: f.name,
        type:
          f.type === "checkbox"
            ? "checkbox"
            : f.type === "number"
              ? "number"
              : f.type === "datetime"
                ? "datetime-local"
                : "text",
        placeholder: f.placeholder ?? "",
        required: f.required === true,
        value: f.value ?? "",
      });
    }
    inputs.set(f, input);
    return h("label", { class: f.type === "checkbox" ? "check" : "" }, f.label ?? f.name, input);
  });
  const status = h("span", { class: "muted" });
  const el = h(
    "form",
    { class: "inline", ...(testId ? { "data-testid": testId } : {}) },
    ...labels,
    h("button", { type: "submit", class: "primary" }, submitLabel),
    status,
  );
  el.addEventListener("submit", (event) => {
    event.preventDefault();
    const values: Record<string, unknown> = {};
    try {
      for (const [f, input] of inputs) {
        const v = fieldValue(f, input);
        if (v !== undefined) values[f.name] = v;
      }
    } catch (error) {
      status.textContent = `Invalid value: ${(error as Error).message}`;
      return;
    }
    status.textContent = "…";
    onSubmit(values)
      .then(() => {
        status.textContent = "";
      })
      .catch((error: unknown) => {
        status.textContent = "";
        el.after(notice("error", (error as Error).message));
      });
  });
  return el;
}

/** The first array in an API answer (`{ keys: [...] }` → the keys). */
export function rowsOf(answer: unknown): Record<string, unknown>[] {
  if (Array.isArray(answer)) return answer as Record<string, unknown>[];
  if (answer && typeof answer === "object") {
    for (const v of Object.values(answer)) if (Array.isArray(v)) return v as Record<string, unknown>[];
  }
  return [];
}

export const pretty = (value: unknown) => h("pre", {}, JSON.stringify(value, null, 2));
