// The console's build (`npm run build` runs it after the server's): React, bundled into
// dist/console, which the API serves at /console/ (src/platform/console.ts). Nothing is fetched
// from elsewhere at run time.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  plugins: [react()],
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
  },
});
