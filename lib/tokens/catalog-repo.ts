/** Categories, dapps and chains of the registry (Postgres). Deletes are soft: rows stay with `deleted` true. */
import { badRequest, notFound } from "../errors.ts";
import type { Pg } from "../stores/postgres.ts";
import { checkCategories, now, num } from "./repo-shared.ts";

export interface Category {
  id: string;
  sort_order: number;
  deleted: boolean;
  /** Non-deleted tokens linked to the category. */
  count_token: number;
  /** Non-deleted dapps linked to the category. */
  count_dapp: number;
}

export interface Dapp {
  id: string;
  name: string;
  /** The stored short name, else the name. */
  short_name: string;
  description: string | null;
  website: string | null;
  logo: string | null;
  /** Same as logo (the AlphScan explorer's name). */
  icon: string | null;
  categories: string[];
  deleted: boolean;
  /** USD value in the dapp's pools watched with includeInTVL (figures processor); null when none is counted. */
  tvl_usd: number | null;
  created_at: number;
  updated_at: number;
}

export interface DappInput {
  id: string;
  name: string;
  short_name?: string | null;
  description?: string | null;
  website?: string | null;
  logo?: string | null;
}

export type DappUpdate = {
  [K in "name" | "short_name" | "description" | "website" | "logo"]?: string | null;
};

export interface Chain {
  id: number;
  name: string;
  short_name: string;
  /** Icon URL; null when none is known. */
  icon: string | null;
  /** Wormhole's id of the chain; null when the bridge does not serve it. */
  wormhole_id: number | null;
}

export interface CatalogRepo {
  listCategories(includeDeleted: boolean): Promise<Category[]>;
  getCategory(id: string): Promise<Category | null>;
  /** Creates the category, or re-activates a soft-deleted one (keeping its sort order unless given). */
  addCategory(id: string, sortOrder?: number): Promise<Category>;
  deleteCategory(id: string): Promise<Category>;
  /** Seeding: inserts missing categories; never re-activates or re-orders existing ones. */
  seedCategories(rows: { id: string; sort_order: number }[]): Promise<number>;
  listDapps(includeDeleted: boolean): Promise<Dapp[]>;
  getDapp(id: string, options?: { includeDeleted?: boolean }): Promise<Dapp | null>;
  /** Creates the dapp, or re-activates and updates a soft-deleted or existing one. */
  addDapp(input: DappInput): Promise<Dapp>;
  updateDapp(id: string, update: DappUpdate): Promise<Dapp>;
  deleteDapp(id: string): Promise<Dapp>;
  setDappCategories(id: string, categoryIds: string[]): Promise<Dapp>;
  /** Seeding: inserts missing dapps with their categories; never touches existing rows. */
  seedDapps(rows: (DappInput & { categories: string[] })[]): Promise<number>;
  listChains(): Promise<Chain[]>;
}

const CATEGORY_SELECT = `SELECT c.id, c.sort_order, c.deleted,
  (SELECT count(*) FROM token_categories tc JOIN tokens t ON t.id = tc.token_id
     WHERE tc.category_id = c.id AND NOT t.deleted)::int AS count_token,
  (SELECT count(*) FROM dapp_categories dc JOIN dapps d ON d.id = dc.dapp_id
     WHERE dc.category_id = c.id AND NOT d.deleted)::int AS count_dapp
  FROM categories c`;

const DAPP_SELECT = `SELECT d.id, d.name, COALESCE(d.short_name, d.name) AS short_name, d.description, d.website,
  d.logo, d.logo AS icon, d.deleted, d.tvl_usd, d.created_at, d.updated_at,
  ARRAY(SELECT dc.category_id FROM dapp_categories dc JOIN categories c ON c.id = dc.category_id
        WHERE dc.dapp_id = d.id AND NOT c.deleted ORDER BY dc.position) AS categories
  FROM dapps d`;

type DappRow = Omit<Dapp, "created_at" | "updated_at"> & { created_at: unknown; updated_at: unknown };

