// Test passes: embedded (hand-made rows through the store and routes; PGlite runs the same SQL).
/**
 * The token list's filters on a real Postgres: each filter keeps exactly the tokens it names, filters
 * combine, deleted tokens never show, and search text is matched literally (% and _ are not wildcards).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRegistryRepo, type RegistryRepo, type TokenListQuery } from "../../lib/tokens/repo.ts";
import { openTestPg, type TestPg } from "../helpers/stores.ts";

const id = (n: number) => n.toString(16).padStart(64, "0");

/** id, symbol, chain, registered, moderation, market display, dapp, category, deleted */
const TOKENS: [
  number,
  string,
  number,
  boolean,
  "show" | "hide",
  boolean,
  string | null,
  string | null,
  boolean,
][] = [
  [1, "AYIN", 8738, true, "show", true, "ayin", "defi", false],
  [2, "USDT", 8738, true, "hide", true, "wormhole", "stablecoin", false],
  [3, "50%_OFF", 8738, false, "show", false, null, null, false],
  [4, "GONE", 8738, true, "show", true, "ayin", "defi", true],
  [5, "ELX", 1, true, "show", true, "elexium", "defi", false],
  [6, "aYinX", 8738, false, "show", true, "elexium", null, false],
];

describe("token list filters", () => {
  let store: TestPg;
  let repo: RegistryRepo;

  beforeAll(async () => {
    store = await openTestPg();
    repo = createRegistryRepo(store.pg);
    for (const category of ["defi", "stablecoin"])
      await store.pg.query(
        "t",
        "INSERT INTO categories (id, created_at, updated_at) VALUES ($1, 0, 0) ON CONFLICT DO NOTHING",
        [category],
      );
    for (const [n, symbol, chain, registered, moderation, market, dapp, category, deleted] of TOKENS) {
      await store.pg.query(
        "t",
        `INSERT INTO tokens (id, contract_address, symbol, chain_id, registered, moderation, market_display, dapp,
           deleted, source, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'test', 0, 0)`,
        [id(n), `addr${n}`, symbol, chain, registered, moderation, market, dapp, deleted],
      );
      if (category)
        await store.pg.query(
          "t",
          "INSERT INTO token_categories (token_id, category_id, position) VALUES ($1, $2, 0)",
          [id(n), category],
        );
    }
  });
  afterAll(async () => store?.close());

  const symbols = async (filters: Partial<TokenListQuery>) => {
    const { tokens, total } = await repo.listTokens({
      page: 1,
      pageSize: -1,
      sort: "symbol",
      order: "asc",
      ...filters,
    });
    expect(total).toBe(tokens.length);
    return tokens.map((t) => t.symbol).sort();
  };

  it("lists every token but the deleted ones without filters", async () => {
    expect(await symbols({})).toEqual(["50%_OFF", "AYIN", "ELX", "USDT", "aYinX"]);
  });

  it.each<[string, Partial<TokenListQuery>, string[]]>([
    ["chain", { chain: 1 }, ["ELX"]],
    ["registered", { registered: false }, ["50%_OFF", "aYinX"]],
    ["moderation", { moderation: "hide" }, ["USDT"]],
    ["market display", { marketDisplay: false }, ["50%_OFF"]],
    ["dapps", { dapps: ["ayin", "wormhole"] }, ["AYIN", "USDT"]],
    ["an empty dapp list (no filter)", { dapps: [] }, ["50%_OFF", "AYIN", "ELX", "USDT", "aYinX"]],
    ["category", { category: "defi" }, ["AYIN", "ELX"]],
    ["search, case-insensitive", { search: "AyIn" }, ["AYIN", "aYinX"]],
    ["search with % and _ taken literally", { search: "%_o" }, ["50%_OFF"]],
    ["search matching nothing", { search: "zzz" }, []],
    ["an empty search (no filter)", { search: "" }, ["50%_OFF", "AYIN", "ELX", "USDT", "aYinX"]],
    ["filters combined", { chain: 8738, registered: true, category: "defi" }, ["AYIN"]],
  ])("filters by %s", async (_name, filters, expected) => {
    expect(await symbols(filters)).toEqual(expected);
  });
});
