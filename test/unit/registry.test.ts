import { describe, expect, it } from "vitest";
import { WORMHOLE_MAINNET_IMPORTS, wormholeMainnetRows, wormholeRow } from "../../lib/tokens/bridge.ts";
import { contractAddressOf, groupOfContractId } from "../../lib/tokens/repo-shared.ts";
import { listedTokens, seedTokenCategoryLinks } from "../../lib/tokens/seed.ts";

const AYIN = "1a281053ba8601a658368594da034c2e99a0fb951b86498d05e76aedfe666800";

describe("Wormhole mapping", () => {
  it("maps USDT (Ethereum) to a wormhole_remote_pool row", () => {
    const usdt = WORMHOLE_MAINNET_IMPORTS.find((w) => w.symbol === "USDT" && w.tokenChainId === 2);
    expect(wormholeRow(usdt!)).toEqual({
      native_token_id: "556d9582463fe44fbd108aedc9f409f69086dc78d994b88ea6c9e65f8bf98e00",
      chain_id: 1,
      contract_address: "0xdac17f958d2ee523a2206206994597c13d831ec7",
      mapping_kind: "wormhole_remote_pool",
      origin_wormhole_chain_id: 2,
      origin_token_id_hex: "0x000000000000000000000000dac17f958d2ee523a2206206994597c13d831ec7",
      alephium_contract_id_hex: "0x556d9582463fe44fbd108aedc9f409f69086dc78d994b88ea6c9e65f8bf98e00",
      external_asset_id: null,
      origin_evm_contract_address: "0xdac17f958d2ee523a2206206994597c13d831ec7",
      wormhole_pool_decimals: 6,
      origin_wormhole_chain_name: "ethereum",
      origin_token_explorer_url: "https://etherscan.io/token/0xdac17f958d2ee523a2206206994597c13d831ec7",
    });
  });

  it("lower-cases EVM addresses, maps BSC to chain 56 and drops unknown origin chains", () => {
    const rows = wormholeMainnetRows();
    expect(rows).toHaveLength(8);
    const wbnb = rows.find((r) => r.native_token_id.startsWith("c1a33b16"));
    expect(wbnb?.chain_id).toBe(56);
    expect(wbnb?.contract_address).toBe("0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c");
    expect(wormholeRow({ ...WORMHOLE_MAINNET_IMPORTS[0]!, tokenChainId: 99 })).toBeNull();
  });
});

describe("seed mapping", () => {
  const list = {
    networkId: 0 as const,
    tokens: [
      { id: AYIN, name: "AYIN", symbol: "AYIN", decimals: 18, description: "d", logoURI: "l" },
      {
        id: "556d9582463fe44fbd108aedc9f409f69086dc78d994b88ea6c9e65f8bf98e00",
        name: "Tether USD",
        symbol: "USDTeth",
        symbolOnChain: "USDT",
        originChain: "ETH",
        decimals: 6,
        description: "d",
        logoURI: "l",
      },
    ],
  };

  it("adds ALPH when the list lacks it and attributes dapps", () => {
    const rows = listedTokens(list);
    expect(rows.map((r) => r.symbol)).toEqual(["ALPH", "AYIN", "USDTeth"]);
    expect(rows[1]?.dapp).toBe("ayin");
    expect(rows[2]).toMatchObject({ dapp: "wormhole", symbolOnChain: "USDT", originChain: "ETH" });
  });

  it("derives category links from symbol and dapp", () => {
    const links = seedTokenCategoryLinks(listedTokens(list));
    expect(links).toEqual([
      { tokenId: AYIN, categoryId: "defi" },
      { tokenId: list.tokens[1]!.id, categoryId: "stablecoin" },
      { tokenId: list.tokens[1]!.id, categoryId: "bridged" },
    ]);
  });
});

describe("contract ids", () => {
  it("maps a token id to its contract address and group", () => {
    expect(contractAddressOf(AYIN)).toBe("vT49PY8ksoUL6NcXiZ1t2wAmC7tTPRfFfER8n3UCLvXy");
    expect(contractAddressOf(AYIN.toUpperCase())).toBe("vT49PY8ksoUL6NcXiZ1t2wAmC7tTPRfFfER8n3UCLvXy");
    expect(groupOfContractId(AYIN)).toBe(0);
    expect(groupOfContractId(`${"ab".repeat(31)}03`)).toBe(3);
  });
});
