// ESLint (flat config) with typescript-eslint's recommended rules, for every hand-written
// TypeScript and JavaScript file. generated/ is written by codegen (its own checks:
// codegen:check and the generated package tests). The architecture's import rules are
// checked by dependency-cruiser (.dependency-cruiser.cjs), not here: `npm run lint` runs both.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'generated/**', 'node_modules/**', 'artifacts/**', 'data/**', '**/*.d.ts', 'test/architecture/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', URLSearchParams: 'readonly',
        setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly',
        setImmediate: 'readonly', clearImmediate: 'readonly', queueMicrotask: 'readonly', structuredClone: 'readonly',
        TextEncoder: 'readonly', TextDecoder: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly',
        performance: 'readonly', fetch: 'readonly', Response: 'readonly', Request: 'readonly', Headers: 'readonly',
        WebSocket: 'readonly', globalThis: 'readonly', window: 'readonly', document: 'readonly', navigator: 'readonly',
        EventSource: 'readonly', localStorage: 'readonly', sessionStorage: 'readonly', location: 'readonly',
        HTMLElement: 'readonly', Event: 'readonly', EventTarget: 'readonly', CustomEvent: 'readonly', FormData: 'readonly',
        Blob: 'readonly', crypto: 'readonly', __dirname: 'readonly', require: 'readonly', module: 'writable',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // Control characters in patterns are deliberate here: log text, names and frames are
      // sanitised against them (NUL, C0 controls, lone surrogates).
      'no-control-regex': 'off',
    },
  },
  {
    // Migrations take Kysely<any>, as kysely documents: a migration must not depend on the
    // application's current schema types, which describe the database after every migration.
    files: ['server/db/migrations/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // CommonJS configuration files (dependency-cruiser reads .cjs).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Code that runs inside the page (page.evaluate) in the browser bench.
    files: ['bench/console.mjs'],
    languageOptions: { globals: { PerformanceObserver: 'readonly', requestAnimationFrame: 'readonly', MutationObserver: 'readonly' } },
  },
  {
    // Tests and fixtures may use `any` for hostile inputs and loose event plumbing.
    files: ['test/**', 'bench/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
