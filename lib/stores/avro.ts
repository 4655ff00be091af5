/**
 * Avro codecs in the Confluent wire format (magic byte 0, 4-byte schema id, Avro binary).
 * With SCHEMA_REGISTRY_URL the schema id comes from the registry (subject `<topic>-value`);
 * without one, each schema has a built-in id, so the bytes on the topic have the same layout either way.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { SchemaRegistry, SchemaType } from "@kafkajs/confluent-schema-registry";
import avro from "avsc";
import { AppError } from "../errors.ts";

/** Schema names are topic names (without prefix), for example `alephium.blocks.v2`. */
export type SchemaName =
  | "alephium.blocks.v2"
  | "alephium.events.v2"
  | "alephium.series-touched.v1"
  | "alephium.holders-touched.v1";

/**
 * Built-in ids used when no registry is configured; never reused for another schema
 * (1 and 2 were `alephium.blocks.v1` and `alephium.events.v1`).
 */
export const BUILTIN_SCHEMA_IDS: Record<SchemaName, number> = {
  "alephium.blocks.v2": 3,
  "alephium.events.v2": 4,
  "alephium.series-touched.v1": 5,
  "alephium.holders-touched.v1": 6,
};

/**
 * A discriminated union `{ kind: K, ... }` carried as an Avro union of named records: `kinds` maps
 * each `kind` to its record's full name. The Avro bytes carry the branch; the value carries `kind`.
 */
export type UnionKinds<T extends { kind: string }> = { [K in T["kind"]]: string };

export interface Codec<T> {
  readonly schemaId: number;
  encode(value: T): Buffer;
  decode(buffer: Buffer): T;
}

const SCHEMA_DIR = fileURLToPath(new URL("../../schemas/", import.meta.url));

export function readSchema(name: SchemaName): string {
  return readFileSync(`${SCHEMA_DIR}${name}.avsc`, "utf8");
}

export function decodeWireHeader(buffer: Buffer): { schemaId: number; body: Buffer } {
  if (buffer.length < 5 || buffer.readUInt8(0) !== 0) {
    throw new AppError("bad_message", "Message is not in the Confluent wire format (magic byte 0)");
  }
  return { schemaId: buffer.readUInt32BE(1), body: buffer.subarray(5) };
}

export async function createCodec<T extends { kind: string }>(
  name: SchemaName,
  kinds: UnionKinds<T>,
  registryUrl = "",
): Promise<Codec<T>> {
  const text = readSchema(name);
  // Unions of records are wrapped (`{ "<record name>": value }`); `["null", x]` unions stay plain, and so does a
  // union of one record (its value is the record's fields: there is one kind).
  const type = avro.Type.forSchema(JSON.parse(text), { wrapUnions: "auto" });
  const wrapped = type instanceof avro.types.WrappedUnionType;
  const branches = Object.entries(kinds) as [T["kind"], string][];
  const kindOf = new Map(branches.map(([kind, record]) => [record, kind]));
  const recordOf = new Map(branches);
  let schemaId = BUILTIN_SCHEMA_IDS[name];
  if (registryUrl) {
    const registry = new SchemaRegistry({ host: registryUrl });
    ({ id: schemaId } = await registry.register(
      { type: SchemaType.AVRO, schema: text },
      { subject: `${name}-value` },
    ));
  }
  return {
    schemaId,
    encode(value) {
      const { kind, ...fields } = value;
      const record = recordOf.get(kind);
      if (!record) throw new AppError("bad_message", `${name} has no record for kind ${String(kind)}`);
      const body = type.toBuffer(wrapped ? { [record]: fields } : fields);
      const header = Buffer.alloc(5);
      header.writeUInt32BE(schemaId, 1);
      return Buffer.concat([header, body]);
    },
    decode(buffer) {
      const { schemaId: id, body } = decodeWireHeader(buffer);
      if (id !== schemaId) {
        throw new AppError("unknown_schema", `Message has schema id ${id}; ${name} uses ${schemaId}`);
      }
      const value = type.fromBuffer(body) as Record<string, unknown>;
      const [record, fields] = wrapped
        ? (Object.entries(value as Record<string, Record<string, unknown>>)[0] ?? [])
        : [branches[0]?.[1], value];
      const kind = record === undefined ? undefined : kindOf.get(record);
      if (kind === undefined || !fields) {
        throw new AppError("bad_message", `${name} message has an unknown branch ${String(record)}`);
      }
      return { kind, ...fields } as unknown as T;
    },
  };
}
