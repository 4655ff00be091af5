// Test passes: embedded (the guard's state is PostgreSQL rows read and written alike on PGlite; a replica taking over a partition reads them again in replicas-processes).
/**
 * The code-hash guard end to end on the simulated network: its MyOnion launcher is upgraded as mainnet's
 * upgradable contracts are (MigrateCommence, MigrateApply carrying the new bytecode, then an owner change), so the
 * owner change is published generic with `code_hash_changed`; the node check reads every dapp contract's code
 * from the node (`/contracts/{address}/state`): a contract registered with a hash its live code does not have is
 * named in /status from the check's time, one without a hash takes the node's answer as expected. A reprocess
 * with those rows saved gives the same events.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevnetChain, type DevnetChain } from "../../devnet/chain.ts";
import { myonionCodeHash } from "../../devnet/dapps/myonion.ts";
import { type DevnetServer, startDevnetServer } from "../../devnet/server.ts";
import { DECODER_KIND } from "../../lib/dapps/kinds.ts";
import { reprocessRange } from "../../pipeline/reprocess.ts";
import { eventsStateHash, startTestPipeline, type TestPipeline, waitFor } from "../helpers/pipeline.ts";
import { openTestCh, openTestPg, type TestCh, type TestPg } from "../helpers/stores.ts";

const WRONG = "00".repeat(32);

describe("code-hash guard on the simulated network", () => {
  let chain: DevnetChain;
  let server: DevnetServer;
  let p: TestPipeline;
  let factory: string;
  let checkStartedAt: number;
  let stores: { pg: TestPg; ch: TestCh } | undefined;

  beforeAll(async () => {
    // Seed 3 launches its three MyOnion tokens and upgrades the launcher within 16 minutes of chain time.
    chain = createDevnetChain({ seed: 3 });
    chain.produceUntil(chain.options.startTimestamp + 17 * 60_000);
    server = await startDevnetServer(chain, { port: 0 });
    stores = { pg: await openTestPg(), ch: await openTestCh() };
    factory = chain.plan().elexium.factory.address;
    // An operator registered the Elexium factory with a code hash its deployed code does not have.
    await stores.pg.pg.query(
      "t",
      `INSERT INTO decoder_contracts (contract_address, dapp_id, decoder, label, code_hash)
       VALUES ($1, 'elexium', $2, 'factory, wrong hash', $3)`,
      [factory, DECODER_KIND.elexiumFactory, WRONG],
    );
    checkStartedAt = Date.now();
    p = await startTestPipeline({ chain, server, stores, confirmations: 2 });
    await p.catchUp();
    // The first check starts with the first batch and is saved in the background.
    await waitFor("the node check's rows", async () => {
      const [r] = await p.pg.pg.query<{ n: string }>(
        "t",
        "SELECT count(*) AS n FROM normalize_contract_dapps WHERE code_source = 'node'",
      );
      return Number(r?.n) > 0;
    });
  }, 600_000);
  afterAll(async () => {
    await p?.close();
    await server?.close();
    // The pipeline was given these stores: they are the file's to close.
    await stores?.pg.close();
    await stores?.ch.close();
  });

  const eventsOf = (address: string) =>
    p.ch.ch.query<{ contract_event_index: number; sub_kind: string; payload: string; ts: string }>(
      "t",
      `SELECT contract_event_index, sub_kind, payload, toString(toUnixTimestamp64Milli(timestamp)) AS ts
       FROM events FINAL WHERE main_chain AND contract_address = {a:String} ORDER BY id`,
      { a: address },
    );

  it("decodes the upgrade's events and refuses the launcher's events after MigrateApply", async () => {
    const launcher = chain.plan().myonion.launcher.address;
    const rows = await eventsOf(launcher);
    const upgrades = rows.filter((r) => ![5, 6].includes(Number(r.contract_event_index)));
    expect(upgrades.map((r) => Number(r.contract_event_index))).toEqual([2, 3, 0]);
    expect(upgrades.slice(0, 2).map((r) => r.sub_kind)).toEqual(["migration", "migration"]);
    expect(JSON.parse(upgrades[2]!.payload)).toMatchObject({ decode_error: "code_hash_changed" });
    // Every launch before the upgrade is decoded.
    const launches = rows.filter((r) => Number(r.contract_event_index) === 5);
    expect(launches.length).toBe(3);
    for (const r of launches) expect(JSON.parse(r.payload)).not.toHaveProperty("decode_error");

    const status = (await p.api.app.inject({ url: "/status" })).json();
    const changes = status.code_hash_changes as Record<string, unknown>[];
    expect(changes.find((c) => c["contract_address"] === launcher)).toEqual({
      contract_address: launcher,
      dapp_id: "myonion",
      label: "",
      expected_code_hash: myonionCodeHash("launcher", 1),
      live_code_hash: myonionCodeHash("launcher", 2),
      since_ts: Number(upgrades[1]!.ts),
      source: "migration",
    });
    // The refused event is among the newest decode errors /status lists.
    expect(status.recent_decode_errors).toContainEqual(
      expect.objectContaining({
        dapp_id: "myonion",
        contract_address: launcher,
        contract_event_index: 0,
        reason: "code_hash_changed",
        timestamp: Number(upgrades[2]!.ts),
      }),
    );
    const metrics = await p.deps.metrics.registry.metrics();
    expect(metrics).toContain(
      `alephium_normalize_code_hash_refusals_total{contract_address="${launcher}"} 1`,
    );
  });

  it("names a contract whose live code the node reports different, from the check's time on", async () => {
    const live = chain.contractState(factory)!.codeHash;
    const status = (await p.api.app.inject({ url: "/status" })).json();
    const change = (status.code_hash_changes as Record<string, unknown>[]).find(
      (c) => c["contract_address"] === factory,
    );
    expect(change).toMatchObject({
      dapp_id: "elexium",
      expected_code_hash: WRONG,
      live_code_hash: live,
      source: "node",
    });
    expect(Number(change!["since_ts"])).toBeGreaterThanOrEqual(checkStartedAt);
    // Blocks published before the check keep their decoding: the factory's pools were decoded.
    const rows = await eventsOf(factory);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(JSON.parse(r.payload)).not.toHaveProperty("decode_error");
    const metrics = await p.deps.metrics.registry.metrics();
    expect(metrics).toMatch(/alephium_normalize_code_checks_total\{result="changed"\} [1-9]/);
    expect(metrics).toMatch(/alephium_normalize_code_checks_total\{result="match"\} [1-9]/);
    // The built-in list's mainnet contracts are not on this network.
    expect(metrics).toMatch(/alephium_normalize_code_checks_total\{result="absent"\} [1-9]/);
  });

  it("takes the node's first answer as the expected hash of a contract registered without one", async () => {
    const furnace = chain.plan().furnaces[0]!.address;
    const rows = await p.pg.pg.query<{ contract_address: string; code_hash: string }>(
      "t",
      "SELECT contract_address, code_hash FROM code_hash_baselines ORDER BY contract_address",
    );
    expect(rows.find((r) => r.contract_address === furnace)?.code_hash).toBe(
      chain.contractState(furnace)!.codeHash,
    );
    // Registered with their hash, the launcher and router get no baseline.
    const { launcher, router } = chain.plan().myonion;
    expect(rows.map((r) => r.contract_address)).not.toContain(launcher.address);
    expect(rows.map((r) => r.contract_address)).not.toContain(router.address);
  });

  it("gives the same events when the history is reprocessed with the guard's rows saved", async () => {
    const before = await eventsStateHash(p.ch);
    await reprocessRange(p.deps, 0, Date.now() + 86_400_000);
    await p.catchUp();
    expect(await eventsStateHash(p.ch)).toEqual(before);
  }, 300_000);
});
