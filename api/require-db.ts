/**
 * The database-backed services of a route group: `need("registry")` is `deps.registry`, or a 503
 * `database_not_configured` when this deployment runs without the databases. The auth hook already answers 503 on
 * routes declared `db: "required"` before their handler runs, so this is the same answer from the one place that
 * knows, instead of a `!` that would turn a mis-declared route into a 500.
 */
import { databaseDisabled } from "../lib/errors.ts";
import type { ApiDeps, DbDeps } from "./types.ts";

export function requireDb(deps: ApiDeps): <K extends keyof DbDeps>(key: K) => DbDeps[K] {
  return (key) => {
    const service = deps[key];
    if (service === null || service === undefined) throw databaseDisabled();
    return service as DbDeps[typeof key];
  };
}
