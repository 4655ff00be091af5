/** Binding of contracts to decoder kinds (built-in list, learned children, overlay) and the decode-error metric. */
import { addressFromContractId } from "@alephium/web3";
import { describe, expect, it } from "vitest";
import { mainPriority } from "../../lib/chain/taxonomy.ts";
import { isDecoderKind } from "../../lib/dapps/kinds.ts";
import { createMetrics } from "../../lib/metrics.ts";
import type { EventsMessage } from "../../pipeline/messages.ts";
import {
  createDecoderBook,
  extractContractKinds,
  KNOWN_DAPP_CONTRACTS,
  overlayDecoders,
} from "../../pipeline/normalize/dapps.ts";
import { countDecodeErrors } from "../../pipeline/processors/normalize.ts";
import { block, CREATED_G0, caddr, ev, tx } from "../fixtures/normalize/dapp-blocks.ts";

const kindOf = (address: string) => KNOWN_DAPP_CONTRACTS.find((r) => r.contract_address === address)?.decoder;

describe("built-in decoder bindings", () => {
  it("binds the spec's mainnet contracts to their kinds", () => {
    const expected: [string, string][] = [
      ["285zrkZTPpUCpjKg9E3z238VmpUBQEAbESGsJT6yX7Rod", "dia-price"],
      ["v1v4cBXP9L7M9ryZZCx7tuXuNb9pnDLGb3JJkPBpbR1Z", "dia-random"],
      ["21ekPmzVCwV3fH1XmajtCVWjnDsLxHt14PWdwodk16Zyh", "furnace"],
      ["21toXY23zRXeTKZnEKtfVMCzM3h8kZhrrJV3fMf31VoiY", "furnace"],
      ["28xL678QAegTFSLJNPmCYuZ9cs2ra22mHYoKyTHCXQAVF", "furnace"],
      ["26MPtth6JVpNMV4EWFUDyrBPMQWpVfSUWPZNE9Kqvymw8", "furnace"],
      ["xGsqXrYMRGgamWuMLRKadr3Vpay5thcGDK5e5QvZ432f", "chainreaction-v1"],
      ["27td2f29Ub5z6hJcUwhXwqsfVVpoit6cWkz8SkksqGNYo", "chainreaction-v2"],
      ["23k3Jcc83wAW8G5nmwG3tcMmrEyxKmvSa7thxb24XWiy5", "guessing-hub"],
      ["22oTtDJEMjNc9QAdmcZarnEzgkAooJp9gZy7RYBisniR5", "elexium-factory"],
      ["xtUinNqtQyEnZHWqgbWVpvdJbZZTbywh6BM6iNkvEgCF", "deadrare"],
      ["28P3FfodKZqBQ9zGhgnd86WUfDqd4WLqSyZBmXFHgJFZq", "myonion-launcher"],
      ["29c4EEH1aZr5HDumULCFp1eJN1bWftojCGepqTpovyQhd", "myonion-router"],
      ["uvVP76UfwQ1fmPTZWojUGYY2tKyuKe7Br76KDecfMbjM", "wormhole-governance"],
      ["23Fj7xr1pxWfYLixz3aBC3u5dUJVpAjXArbpiYWxeGjQT", "wormhole-bridge"],
      ["28QGP95rnmZYKRBEsBeGBTdLHetoSE9nxEatVrtuN2bEF", "alphbanx-borrower"],
      ["tpxjsWJSaUh5i7XzNAsTWMRtD9QvDTV9zmMNeHHS6jQB", "alphbanx-loan-manager"],
      ["28Mhs2tczfKJDUq7seTzaRctZXUhqkMzikrehxAHy2kVu", "alphbanx-stake"],
      ["29YL53teVrvK2o4P2cVej8aCGN7iQS8mE86bgxA2oFWa3", "alphbanx-auction"],
    ];
    for (const [address, kind] of expected) expect(kindOf(address), address).toBe(kind);
    for (const r of KNOWN_DAPP_CONTRACTS) if (r.decoder) expect(isDecoderKind(r.decoder)).toBe(true);
  });

  it("binds ABD and ABX by the addresses of their token ids, and the V1 game by its id", () => {
    expect(
      kindOf(addressFromContractId("c7d1dab489ee40ca4e6554efc64a64e73a9f0ddfdec9e544c82c1c6742ccc500")),
    ).toBe("alphbanx-abd");
    expect(
      kindOf(addressFromContractId("9b3070a93fd5127d8c39561870432fdbc79f598ca8dbf2a3398fc100dfd45f00")),
    ).toBe("alphbanx-abx");
    expect(addressFromContractId("3543f971b21c8767c2e1f00ac93b599db08c1a7e4639669017b58790153bc400")).toBe(
      "xGsqXrYMRGgamWuMLRKadr3Vpay5thcGDK5e5QvZ432f",
    );
    const cr = KNOWN_DAPP_CONTRACTS.filter((r) => r.dapp_id === "chainreaction");
    expect(cr).toHaveLength(6);
  });
});

