// Type-aware lint for every package: promise safety and exhaustive switches carry the most
// weight in Nest and event-sourced code, so they are errors, not warnings.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layering, checked on every import by every package's lint (so by `pnpm test`): each app is
// its own process and reaches the others over HTTP, NATS or the database through
// packages/contracts, never by importing them; packages are shared by the apps and never import
// one; the policy engine's core evaluates in every process (the browser included) and does no
// I/O, its file-reading CLI and fixture loader apart.
const APPS = ['cli', 'console', 'control-plane', 'controller', 'gateway', 'runner', 'terraform-provider'];
const APP_FILES = '**/*.{ts,tsx,mts,cts}';
const importsOfApps = (apps) => [
  { group: apps.flatMap((a) => [`@paddock/${a}`, `@paddock/${a}/*`]), message: 'an app is reached over the network or through packages/contracts, never imported' },
  { regex: `(^|/)\\.\\./(\\.\\./)*(apps/)?(${apps.join('|')})/(src|dist|test|bench)(/|$)`, message: 'an app is reached over the network or through packages/contracts, never imported' },
];
// The entries that read files: the CLI, the golden-fixture loader and the `@paddock/policy/testing` entry that exports it.
const POLICY_IO_FILES = ['packages/policy/src/cli.ts', 'packages/policy/src/fixtures.ts', 'packages/policy/src/testing.ts'];
const IO_MODULES = ['fs', 'fs/promises', 'net', 'http', 'https', 'http2', 'child_process', 'dgram', 'dns', 'tls', 'cluster', 'worker_threads', 'readline'];
const policyCoreNoIo = [
  { group: [...IO_MODULES, ...IO_MODULES.map((m) => `node:${m}`), 'pg', 'kysely', '@nats-io/*', 'fastify', 'ws', '@kubernetes/*'], message: 'the policy core does no I/O: it evaluates in every process, the browser included' },
  { group: ['./cli', './fixtures', './testing', './cli.js', './fixtures.js', './testing.js'], message: 'the policy core does no I/O, not even through its CLI or fixture loader' },
];
const layering = [
  ...APPS.map((app) => ({
    files: [`apps/${app}/${APP_FILES}`],
    rules: { 'no-restricted-imports': ['error', { patterns: importsOfApps(APPS.filter((a) => a !== app)) }] },
  })),
  {
    files: [`packages/${APP_FILES}`],
    ignores: ['packages/policy/src/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: importsOfApps(APPS) }] },
  },
  { files: ['packages/policy/src/**'], rules: { 'no-restricted-imports': ['error', { patterns: [...importsOfApps(APPS), ...policyCoreNoIo] }] } },
  { files: POLICY_IO_FILES, rules: { 'no-restricted-imports': ['error', { patterns: importsOfApps(APPS) }] } },
];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.vitest/**', '**/*.mjs', '**/*.mts', '**/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-extraneous-class': 'off',
      curly: ['error', 'multi-line'],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // Tests pass methods to expect() and vi helpers unbound; parsed JSON bodies are typed like any other value.
    files: ['**/test/**/*.ts', '**/*.spec.ts'],
    rules: {
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  ...layering,
);
