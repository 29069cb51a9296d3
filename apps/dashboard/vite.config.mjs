// The dashboard's Vite config (Vite 8 transforms TSX itself with oxc; no React plugin, so no Fast Refresh in `vite dev`).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/dashboard/',
  oxc: { jsx: { runtime: 'automatic' } },
  // The email renderer is shared with the API: the preview is the email that is sent.
  resolve: { alias: { '@herald/email-documents': fileURLToPath(new URL('../../libs/email-documents/src/index.ts', import.meta.url)) } },
  build: {
    outDir: fileURLToPath(new URL('../../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    chunkSizeWarningLimit: 600,
    rolldownOptions: {
      // React libraries mark their modules "use client" for server components; a browser bundle has no use for it.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  server: { proxy: { '/dashboard/api': process.env.HERALD_API_URL ?? 'http://127.0.0.1:3000' } },
  logLevel: 'warn',
});
