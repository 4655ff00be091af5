/**
 * One list route of a dapp group: `limit` and `nextKey` beside the group's filters, the rows under one key with
 * `nextKey` (null on the last page), and the one rule every filtered list keeps (a `from_ts` after its `to_ts` is
 * a 400 naming `from_ts`). The group gives its path, filters, row schema and read; paging is lib/dapps/pages.ts's.
 */
import { type Static, type TObject, type TProperties, type TSchema, Type } from "@sinclair/typebox";
import type { Page } from "../../../lib/dapps/pages.ts";
import { badRequest } from "../../../lib/errors.ts";
import { DappListQuery, NextKey } from "../../schemas.ts";
import type { App } from "../../types.ts";

export interface DappListRoute<Q extends TProperties, H extends TProperties, P extends TProperties> {
  path: string;
  /** Path parameters (for example the round whose players are listed). */
  params?: P;
  tag: string;
  access: "public" | "user";
  summary: string;
  description?: string;
  /** The filters, beside `limit` and `nextKey`. */
  query: Q;
  /** The response key of the rows, and one row's schema. */
  rowsKey: string;
  row: TSchema;
  /** Fields the response carries before the rows (for example the staked token a leaderboard is of). */
  head?: H;
  read(
    filters: Static<TObject<Q>>,
    page: { limit: number; nextKey?: string | undefined },
    params: Static<TObject<P>>,
  ): Promise<Page<unknown> & { head?: Static<TObject<H>> }>;
}

export function dappListRoute<
  Q extends TProperties,
  H extends TProperties = Record<never, never>,
  P extends TProperties = Record<never, never>,
>(app: App, route: DappListRoute<Q, H, P>): void {
  app.get(
    route.path,
    {
      config: { access: route.access, db: "required" },
      schema: {
        tags: [route.tag],
        summary: route.summary,
        ...(route.description ? { description: route.description } : {}),
        ...(route.params ? { params: Type.Object(route.params) } : {}),
        querystring: Type.Object({ ...DappListQuery, ...route.query }),
        response: {
          200: Type.Object({ ...route.head, [route.rowsKey]: Type.Array(route.row), nextKey: NextKey }),
        },
      },
    },
    async (request) => {
      const { limit, nextKey, ...filters } = request.query as { limit: number; nextKey?: string } & Record<
        string,
        unknown
      >;
      const { from_ts, to_ts } = filters as { from_ts?: number; to_ts?: number };
      if (from_ts !== undefined && to_ts !== undefined && from_ts > to_ts)
        throw badRequest("from_ts is after to_ts", { field: "from_ts" });
      const page = await route.read(
        filters as Static<TObject<Q>>,
        { limit, nextKey },
        request.params as Static<TObject<P>>,
      );
      return { ...page.head, [route.rowsKey]: page.rows, nextKey: page.nextKey };
    },
  );
}