const toCategory = (r: Category): Category => ({
  ...r,
  count_token: Number(r.count_token),
  count_dapp: Number(r.count_dapp),
});
const toDapp = (r: DappRow): Dapp => ({
  ...r,
  categories: r.categories ?? [],
  tvl_usd: r.tvl_usd === null || r.tvl_usd === undefined ? null : Number(r.tvl_usd),
  created_at: num(r.created_at) ?? 0,
  updated_at: num(r.updated_at) ?? 0,
});

export function createCatalogRepo(pg: Pg): CatalogRepo {
  const getCategory = async (id: string) => {
    const rows = await pg.query<Category>("categories_get", `${CATEGORY_SELECT} WHERE c.id = $1`, [id]);
    return rows[0] ? toCategory(rows[0]) : null;
  };
  const getDapp = async (id: string, options: { includeDeleted?: boolean } = {}) => {
    const rows = await pg.query<DappRow>("dapps_get", `${DAPP_SELECT} WHERE d.id = $1`, [id]);
    const row = rows[0];
    if (!row || (row.deleted && !options.includeDeleted)) return null;
    return toDapp(row);
  };
  const mustDapp = async (id: string) => {
    const dapp = await getDapp(id, { includeDeleted: true });
    if (!dapp) throw notFound(`Dapp ${id} not found`, { dappid: id });
    return dapp;
  };

  return {
    async listCategories(includeDeleted) {
      const rows = await pg.query<Category>(
        "categories_list",
        `${CATEGORY_SELECT} WHERE $1 OR NOT c.deleted ORDER BY c.sort_order, c.id`,
        [includeDeleted],
      );
      return rows.map(toCategory);
    },
    getCategory,
    async addCategory(id, sortOrder) {
      const t = now();
      await pg.query(
        "categories_add",
        `INSERT INTO categories (id, sort_order, deleted, created_at, updated_at) VALUES ($1, COALESCE($2, 0), false, $3, $3)
         ON CONFLICT (id) DO UPDATE SET deleted = false, sort_order = COALESCE($2, categories.sort_order), updated_at = $3`,
        [id, sortOrder ?? null, t],
      );
      return (await getCategory(id)) as Category;
    },
    async deleteCategory(id) {
      const rows = await pg.query(
        "categories_del",
        "UPDATE categories SET deleted = true, updated_at = $2 WHERE id = $1 RETURNING id",
        [id, now()],
      );
      if (rows.length === 0) throw notFound(`Category ${id} not found`, { id });
      return (await getCategory(id)) as Category;
    },
    async seedCategories(rows) {
      if (rows.length === 0) return 0;
      const t = now();
      const result = await pg.query(
        "categories_seed",
        `INSERT INTO categories (id, sort_order, deleted, created_at, updated_at)
         SELECT x.id, x.sort_order, false, $2, $2 FROM jsonb_to_recordset($1::jsonb) AS x(id text, sort_order integer)
         ON CONFLICT (id) DO NOTHING RETURNING id`,
        [JSON.stringify(rows), t],
      );
      return result.length;
    },

    async listDapps(includeDeleted) {
      const rows = await pg.query<DappRow>(
        "dapps_list",
        `${DAPP_SELECT} WHERE $1 OR NOT d.deleted ORDER BY d.id`,
        [includeDeleted],
      );
      return rows.map(toDapp);
    },
    getDapp,
    async addDapp(input) {
      const t = now();
      await pg.query(
        "dapps_add",
        `INSERT INTO dapps (id, name, description, website, logo, deleted, created_at, updated_at, short_name)
         VALUES ($1, $2, $3, $4, $5, false, $6, $6, $7)
         ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name,
           short_name = COALESCE(EXCLUDED.short_name, dapps.short_name),
           description = COALESCE(EXCLUDED.description, dapps.description),
           website = COALESCE(EXCLUDED.website, dapps.website), logo = COALESCE(EXCLUDED.logo, dapps.logo),
           deleted = false, updated_at = EXCLUDED.updated_at`,
        [
          input.id,
          input.name,
          input.description ?? null,
          input.website ?? null,
          input.logo ?? null,
          t,
          input.short_name ?? null,
        ],
      );
      return mustDapp(input.id);
    },
    async updateDapp(id, update) {
      const fields = (["name", "short_name", "description", "website", "logo"] as const).filter(
        (k) => update[k] !== undefined && update[k] !== null,
      );
      if (fields.length === 0) {
        throw badRequest("No fields to update", {
          allowed: ["name", "short_name", "description", "website", "logo"],
        });
      }
      const params: (string | number)[] = [id, now()];
      const sets = fields.map((k) => {
        params.push(update[k] as string);
        return `${k} = $${params.length}`;
      });
      const rows = await pg.query(
        "dapps_update",
        `UPDATE dapps SET ${sets.join(", ")}, updated_at = $2 WHERE id = $1 RETURNING id`,
        params,
      );
      if (rows.length === 0) throw notFound(`Dapp ${id} not found`, { dappid: id });
      return mustDapp(id);
    },
    async deleteDapp(id) {
      const rows = await pg.query(
        "dapps_del",
        "UPDATE dapps SET deleted = true, updated_at = $2 WHERE id = $1 RETURNING id",
        [id, now()],
      );
      if (rows.length === 0) throw notFound(`Dapp ${id} not found`, { dappid: id });
      return mustDapp(id);
    },
    async setDappCategories(id, categoryIds) {
      await mustDapp(id);
      await pg.transaction(async (tx) => {
        const ids = await checkCategories(tx, categoryIds);
        await tx.query("dapp_categories_clear", "DELETE FROM dapp_categories WHERE dapp_id = $1", [id]);
        if (ids.length > 0) {
          await tx.query(
            "dapp_categories_set",
            `INSERT INTO dapp_categories (dapp_id, category_id, position)
             SELECT $1, c, (o - 1)::smallint FROM unnest($2::text[]) WITH ORDINALITY AS u(c, o)`,
            [id, ids],
          );
        }
        await tx.query("dapps_touch", "UPDATE dapps SET updated_at = $2 WHERE id = $1", [id, now()]);
      });
      return mustDapp(id);
    },
    async seedDapps(rows) {
      if (rows.length === 0) return 0;
      return pg.transaction(async (tx) => {
        const t = now();
        const inserted = await tx.query<{ id: string }>(
          "dapps_seed",
          `INSERT INTO dapps (id, name, description, website, logo, deleted, created_at, updated_at)
           SELECT x.id, x.name, x.description, x.website, x.logo, false, $2, $2
           FROM jsonb_to_recordset($1::jsonb) AS x(id text, name text, description text, website text, logo text)
           ON CONFLICT (id) DO NOTHING RETURNING id`,
          [JSON.stringify(rows), t],
        );
        const fresh = new Set(inserted.map((r) => r.id));
        const links = rows
          .filter((r) => fresh.has(r.id))
          .flatMap((r) =>
            r.categories.slice(0, 3).map((c, i) => ({ dapp_id: r.id, category_id: c, position: i })),
          );
        if (links.length > 0) {
          await tx.query(
            "dapp_categories_seed",
            `INSERT INTO dapp_categories (dapp_id, category_id, position)
             SELECT x.dapp_id, x.category_id, x.position
             FROM jsonb_to_recordset($1::jsonb) AS x(dapp_id text, category_id text, position smallint)
             JOIN categories c ON c.id = x.category_id
             ON CONFLICT DO NOTHING`,
            [JSON.stringify(links)],
          );
        }
        return fresh.size;
      });
    },

    listChains: () =>
      pg.query<Chain>(
        "chains_list",
        "SELECT id, name, short_name, icon, wormhole_id FROM chains ORDER BY (id = 8738) DESC, id",
      ),
  };
}
