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

/** Fields that hold a time in Unix ms (`block_ts`, `lastSeenAt`, `watermark` …): shown as ISO times. */
const MS_TIME = /(_ts|At|^now|^watermark|^from|^to)$/;

/** A cell's text: objects as compact JSON, nulls as an em dash, Unix ms times as ISO times. */
export function cellText(value: unknown, name = ""): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "number" && value > 1e11 && value < 1e14 && MS_TIME.test(name)) {
    return new Date(value).toISOString();
  }
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
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
    "table",
    testId ? { "data-testid": testId } : {},
    h("thead", {}, h("tr", {}, ...cols.map((c) => h("th", {}, c)), actions.length ? h("th", {}, "") : null)),
    h(
      "tbody",
      {},
      ...rows.map((row) =>
        h(
          "tr",
          {},
          ...cols.map((c) => h("td", {}, cellText(row[c], c))),
          actions.length
            ? h(
                "td",
                {},
                ...actions
                  .filter((a) => !a.show || a.show(row))
                  .map((a) =>
                    h("button", { class: a.danger ? "danger" : "", onclick: () => void a.run(row) }, a.label),
                  ),
              )
            : null,
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
