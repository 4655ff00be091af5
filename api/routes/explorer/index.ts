/**
 * Decorated explorer proxies (SPEC "Transactions and blocks"): the explorer backend's JSON passed through
 * and, with the database, extended under the decoration key (DECORATION_KEY, `ext` by default). Bad path parameters answer 400 before any upstream call;
 * explorer 404 → 404 (its detail), explorer down, timing out or 5xx → 502.
 */

import { Type } from "@sinclair/typebox";
import type { FastifyReply } from "fastify";
import type { ExplorerObject, ExplorerPage } from "../../../lib/explorer-client.ts";
import { requireDb } from "../../require-db.ts";
import { ProblemRef } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";
import { decorateBlock, decorateList, decorateTransaction } from "./decorate.ts";
import {
  AddressParams,
  AddressTokenParams,
  BlockExt,
  BlockParams,
  decoratedSchemas,
  ListItemExt,
  PageQuery,
  TokenParams,
  TransactionExt,
  TxParams,
} from "./schemas.ts";

/** First page of a block's transactions used for the block's decoration (SPEC "Limits"). */
const BLOCK_DECORATION_PAGE: ExplorerPage = { page: 1, limit: 100 };

const ERRORS = {
  404: { description: "Not found on the explorer backend (its detail is carried).", ...ProblemRef },
  502: { description: "Explorer backend unreachable, timing out or failing.", ...ProblemRef },
};

const listDescription = (ext: string) =>
  "Explorer pagination: `page` from 1 (default 1), `limit` 1-100 (default 20; the explorer's 0 is refused). " +
  `Each transaction is passed through unchanged with ${ext}: \`main_event_pending\` (true while the pipeline has ` +
  "produced no event for it) and, once false, `dapp_id`, `category`, `sub_kind` and `type` of its main event; " +
  "`address_labels` covers the addresses of its inputs, outputs and main event, only when any has a label. " +
  "The decoration needs the database: without it this route answers 503.";

/**
 * Sends pre-serialized JSON. Fastify passes JSON strings through untouched, so the explorer's fields keep
 * their order and values (schema serialization would put declared properties first).
 */
function sendJson(reply: FastifyReply, value: unknown): FastifyReply {
  return reply.type("application/json; charset=utf-8").send(JSON.stringify(value));
}

export async function explorerRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(TransactionExt);
  app.addSchema(ListItemExt);
  app.addSchema(BlockExt);
  app.addHook("onClose", async () => deps.explorer.close());
  const explorer = deps.explorer;
  const key = deps.config.DECORATION_KEY;
  const ext = `\`${key}\``;
  const schemas = decoratedSchemas(key);
  const LIST_DESCRIPTION = listDescription(ext);
  const list = async (reply: FastifyReply, fetch: () => Promise<{ json: ExplorerObject[] }>) => {
    const { json } = await fetch();
    return sendJson(reply, await decorateList(need("events"), json, key));
  };

  app.get(
    "/transaction/:transaction_id",
    {
      config: { access: "user", db: "optional" },
      schema: {
        tags: ["Transaction"],
        summary: "Explorer transaction, decorated with its normalized events",
        description:
          "The explorer's transaction (`Accepted` or `Pending`) with every field unchanged. With the database, " +
          `${ext} = { events (every normalized event, as /transaction/{txid}/events), meta.payload_chunk_hydration_enabled, ` +
          `address_labels (inputs, outputs and main event; only when any) }. Without the database: no ${ext}.`,
        params: TxParams,
        response: { 200: schemas.transaction, ...ERRORS },
      },
    },
    async (request, reply) => {
      const { json } = await explorer.transaction(request.params.transaction_id.toLowerCase());
      return sendJson(reply, deps.events ? await decorateTransaction(deps.events, json, key) : json);
    },
  );

  app.get(
    "/block/:block_hash",
    {
      config: { access: "user", db: "optional" },
      schema: {
        tags: ["Blocks"],
        summary: "Explorer block, decorated with its genesis mints and coinbases",
        description:
          "The explorer's BlockEntry unchanged. With the database and `txNumber` > 0, the first 100 transactions " +
          `are read and ${ext} = { genesis_mints, coinbases } (main events; each null when none). Without the ` +
          `database: no ${ext}.`,
        params: BlockParams,
        response: { 200: schemas.block, ...ERRORS },
      },
    },
    async (request, reply) => {
      const hash = request.params.block_hash.toLowerCase();
      const repo = deps.events;
      if (!repo) return sendJson(reply, (await explorer.block(hash)).json);
      // Both explorer calls at once: every real block has at least its coinbase transaction.
      const txsCall = explorer.blockTransactions(hash, BLOCK_DECORATION_PAGE);
      txsCall.catch(() => undefined);
      const { json: block } = await explorer.block(hash);
      const txNumber = typeof block.txNumber === "number" ? block.txNumber : 0;
      if (txNumber <= 0) return sendJson(reply, block);
      return sendJson(reply, await decorateBlock(repo, block, (await txsCall).json, key));
    },
  );

  app.get(
    "/block/:block_hash/transactions",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Blocks"],
        summary: "Explorer transactions of a block, each decorated with its main event",
        description: `Block order (coinbase last). ${LIST_DESCRIPTION}`,
        params: BlockParams,
        querystring: PageQuery,
        response: { 200: Type.Array(schemas.listItem), ...ERRORS },
      },
    },
    async (request, reply) =>
      list(reply, () => explorer.blockTransactions(request.params.block_hash.toLowerCase(), request.query)),
  );

  app.get(
    "/addresses/:address/transactions",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Addresses"],
        summary: "Explorer transactions of an address, each decorated with its main event",
        description: `Main chain only, newest first. ${LIST_DESCRIPTION}`,
        params: AddressParams,
        querystring: PageQuery,
        response: { 200: Type.Array(schemas.listItem), ...ERRORS },
      },
    },
    async (request, reply) =>
      list(reply, () => explorer.addressTransactions(request.params.address, request.query)),
  );

  app.get(
    "/addresses/:address/tokens/:tokenid/transactions",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Addresses"],
        summary: "Explorer transactions of an address touching a token, each decorated with its main event",
        description: `Main chain only, newest first. ${LIST_DESCRIPTION}`,
        params: AddressTokenParams,
        querystring: PageQuery,
        response: { 200: Type.Array(schemas.listItem), ...ERRORS },
      },
    },
    async (request, reply) =>
      list(reply, () =>
        explorer.addressTokenTransactions(
          request.params.address,
          request.params.tokenid.toLowerCase(),
          request.query,
        ),
      ),
  );

  app.get(
    "/token/:tokenid/transactions",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Token"],
        summary: "Explorer transactions touching a token, each decorated with its main event",
        description: `Main chain only, newest first. ${LIST_DESCRIPTION}`,
        params: TokenParams,
        querystring: PageQuery,
        response: { 200: Type.Array(schemas.listItem), ...ERRORS },
      },
    },
    async (request, reply) =>
      list(reply, () => explorer.tokenTransactions(request.params.tokenid.toLowerCase(), request.query)),
  );
}
