/**
 * A temporary name beside `path` for write-then-rename (`<path>.<tag>-<pid>-<random>`), unique per call: two writers in
 * one process (replicas, concurrent builds) never share it, and the tag says what left it behind after a crash.
 */
import { randomBytes } from "node:crypto";

export function tempNameBeside(path: string, tag: string): string {
  return `${path.replace(/\/+$/, "")}.${tag}-${process.pid}-${randomBytes(6).toString("hex")}`;
}
