/** Seed lists, registries, pool extraction and the taxonomy document. */
import { readFileSync } from "node:fs";
import { addressFromContractId, isContractAddress, isValidAddress } from "@alephium/web3";
import { describe, expect, it } from "vitest";
import { mainPriority, TAXONOMY } from "../../lib/chain/taxonomy.ts";
import { ALPH_TOKEN_ID, type RawBlock } from "../../lib/chain/types.ts";
import { ratio } from "../../pipeline/normalize/chain-utils.ts";
import { createStaticDappBook, KNOWN_DAPP_CONTRACTS } from "../../pipeline/normalize/dapps.ts";
import { baseTokenOf } from "../../pipeline/normalize/normalize.ts";
import {
  createPoolBook,
  extractPools,
  KNOWN_POOLS,
  overlayPools,
  type PoolInfo,
} from "../../pipeline/normalize/pools.ts";

const fixture = (name: string): RawBlock =>
  JSON.parse(
    readFileSync(new URL(`../fixtures/normalize/${name}.json`, import.meta.url), "utf8"),
  ) as RawBlock;

describe("dapp seed list", () => {
  it("holds valid, unique contract addresses", () => {
    const addresses = KNOWN_DAPP_CONTRACTS.map((r) => r.contract_address);
    expect(new Set(addresses).size).toBe(addresses.length);
    for (const a of addresses) {
      expect(isValidAddress(a), a).toBe(true);
      expect(isContractAddress(a), a).toBe(true);
    }
  });

  it("lists token contracts under the address derived from their token id", () => {
    const byLabel = new Map(KNOWN_DAPP_CONTRACTS.map((r) => [r.label, r.contract_address]));
    expect(byLabel.get("AYIN token")).toBe(
      addressFromContractId("1a281053ba8601a658368594da034c2e99a0fb951b86498d05e76aedfe666800"),
    );
    expect(byLabel.get("EX token")).toBe(
      addressFromContractId("cad22f7c98f13fe249c25199c61190a9fb4341f8af9b1c17fcff4cd4b2c3d200"),
    );
    expect(byLabel.get("ABD token")).toBe(
      addressFromContractId("c7d1dab489ee40ca4e6554efc64a64e73a9f0ddfdec9e544c82c1c6742ccc500"),
    );
  });

  it("resolves through the static registry; unknown addresses are undefined", () => {
    const reg = createStaticDappBook(KNOWN_DAPP_CONTRACTS);
    expect(reg.dappOf("285zrkZTPpUCpjKg9E3z238VmpUBQEAbESGsJT6yX7Rod")).toBe("dia-oracle");
    expect(reg.dappOf("23Fj7xr1pxWfYLixz3aBC3u5dUJVpAjXArbpiYWxeGjQT")).toBe("wormhole");
    expect(reg.dappOf("1278pe7uQZR5xnHwiBBoq2wHvUwYcrGhvqnAUhpAvsGnq")).toBeUndefined();
  });

  it("attributes every seeded pool to ayin", () => {
    const reg = createStaticDappBook(KNOWN_DAPP_CONTRACTS);
    for (const p of KNOWN_POOLS) expect(reg.dappOf(p.pool_address)).toBe("ayin");
  });
});

