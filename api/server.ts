/** Listens with the configured host, port and timeouts; closes gracefully on shutdown. */
import { buildApp } from "./app.ts";
import type { ApiDeps, App } from "./types.ts";

export interface RunningServer {
  app: App;
  url: string;
  close(): Promise<void>;
}

export async function startServer(deps: ApiDeps): Promise<RunningServer> {
  const app = await buildApp(deps);
  app.server.keepAliveTimeout = 65_000;
  app.server.headersTimeout = 66_000;
  const address = await app.listen({ host: deps.config.HOST, port: deps.config.PORT });
  deps.log.info({ url: address, stage: deps.config.STAGE }, "API listening.");
  return { app, url: address, close: () => app.close() };
}
