import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the control plane under /console/ (see README). Workspace packages are bundled from
// their TypeScript sources through the `@paddock/source` export condition, like the tests do.
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  resolve: { conditions: ['@paddock/source', 'browser', 'module', 'development|production'] },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 1500 },
});
