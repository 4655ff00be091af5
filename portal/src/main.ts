/** The admin portal's shell: the session, the navigation (hash routes) and the page in view. */
import "./style.css";
import { loadSession, type Session, signOut } from "./api.ts";
import * as pages from "./pages.ts";
import { h, notice } from "./ui.ts";

const ROUTES: [string, string, pages.Page][] = [
  ["status", "Status", pages.statusPage],
  ["keys", "Keys", pages.keysPage],
  ["plans", "Plans", pages.plansPage],
  ["bans", "Bans", pages.bansPage],
  ["jobs", "Jobs", pages.jobsPage],
  ["prices", "Prices and pairs", pages.pricesPage],
  ["categories", "Categories", pages.categoriesPage],
  ["tokens", "Tokens", pages.tokensPage],
  ["series", "Series", pages.seriesPage],
  ["payments", "Payments", pages.paymentsPage],
  ["bot-admins", "Bot admins", pages.botAdminsPage],
  ["wireguard", "WireGuard", pages.wireguardPage],
  ["audit", "Audit log", pages.auditPage],
];

const app = document.getElementById("app") as HTMLElement;
const footer = h(
  "footer",
  {},
  "Charts: TradingView Lightweight Charts™, Copyright (c) TradingView, Inc. ",
  h("a", { href: "https://www.tradingview.com/", rel: "noopener" }, "https://www.tradingview.com/"),
  " (Apache License 2.0).",
);

function signInScreen(): void {
  app.replaceChildren(
    h(
      "div",
      { class: "signin" },
      h("h1", {}, "Alephium API admin portal"),
      h(
        "p",
        {},
        "Sign in with your organisation's identity provider. Only allow-listed admin accounts get in.",
      ),
      h("p", {}, h("a", { href: "login", class: "primary", "data-testid": "sign-in" }, "Sign in")),
    ),
    footer,
  );
}

function shell(session: Session): void {
  const main = h("main");
  const nav = h(
    "nav",
    {},
    ...ROUTES.map(([id, label]) => h("a", { href: `#/${id}`, "data-page": id }, label)),
  );
  const header = h(
    "header",
    {},
    h("h1", {}, "Alephium API admin portal"),
    h(
      "span",
      { class: "who", "data-testid": "who" },
      `Signed in as ${session.email ?? session.subject} until ${new Date(session.expires_at).toLocaleTimeString()}`,
    ),
    h(
      "button",
      {
        type: "button",
        "data-testid": "sign-out",
        onclick: async () => {
          await signOut();
          signInScreen();
        },
      },
      "Sign out",
    ),
  );
  app.replaceChildren(header, nav, main, footer);
  let cleanup: (() => void) | undefined;
  // Each navigation renders into a view of its own, and only the newest one is shown and marked
  // ready. A page still loading when the user moves on (its calls slow under load) finishes into
  // its detached view, stops its timers, and neither mixes into the next page nor marks it ready.
  let latest = 0;
  const show = async () => {
    const mine = ++latest;
    cleanup?.();
    cleanup = undefined;
    const id = location.hash.replace(/^#\/?/, "") || "status";
    const route = ROUTES.find(([r]) => r === id) ?? ROUTES[0]!;
    for (const a of nav.querySelectorAll("a")) a.classList.toggle("active", a.dataset.page === route[0]);
    const view = h("div", { class: "view" });
    main.replaceChildren(view);
    main.dataset.page = route[0];
    delete main.dataset.ready;
    let stop: (() => void) | undefined;
    try {
      stop = await route[2](view);
    } catch (error) {
      view.append(notice("error", (error as Error).message));
    }
    if (mine !== latest) {
      stop?.();
      return;
    }
    cleanup = stop;
    main.dataset.ready = route[0];
  };
  window.addEventListener("hashchange", () => void show());
  void show();
}

loadSession()
  .then((session) => (session ? shell(session) : signInScreen()))
  .catch((error: unknown) => app.replaceChildren(notice("error", (error as Error).message)));
