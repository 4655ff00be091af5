/** s3rver (an S3 protocol server from npm) in-process on an ephemeral port, for the S3 path of the object store. */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: {
  port: number;
  address: string;
  silent: boolean;
  directory: string;
}) => S3rverInstance;

export interface TestS3 {
  endpoint: string;
  close(): Promise<void>;
}

export async function startS3(): Promise<TestS3> {
  const S3rver = createRequire(import.meta.url)("s3rver") as S3rverClass;
  const directory = mkdtempSync(join(tmpdir(), "s3rver-"));
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
