import { defineConfig, type ViteUserConfig } from 'vitest/config';

/**
 * One vitest setup for every package. Workspace packages resolve to their TypeScript sources
 * through the `@paddock/source` export condition, so tests never need a prior build.
 * Vite 8 (Oxc) emits decorator metadata when the package tsconfig enables it (Nest apps).
 */
export function paddockVitest(
  opts: { nest?: boolean; globalSetup?: string[]; timeoutMs?: number; include?: string[] } = {},
): ViteUserConfig {
  // Only workspace packages carry this condition; third-party resolution stays untouched.
  const conditions = ['@paddock/source', 'module', 'node', 'development|production'];
  return defineConfig({
    resolve: { conditions },
    ssr: { resolve: { conditions } },
    test: {
      globals: true,
      environment: 'node',
      include: opts.include ?? ['test/**/*.spec.ts', 'src/**/*.spec.ts'],
      setupFiles: opts.nest ? ['reflect-metadata'] : [],
      globalSetup: opts.globalSetup ?? [],
      // Generous: suites run beside other suites on 2 cores; a hung test is still caught.
      testTimeout: opts.timeoutMs ?? 120_000,
      hookTimeout: 300_000,
      pool: 'forks',
      allowOnly: false,
      reporters: ['default', 'json'],
      outputFile: { json: '.vitest/results.json' },
    },
  });
}
