/** Discovery: a token issued on the simulated chain appears in the registry, unregistered, with its mint facts. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

describe("token discovery from genesis mints", () => {
  let p: TestPipeline;
  beforeAll(async () => {
    p = await startTestPipeline({ blocks: 300, confirmations: 2 });
    await p.catchUp();
  });
  afterAll(async () => p?.close());

  it("lists issued tokens as unregistered with minter, mint tx, mint time and on-chain metadata", async () => {
    const tokens = p.chain.tokens();
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) {
      const r = await p.api.app.inject({ url: `/token/${token.id}/details` });
      expect(r.statusCode, token.symbol).toBe(200);
      const t = r.json().token;
      expect(t).toMatchObject({
        id: token.id,
        contractAddress: token.address,
        registered: false,
        minter: token.minter,
        mintTx: token.mintTxId,
        mintTime: token.mintTimestamp,
        symbolOnChain: token.symbol,
        decimals: token.decimals,
        chainId: 8738,
      });
      expect(r.json().bridged).toEqual([]);
    }
    const unregistered = await p.api.app.inject({ url: "/token/all?registered=false&pageSize=-1" });
    const ids = (unregistered.json().tokens as { id: string }[]).map((t) => t.id);
    for (const token of tokens) expect(ids).toContain(token.id);
  });

  it("records created contracts with their kind", async () => {
    const token = p.chain.tokens()[0]!;
    const r = await p.api.app.inject({ url: `/contracts/${token.address}` });
    expect(r.statusCode).toBe(200);
    expect(r.json().contract).toMatchObject({
      address: token.address,
      kind: "token",
      created_tx: token.mintTxId,
    });
  });
});