describe("pools", () => {
  const pairP = "23TeWrAbqc3nRYSr5tKEvYpkBQHRhiLPDX961gErgdjH9";
  const tokenY = "475d51c44fb7256d2bc2ba1b610f8fa0b4ac308eb299620833e10379f8d69d00";

  it("extracts PairCreated pools from a block", () => {
    expect(extractPools(fixture("dex-pools"))).toEqual([
      {
        pool_address: pairP,
        token0_id: ALPH_TOKEN_ID,
        token1_id: tokenY,
        dapp_id: "ayin",
        swap_event_index: 2,
        mint_event_index: 0,
        burn_event_index: 1,
        stable: null,
        liquidity_layout: "ayin",
        factory_address: "vyrkJHG49TXss6pGAz2dVxq5o7mBXNNXAV18nAeqVT1R",
      },
    ]);
    expect(extractPools(fixture("ayin-swaps"))).toEqual([]);
  });

  it("ignores non-main-chain blocks and conflicted txs", () => {
    const raw = fixture("dex-pools");
    expect(extractPools({ ...raw, mainChain: false })).toEqual([]);
    const txId = raw.block.transactions[0]!.unsigned.txId;
    expect(extractPools({ ...raw, block: { ...raw.block, conflictedTxs: [txId] } })).toEqual([]);
  });

  it("grows a registry between blocks and overlays without mutating", () => {
    const reg = createPoolBook();
    expect(reg.size()).toBe(4);
    expect(reg.poolOf(pairP)).toBeUndefined();
    const extra = extractPools(fixture("dex-pools"));
    const overlay = overlayPools(reg, extra);
    expect(overlay.poolOf(pairP)?.token1_id).toBe(tokenY);
    expect(overlay.poolOf(KNOWN_POOLS[0]!.pool_address)).toBe(KNOWN_POOLS[0]);
    expect(reg.poolOf(pairP)).toBeUndefined();
    reg.add(extra);
    expect(reg.poolOf(pairP)?.token0_id).toBe(ALPH_TOKEN_ID);
  });

  it("picks the non-ALPH leg as base, else token0", () => {
    const pool = (token0_id: string, token1_id: string) => ({ token0_id, token1_id }) as PoolInfo;
    expect(baseTokenOf(pool(ALPH_TOKEN_ID, tokenY))).toEqual({ base: tokenY, quote: ALPH_TOKEN_ID });
    expect(baseTokenOf(pool("aa".repeat(32), "bb".repeat(32)))).toEqual({
      base: "aa".repeat(32),
      quote: "bb".repeat(32),
    });
  });
});

describe("ratio", () => {
  it("truncates to 18 fractional digits and trims zeros", () => {
    expect(ratio(1n, 3n)).toBe("0.333333333333333333");
    expect(ratio(2n, 3n)).toBe("0.666666666666666666");
    expect(ratio(10n, 4n)).toBe("2.5");
    expect(ratio(6n, 3n)).toBe("2");
    expect(ratio(1n, 0n)).toBe("0");
    expect(ratio(1n, 10n ** 19n)).toBe("0");
  });
});

describe("taxonomy", () => {
  it("uses the API's required values", () => {
    const triples = TAXONOMY.map((e) => `${e.category}/${e.sub_kind}`);
    for (const t of [
      "token/genesis_mint",
      "dex/buy",
      "dex/sell",
      "dex/swap",
      "cex/deposit",
      "cex/withdraw",
    ]) {
      expect(triples).toContain(t);
    }
    expect(new Set(TAXONOMY.map((e) => `${e.category}/${e.sub_kind}/${e.type}`)).size).toBe(TAXONOMY.length);
  });

  it("ranks swap > genesis mint > token transfer > contract event > ALPH transfer > coinbase", () => {
    const order = [
      mainPriority("dex", "swap", "swap"),
      mainPriority("dex", "buy", "swap"),
      mainPriority("token", "genesis_mint", "mint"),
      mainPriority("transfer", "send", "token"),
      mainPriority("contract", "event", "undecoded"),
      mainPriority("transfer", "send", "alph"),
      mainPriority("mining", "coinbase", "reward"),
    ];
    expect([...order].sort((a, b) => b - a)).toEqual(order);
    expect(() => mainPriority("dex", "send", "alph")).toThrow();
  });

  it("is documented row by row in TAXONOMY.md", () => {
    const doc = readFileSync(new URL("../../lib/chain/TAXONOMY.md", import.meta.url), "utf8");
    // Cells trimmed: the formatter pads markdown tables.
    const rows = new Set(
      doc
        .split("\n")
        .filter((l) => l.startsWith("|"))
        .map((l) =>
          l
            .split("|")
            .slice(1, 5)
            .map((c) => c.trim())
            .join("/"),
        ),
    );
    for (const e of TAXONOMY) expect(rows).toContain(`${e.category}/${e.sub_kind}/${e.type}/${e.priority}`);
  });
});
