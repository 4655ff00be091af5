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

/** Schema names are topic names (without prefix): `alephium.blocks.v1`, `alephium.events.v1`. */
export type SchemaName = "alephium.blocks.v1" | "alephium.events.v1";

/** Built-in ids used when no registry is configured; never reused for another schema. */
export const BUILTIN_SCHEMA_IDS: Record<SchemaName, number> = {
  "alephium.blocks.v1": 1,
  "alephium.events.v1": 2,
};

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

export async function createCodec<T>(name: SchemaName, registryUrl = ""): Promise<Codec<T>> {
  const text = readSchema(name);
  const type = avro.Type.forSchema(JSON.parse(text));
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
      const body = type.toBuffer(value);
      const header = Buffer.alloc(5);
      header.writeUInt32BE(schemaId, 1);
      return Buffer.concat([header, body]);
    },
    decode(buffer) {
      const { schemaId: id, body } = decodeWireHeader(buffer);
      if (id !== schemaId) {
        throw new AppError("unknown_schema", `Message has schema id ${id}; ${name} uses ${schemaId}`);
      }
      return type.fromBuffer(body) as T;
    },
  };
}
