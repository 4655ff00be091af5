/**
 * The only module that imports `@aws-sdk/client-s3`: an object store with S3-style keys, backed by a
 * local directory by default or any S3-compatible store (path-style requests) when configured. Bodies
 * are uploaded as Buffers with checksums only when required (stream bodies with the SDK's default
 * checksums are stored corrupted by some S3-compatible servers).
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadBucketCommand,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { AppError } from "../errors.ts";
import { tempNameBeside } from "./temp-name.ts";

export interface ObjectStore {
  /** `file` (a local directory) or `s3`. */
  readonly kind: "file" | "s3";
  /** Where a key lives, for people: a file path or `s3://bucket/key`. */
  urlOf(key: string): string;
  put(key: string, body: Buffer, contentType?: string): Promise<void>;
  /** The object's bytes, or null when the key does not exist. */
  get(key: string): Promise<Buffer | null>;
  close(): void;
}

export interface ObjectStoreOptions {
  /** Directory used when `s3` is absent. */
  dir: string;
  s3?: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string };
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9._\-/]{0,1000}$/;

function checkKey(key: string): void {
  if (!KEY.test(key) || key.includes("..")) throw new AppError("invalid_object_key", `Bad object key ${key}`);
}

function storeError(action: string, key: string, cause: unknown): AppError {
  const e = cause as { $metadata?: { httpStatusCode?: number }; code?: string };
  const status = e?.$metadata?.httpStatusCode ?? 0;
  const network = typeof e?.code === "string" && /^E[A-Z]+/.test(e.code);
  return new AppError("object_store_error", `Object store ${action} of ${key} failed`, {
    retryable: network || status >= 500 || status === 429,
    cause,
    details: { status },
  });
}

export function createObjectStore(options: ObjectStoreOptions): ObjectStore {
  const s3 = options.s3;
  if (!s3) {
    const root = resolve(options.dir);
    const pathOf = (key: string) => {
      checkKey(key);
      const path = join(root, ...key.split("/"));
      if (!path.startsWith(root + sep)) throw new AppError("invalid_object_key", `Bad object key ${key}`);
      return path;
    };
    return {
      kind: "file",
      urlOf: (key) => `file://${pathOf(key)}`,
      async put(key, body) {
        const path = pathOf(key);
        await mkdir(dirname(path), { recursive: true });
        // Write then rename: a reader never sees half a page. The temporary name is the call's own: two puts of
        // one key at once (replicas in one process) neither share nor steal it.
        const tmp = tempNameBeside(path, "tmp");
        await writeFile(tmp, body);
        await rename(tmp, path);
      },
      async get(key) {
        try {
          return await readFile(pathOf(key));
        } catch (error) {
          if ((error as { code?: string }).code === "ENOENT") return null;
          throw storeError("read", key, error);
        }
      },
      close() {},
    };
  }
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  let bucketReady: Promise<void> | null = null;
  const ensureBucket = () => {
    bucketReady ??= (async () => {
      try {
        await client.send(new HeadBucketCommand({ Bucket: s3.bucket }));
      } catch {
        await client.send(new CreateBucketCommand({ Bucket: s3.bucket }));
      }
    })().catch((error: unknown) => {
      bucketReady = null;
      throw storeError("bucket check", s3.bucket, error);
    });
    return bucketReady;
  };
  return {
    kind: "s3",
    urlOf: (key) => `s3://${s3.bucket}/${key}`,
    async put(key, body, contentType = "application/json") {
      checkKey(key);
      await ensureBucket();
      try {
        await client.send(
          new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body, ContentType: contentType }),
        );
      } catch (error) {
        throw storeError("write", key, error);
      }
    },
    async get(key) {
      checkKey(key);
      try {
        const r = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
        if (!r.Body) return null;
        return Buffer.from(await r.Body.transformToByteArray());
      } catch (error) {
        const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
        if (e?.name === "NoSuchKey" || e?.name === "NoSuchBucket" || e?.$metadata?.httpStatusCode === 404)
          return null;
        throw storeError("read", key, error);
      }
    },
    close() {
      client.destroy();
    },
  };
}
