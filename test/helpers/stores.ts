/**
 * Real stores for tests, isolated per test file: PGlite in memory by default, or a fresh database on
 * the PostgreSQL server named by TEST_POSTGRES_URL (CI sets it); chDB in a temporary directory with a
 * random database, or the ClickHouse server named by TEST_CLICKHOUSE_URL.
 */
import { createHash, randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { createLogger, type Logger } from "../../lib/logger.ts";
import { migrateClickHouse, migratePostgres, readMigrations } from "../../lib/migrate.ts";
import { type Ch, createClickHouse } from "../../lib/stores/clickhouse.ts";
import { buildOnce, pgliteVersion, templateCacheDir } from "../../lib/stores/pglite-template.ts";
import { createPostgres, type Pg } from "../../lib/stores/postgres.ts";

/**
 * The logger tests hand to the code they run. With TEST_LOG_LEVEL set it writes at that level to stderr; otherwise
 * it prints nothing and keeps this worker's last warnings and errors in memory, for a wait that times out to show
 * (`recentLogLines`, used by `waitFor`): a liveness failure in CI then says what the processes complained of.
 */
export const quietLog: Logger = process.env.TEST_LOG_LEVEL
  ? createLogger({ level: process.env.TEST_LOG_LEVEL })
  : createLogger({
      level: "warn",
      stream: new Writable({
        write(chunk: Buffer, _encoding, done) {
          recentLines.push(String(chunk).trimEnd().slice(0, 400));
          if (recentLines.length > RECENT_LINES) recentLines.shift();
          done();
        },
      }),
    });

const RECENT_LINES = 50;
const recentLines: string[] = [];

/** The last `n` warning and error lines `quietLog` kept (none when TEST_LOG_LEVEL sends them to stderr). */
export function recentLogLines(n = 10): string[] {
  return recentLines.slice(-n);
}

export function suffix(): string {
  return randomBytes(5).toString("hex");
}

export interface TestPg {
  pg: Pg;
  url: string;
  close(): Promise<void>;
}

let migratedDump: Blob | null | undefined;

/**
 * A dump of a PGlite cluster with every Postgres migration applied, made once per PGlite version and set of
 * migrations and kept beside the initdb template (lib/stores/pglite-template.ts): an in-memory PGlite loads it in
 * about 0.5 s where initdb and the migrations take 1–2 s (more on a busy machine), in every test file. Null when it
 * cannot be cached.
 */
async function pgliteMigrated(): Promise<Blob | null> {
  if (migratedDump !== undefined) return migratedDump;
  const hash = createHash("sha256");
  for (const m of readMigrations("postgres")) hash.update(`${m.version}:${m.checksum};`);
  const target = join(
    templateCacheDir(),
    `pglite-${pgliteVersion()}-migrated-${hash.digest("hex").slice(0, 16)}`,
  );
  const ok = await buildOnce(target, async (dir) => {
    const data = join(dir, "data");
    const db = await createPostgres({ url: "", dataDir: data, poolSize: 1, log: quietLog });
    await migratePostgres(db, quietLog);
    await db.close();
    const reopened = new PGlite(data);
    await reopened.waitReady;
    const dump = await reopened.dumpDataDir("none");
    await reopened.close();
    writeFileSync(join(dir, "dump.tar"), Buffer.from(await dump.arrayBuffer()));
    rmSync(data, { recursive: true, force: true });
  });
  const file = join(target, "dump.tar");
  migratedDump = ok && existsSync(file) ? new Blob([readFileSync(file)]) : null;
  return migratedDump;
}

/** A migrated Postgres: a new database on the server when TEST_POSTGRES_URL is set, else in-memory PGlite. */
export async function openTestPg(options: { migrate?: boolean } = {}): Promise<TestPg> {
  const serverUrl = process.env.TEST_POSTGRES_URL;
  let url = "";
  let drop: () => Promise<void> = async () => {};
  if (serverUrl) {
    const name = `test_${suffix()}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(serverUrl);
    u.pathname = `/${name}`;
    url = u.toString();
    drop = async () => {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    };
  }
  // In memory, a migrated store starts from the cached dump; the migrations then find nothing left to apply.
  const loadDataDir = !url && options.migrate !== false ? ((await pgliteMigrated()) ?? undefined) : undefined;
  const db = await createPostgres({ url, dataDir: "", poolSize: 5, log: quietLog, loadDataDir });
  if (options.migrate !== false) await migratePostgres(db, quietLog);
  return {
    pg: db,
    url,
    async close() {
      await db.close();
      await drop();
    },
  };
}

export interface TestCh {
  ch: Ch;
  dataDir: string;
  close(): Promise<void>;
}

/** The database of the migrated chDB template (each test file's copy has it alone in its own directory). */
const CH_TEMPLATE_DATABASE = "test_template";

/**
 * A chDB data directory holding one database with every ClickHouse migration applied, made once per chDB version
 * and set of migrations beside the PGlite templates: a test file copies it (a few milliseconds in memory) where
 * running the migrations' statements costs about half a second of CPU, in every test file. Null when it cannot be
 * cached. (One process may open chDB on several directories one after the other: the template is closed first.)
 */
async function chdbMigrated(): Promise<string | null> {
  const hash = createHash("sha256");
  for (const m of readMigrations("clickhouse")) hash.update(`${m.version}:${m.checksum};`);
  const version = (
    JSON.parse(readFileSync(createRequire(import.meta.url).resolve("chdb/package.json"), "utf8")) as {
      version: string;
    }
  ).version;
  const target = join(templateCacheDir(), `chdb-${version}-migrated-${hash.digest("hex").slice(0, 16)}`);
  const ok = await buildOnce(target, async (dir) => {
    const ch = await createClickHouse({
      url: "",
      dataDir: join(dir, "data"),
      database: CH_TEMPLATE_DATABASE,
      user: "default",
      password: "",
      log: quietLog,
    });
    await migrateClickHouse(ch, quietLog);
    await ch.close();
  });
  return ok && existsSync(join(target, "data")) ? join(target, "data") : null;
}

/**
 * A migrated ClickHouse database (chDB in a temp dir unless TEST_CLICKHOUSE_URL is set): a copy of the migrated
 * template in a new directory, or, in a directory the test gives (a second database beside another), a database with
 * a random name migrated there.
 */
export async function openTestCh(options: { migrate?: boolean; dataDir?: string } = {}): Promise<TestCh> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "chdb-test-"));
  const url = process.env.TEST_CLICKHOUSE_URL ?? "";
  const template = !url && !options.dataDir && options.migrate !== false ? await chdbMigrated() : null;
  if (template) cpSync(template, dataDir, { recursive: true });
  const ch = await createClickHouse({
    url,
    dataDir,
    database: template ? CH_TEMPLATE_DATABASE : `test_${suffix()}`,
    user: "default",
    password: "",
    log: quietLog,
  });
  if (options.migrate !== false) await migrateClickHouse(ch, quietLog);
  return {
    ch,
    dataDir,
    async close() {
      await ch.command("drop_test_db", `DROP DATABASE IF EXISTS ${ch.database}`).catch(() => undefined);
      await ch.close();
      if (!options.dataDir && !url) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
