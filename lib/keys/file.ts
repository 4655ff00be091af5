/**
 * The API keys of a no-database deployment (API_KEYS_FILE): one key per line, `<key>` for a user key or
 * `<key> admin` for an admin key, `#` comments and blank lines ignored. Only the keys' SHA-256 hashes are
 * kept in memory; a key is looked up by its hash.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { AppError } from "../errors.ts";

export type FileKeyLevel = "user" | "admin";

export interface FileKeys {
  /** The level of a key listed in the file, or null for a key that is not. */
  levelOf(raw: string): FileKeyLevel | null;
  readonly size: number;
}

const hash = (raw: string) => createHash("sha256").update(raw).digest("hex");

/** Parses a key file's text; a malformed line stops the start with its number. */
export function parseKeyFile(text: string, source = "API_KEYS_FILE"): FileKeys {
  const byHash = new Map<string, FileKeyLevel>();
  text.split(/\r?\n/).forEach((line, i) => {
    const content = line.replace(/#.*$/, "").trim();
    if (!content) return;
    const [key, level = "user", extra] = content.split(/\s+/);
    if (!key || extra !== undefined || (level !== "user" && level !== "admin") || key.length < 16) {
      throw new AppError(
        "bad_key_file",
        `${source} line ${i + 1}: expected \`<key>\` or \`<key> admin\` (a key of at least 16 characters).`,
      );
    }
    byHash.set(hash(key), level);
  });
  return { levelOf: (raw) => byHash.get(hash(raw)) ?? null, size: byHash.size };
}

/** Reads API_KEYS_FILE; null when it is not configured. */
export function readKeyFile(path: string): FileKeys | null {
  if (!path) return null;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new AppError("bad_key_file", `API_KEYS_FILE ${path} cannot be read: ${(error as Error).message}`);
  }
  return parseKeyFile(text, `API_KEYS_FILE ${path}`);
}
