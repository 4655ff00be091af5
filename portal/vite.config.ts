/**
 * The admin portal's pages (docs/portal.md): plain TypeScript and lightweight-charts, bundled into
 * portal/dist by `npm run portal:build` (scripts/portal-build.ts) and served by the API at `/portal/`.
 * Relative asset URLs (`base: "./"`), so the same build works under `/portal/` and `/<stage>/portal/`.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  logLevel: "warn",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // No inline scripts (the pages' Content-Security-Policy allows 'self' only).
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1024,
  },
});
