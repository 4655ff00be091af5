// Test passes: embedded (packs the typed client and runs its example against the demo on the embedded stores).
/**
 * The typed client as a package someone else installs: `npm pack` of clients/typescript (its prepack compiles
 * `dist/`), `npm install` of the tarball in a temporary project outside the repository, then the README's js
 * example run with plain `node` against the real app listening on a local port, and the same code type-checked
 * as TypeScript against the installed declarations.
 */
import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.ts";

const ROOT = realpathSync(fileURLToPath(new URL("../../", import.meta.url)));
const CLIENT = join(ROOT, "clients", "typescript");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command without blocking the event loop (the app answering the example lives in this process). */
function run(
  file: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        cwd: options.cwd,
        // A clean environment: no npm_config_* of the npm running vitest (workspace, prefix) leaks in.
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? options.cwd, ...options.env },
        timeout: 180_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function ok(what: string, r: Run): Run {
  if (r.code !== 0)
    throw new Error(`${what} exited ${r.code}:\n${r.stderr.slice(-4000)}\n${r.stdout.slice(-2000)}`);
  return r;
}

/** The README's ```js block: the example a user copies. */
function readmeExample(): string {
  const readme = readFileSync(join(CLIENT, "README.md"), "utf8");
  const block = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error("clients/typescript/README.md has no js example");
  return block;
}

/** `name` and the packages it depends on at run time, transitively, as installed in the root's node_modules. */
function runtimeDependencies(name: string, seen = new Set<string>()): string[] {
  seen.add(name);
  const pkg = JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  for (const dep of Object.keys(pkg.dependencies ?? {})) if (!seen.has(dep)) runtimeDependencies(dep, seen);
  return [...seen];
}

// Packing and installing do not depend on the stores: the pass on PostgreSQL would repeat the embedded pass.
const serverPass = Boolean(process.env.TEST_POSTGRES_URL);
if (serverPass)
  console.warn(
    "[skip notice] packed client: it does not depend on the stores, covered by the embedded passes",
  );

describe.skipIf(serverPass)("the packed typed client, installed outside the repository", () => {
  let t: TestApp;
  let baseUrl = "";
  let dir = "";
  let tarball = "";

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    dir = realpathSync(mkdtempSync(join(tmpdir(), "client-package-")));
    if (dir.startsWith(ROOT)) throw new Error(`the temporary project ${dir} is inside the repository`);
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("packs compiled JavaScript with type declarations, a license and no TypeScript source", async () => {
    const packed = ok(
      "npm pack",
      await run("npm", ["pack", "-w", "clients/typescript", "--json", "--pack-destination", dir], {
        cwd: ROOT,
      }),
    );
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as {
      filename: string;
      files: { path: string }[];
    }[];
    expect(info).toBeDefined();
    tarball = join(dir, info!.filename);
    const files = info!.files.map((f) => f.path).sort();
    expect(files).toEqual(
      expect.arrayContaining([
        "LICENSE",
        "README.md",
        "dist/index.d.ts",
        "dist/index.js",
        "dist/schema.d.ts",
      ]),
    );
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);

    const manifest = JSON.parse(readFileSync(join(CLIENT, "package.json"), "utf8")) as Record<
      string,
      unknown
    >;
    expect(manifest.private).toBeUndefined();
    expect(manifest.license).toBe("MIT");
  });

  it("installs from the tarball without the network (npm install --offline)", async () => {
    expect(tarball, "the pack case ran first").not.toBe("");
    const project = join(dir, "project");
    mkdirSync(join(project, "deps"), { recursive: true });
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "client-package-test", version: "1.0.0", private: true, type: "module" }),
    );
    // The runtime dependencies (openapi-fetch and its own) as tarballs of the versions the repository
    // installed, so the install needs no registry; npm resolves the client's ranges to them.
    const deps = runtimeDependencies("openapi-fetch").map((name) => join(ROOT, "node_modules", name));
    const packedDeps = ok(
      "npm pack of the dependencies",
      await run("npm", ["pack", "--json", ...deps], { cwd: join(project, "deps") }),
    );
    const depFiles = (
      JSON.parse(packedDeps.stdout.slice(packedDeps.stdout.indexOf("["))) as { filename: string }[]
    ).map((d) => `./deps/${d.filename}`);
    ok(
      "npm install",
      await run("npm", ["install", "--offline", "--no-audit", "--no-fund", tarball, ...depFiles], {
        cwd: project,
      }),
    );
    const installed = join(project, "node_modules", "@alephium-indexer", "client");
    expect(existsSync(join(installed, "dist", "index.js"))).toBe(true);
    expect(existsSync(join(installed, "dist", "index.d.ts"))).toBe(true);
    expect(existsSync(join(installed, "src"))).toBe(false);
  });

  it("runs the README's example with plain node against the API", async () => {
    const project = join(dir, "project");
    expect(existsSync(join(project, "node_modules", "@alephium-indexer", "client")), "installed").toBe(true);
    writeFileSync(join(project, "example.mjs"), readmeExample());

    const asUser = ok(
      "node example.mjs",
      await run("node", ["example.mjs"], {
        cwd: project,
        env: { ALEPHIUM_INDEXER_URL: baseUrl, ALEPHIUM_INDEXER_KEY: t.userKey, ADMIN_KEY: t.adminKey },
      }),
    );
    const lines = asUser.stdout.trim().split("\n");
    expect(lines[0]).toBe("events: 0");
    expect(lines).toContain("new events: 0");
    // The user key's own usage against its plan's daily limit.
    const usage = lines.find((l) => l.startsWith("key "));
    expect(usage).toMatch(/^key \S+ requests: \d+ of [1-9]\d*$/);
    expect(lines.at(-1)).toMatch(/^new key, store it now: alk_\S+$/);
    expect(asUser.stderr).toBe("");

    // With a user key as ADMIN_KEY the admin call answers the typed Problem body.
    const refused = ok(
      "node example.mjs (user key as admin)",
      await run("node", ["example.mjs"], {
        cwd: project,
        env: { ALEPHIUM_INDEXER_URL: baseUrl, ALEPHIUM_INDEXER_KEY: t.userKey, ADMIN_KEY: t.userKey },
      }),
    );
    expect(refused.stderr.trim()).toBe("refused: 403 admin_required");
  });

  it("type-checks the same example as TypeScript against the installed declarations", async () => {
    const project = join(dir, "project");
    writeFileSync(join(project, "example.ts"), readmeExample());
    // process.env without @types/node: a one-line declaration keeps the project free of other packages.
    writeFileSync(
      join(project, "env.d.ts"),
      "declare const process: { env: Record<string, string | undefined> };\n",
    );
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          types: [],
          lib: ["ES2022", "DOM"],
        },
        files: ["example.ts", "env.d.ts"],
      }),
    );
    ok("tsc", await run(join(ROOT, "node_modules", ".bin", "tsc"), ["-p", project], { cwd: project }));
  });
});
