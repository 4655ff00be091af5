/** Reindex jobs (SPEC.md "What the service does" 5; `GET /system/jobs` in "Bot webhook and admins"). */
import { Type } from "@sinclair/typebox";
import { notFound } from "../../../lib/errors.ts";
import { JOB_STATES } from "../../../lib/jobs/repo.ts";
import { requireDb } from "../../require-db.ts";
import {
  Base58Address,
  CreatedNext,
  createdListQuery,
  DateTime,
  NoBody,
  Nullable,
  problemOf,
  StringEnum,
  UnixMs,
} from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

const TAGS = ["Chain"];

/** Unix ms up to the last instant a JavaScript Date (and a PostgreSQL timestamp) holds. */
const TimeMs = (description: string) =>
  Type.Integer({ minimum: 0, maximum: 8_640_000_000_000_000, description });

const JOBS_DOC = `A reindex job publishes the stored raw blocks of a block-time range again, so every processor rebuilds its
rows with the current decoders (a new decoder reaches history without asking the node). Optionally limited to
the blocks that mention one contract, or any contract of one dapp.

States: \`queued\` → \`running\` → \`completed\` | \`failed\` | \`cancelled\`. Workers run in \`start\` and as
\`process jobs\` (pg-boss on PostgreSQL or the embedded PGlite). Progress is saved after every page
(JOBS_PAGE_BLOCKS blocks); a worker that dies mid-job is replaced after JOBS_EXPIRE_S and the job resumes from
its last saved page. A failing chunk is retried JOBS_RETRY_LIMIT times with exponential backoff from
JOBS_RETRY_DELAY_S, then the job is \`failed\` with the error.

Overlapping ranges are refused: while a queued or running job covers any part of a range, creating another
job over it answers 409 \`job_overlaps\` with the other job's id (whatever either job's dapp or contract).`;

const Job = Type.Object(
  {
    job_id: Type.String({ format: "uuid" }),
    state: StringEnum(JOB_STATES),
    from_ts: UnixMs("Start of the block-time range (Unix ms, inclusive)."),
    to_ts: UnixMs("End of the block-time range (Unix ms, inclusive)."),
    dapp_id: Nullable(Type.String({ description: "Only blocks mentioning a contract of this dapp." })),
    contract_address: Nullable(Type.String({ description: "Only blocks mentioning this contract." })),
    blocks_total: Nullable(Type.Integer({ description: "Main-chain blocks in scope; null until counted." })),
    blocks_done: Type.Integer({ description: "Blocks published so far." }),
    cursor: Nullable(
      Type.Object(
        { ts: Type.Integer(), chain: Type.Integer(), height: Type.Integer() },
        { description: "Last block published (time in ms, chain index, height): where a retry resumes." },
      ),
    ),
    attempts: Type.Integer({ description: "Chunk attempts started (retries included)." }),
    error: Nullable(Type.String({ description: "Last error; kept when the job failed." })),
    created_by: Type.String({ description: "`key:<user id>`, `cli` or `telegram:<user id>`." }),
    created_at: DateTime(),
    started_at: Nullable(DateTime()),
    updated_at: DateTime(),
    finished_at: Nullable(DateTime()),
    progress: Type.Object({
      percent: Nullable(Type.Number({ description: "0-100; null until the total is counted." })),
      eta_seconds: Nullable(
        Type.Integer({
          description: "Seconds left at the rate so far; null before a rate exists; 0 once ended.",
        }),
      ),
    }),
  },
  { $id: "ReindexJob", title: "ReindexJob" },
);

const JobIdParams = Type.Object({ jobid: Type.String({ format: "uuid", description: "Job id." }) });
const JobResult = Type.Object({ ok: Type.Boolean(), job: Type.Ref("ReindexJob") });

export async function jobRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(Job);
  app.addHook("onClose", async () => deps.jobs?.close());

  app.post(
    "/system/jobs",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: TAGS,
        summary: "Create a reindex job",
        description: JOBS_DOC,
        body: Type.Object(
          {
            from: TimeMs("Start of the block-time range, Unix ms (inclusive)."),
            to: TimeMs("End of the block-time range, Unix ms (inclusive); not before `from`."),
            dapp_id: Type.Optional(
              Type.String({
                pattern: "^[a-z0-9][a-z0-9_-]{0,63}$",
                description: "Limit to one dapp's contracts.",
              }),
            ),
            contract_address: Type.Optional(Base58Address("Limit to blocks mentioning this contract.")),
          },
          { additionalProperties: false },
        ),
        response: {
          201: JobResult,
          409: problemOf(
            "A job of the same kind is queued or running over these chains (its id in `details.job_id`).",
          ),
        },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const job = await need("jobs").create({
        fromTs: b.from,
        toTs: b.to,
        dappId: b.dapp_id ?? null,
        contractAddress: b.contract_address ?? null,
        createdBy: `key:${request.apiKey?.user_id ?? "unknown"}`,
      });
      return reply.code(201).send({ ok: true, job });
    },
  );

  app.get(
    "/system/jobs",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: TAGS,
        summary: "List reindex jobs, newest first",
        description: `${JOBS_DOC}\n\nPages newest first by creation time; pass \`next\` back as \`cursor\` for the next page.`,
        querystring: Type.Object(
          {
            state: Type.Optional(StringEnum(JOB_STATES, { description: "Only jobs in this state." })),
            since: Type.Optional(TimeMs("Created at or after this time (Unix ms).")),
            until: Type.Optional(TimeMs("Created before this time (Unix ms).")),
            ...createdListQuery("Jobs"),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            jobs: Type.Array(Type.Ref("ReindexJob")),
            next: CreatedNext,
          }),
        },
      },
    },
    async (request) => {
      const q = request.query;
      return need("jobs").list({
        limit: q.limit,
        ...(q.state ? { state: q.state } : {}),
        ...(q.since !== undefined ? { since: q.since } : {}),
        ...(q.until !== undefined ? { until: q.until } : {}),
        ...(q.cursor ? { cursor: q.cursor } : {}),
      });
    },
  );

  app.get(
    "/system/jobs/:jobid",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: TAGS,
        summary: "Show a reindex job with its progress and error",
        params: JobIdParams,
        response: { 200: Type.Object({ job: Type.Ref("ReindexJob") }), 404: problemOf("No such job.") },
      },
    },
    async (request) => {
      const job = await need("jobs").get(request.params.jobid);
      if (!job) throw notFound(`No reindex job ${request.params.jobid}.`, { job_id: request.params.jobid });
      return { job };
    },
  );

  app.post(
    "/system/jobs/:jobid/cancel",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: TAGS,
        summary: "Cancel a queued or running reindex job",
        description:
          "A queued job never starts; a running one stops after the page it is publishing (what it already published stays, harmlessly: the sinks are idempotent). 409 `job_finished` when the job already ended.",
        params: JobIdParams,
        body: NoBody,
        response: {
          200: JobResult,
          404: problemOf("No such job."),
          409: problemOf("The job already ended."),
        },
      },
    },
    async (request) => ({ ok: true, job: await need("jobs").cancel(request.params.jobid) }),
  );
}