describe("decoder registry", () => {
  it("keeps the first binding of an address and lists addresses per kind", () => {
    const reg = createDecoderBook([
      { contract_address: "a", decoder: "furnace" },
      { contract_address: "a", decoder: "deadrare" },
      { contract_address: "b", decoder: "furnace" },
      { contract_address: "c", decoder: null },
    ]);
    expect(reg.kindOf("a")).toBe("furnace");
    expect(reg.kindOf("c")).toBeUndefined();
    expect(reg.addressesOf("furnace")).toEqual(["a", "b"]);
    reg.add([{ contract_address: "c", decoder: "guessing-room" }]);
    expect(reg.kindOf("c")).toBe("guessing-room");
    const overlay = overlayDecoders(reg, [{ contract_address: "d", decoder: "guessing-room" }]);
    expect(overlay.kindOf("d")).toBe("guessing-room");
    expect(overlay.addressesOf("guessing-room")).toEqual(["c", "d"]);
  });

  it("learns CHILD_KIND of a parent's kind; a room (no child kind) and a kindless parent give nothing", () => {
    const hub = caddr("hub-x");
    const room = caddr("room-x");
    const grandchild = caddr("room-child");
    const orphan = caddr("orphan");
    const t = tx("learn", { from: "alice", script: true });
    const raw = block(
      "learn",
      [t],
      [
        ev(t, CREATED_G0, -1, [
          ["Address", room],
          ["Address", hub],
          ["ByteVec", ""],
        ]),
        ev(t, CREATED_G0, -1, [
          ["Address", grandchild],
          ["Address", room],
          ["ByteVec", ""],
        ]),
        ev(t, CREATED_G0, -1, [
          ["Address", orphan],
          ["Address", caddr("nobody")],
          ["ByteVec", ""],
        ]),
      ],
    );
    const reg = createDecoderBook([{ contract_address: hub, decoder: "guessing-hub" }]);
    // A room has no child kind: only the hub's direct children are rooms.
    expect(extractContractKinds(raw, reg)).toEqual([{ contract_address: room, decoder: "guessing-room" }]);
    expect(extractContractKinds({ ...raw, mainChain: false }, reg)).toEqual([]);
    expect(extractContractKinds(raw, undefined)).toEqual([]);
  });
});

describe("decode-error metric", () => {
  it("counts published generic events carrying decode_error by decoder and event index", async () => {
    const metrics = createMetrics();
    const wire = (payload: Record<string, unknown>, index: number | null) =>
      ({ type: "undecoded", payload_json: JSON.stringify(payload), contract_event_index: index }) as never;
    const messages = [
      {
        kind: "block",
        events: [
          wire({ event_index: 1, fields: [], decoder: "dia-price", decode_error: "x" }, 1),
          wire({ event_index: 1, fields: [], decoder: "dia-price", decode_error: "y" }, 1),
          wire({ event_index: 0, fields: [] }, 0),
        ],
      },
      {
        kind: "block",
        events: [{ type: "undecoded", payload_json: "{}", payload_ref: "r1", contract_event_index: 0 }],
        offloaded: [{ ref: "r1", payload_json: JSON.stringify({ decoder: "furnace", decode_error: "z" }) }],
      },
      { kind: "retraction" },
    ] as unknown as EventsMessage[];
    countDecodeErrors(metrics, messages);
    const counted = (await metrics.decodeErrors.get()).values;
    expect(counted.map((v) => [v.labels, v.value])).toEqual([
      [{ decoder: "dia-price", event_index: "1" }, 2],
      [{ decoder: "furnace", event_index: "0" }, 1],
    ]);
  });
});

describe("main-event priorities of decoded dapp events", () => {
  it("rank above transfers and generic events, launchpad trades with swaps", () => {
    const generic = mainPriority("contract", "event", "undecoded");
    const tokenSend = mainPriority("transfer", "send", "token");
    for (const p of [
      mainPriority("oracle", "price_update", "oracle_update"),
      mainPriority("token", "burn", "furnace_burn"),
      mainPriority("game", "player_joined", "chain_reaction"),
      mainPriority("nft", "sold", "marketplace"),
      mainPriority("bridge", "transfer_out", "wormhole"),
      mainPriority("lending", "open_loan", "alphbanx_op"),
    ]) {
      expect(p).toBeGreaterThan(tokenSend);
      expect(p).toBeGreaterThan(generic);
    }
    expect(mainPriority("launchpad", "buy", "launch_trade")).toBe(mainPriority("dex", "buy", "swap"));
  });
});
