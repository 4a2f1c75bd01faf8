// The agent's CommonJS dependencies (pino, better-sqlite3, ws) are loaded with `require`, not
// with an ESM `import`, and node:tls only when it is needed (DECISIONS P9). An ESM import of
// a CommonJS file makes Node run its cjs-module-lexer over that file's source (and every file
// it re-exports) to find the named exports: at start-up the lexer gets hot enough for
// TurboFan, whose concurrent compile left 1.5-5 MiB of zone memory resident in a worker
// thread's malloc arena of an idle agent for good. An ESM import of node:tls builds its ESM
// facade, which reads every export, rootCertificates included (the whole CA list as strings);
// only a wss:// URL with an extra CA file needs that list.
//
// Bundlers (packaging/package.mjs, test/agent/fixtures/bundle.ts) replace this file with
// static imports of the same modules and names: a bundle has no lexer to skip and no
// node_modules beside it to require from.
import { createRequire } from 'node:module';
import type Pino from 'pino';
import type BetterSqlite3 from 'better-sqlite3';
import type WebSocketClass from 'ws';

const load = createRequire(import.meta.url);

export const pino = load('pino') as typeof Pino;
export const Database = load('better-sqlite3') as typeof BetterSqlite3;
export const WebSocket = load('ws') as typeof WebSocketClass;

/** node:tls, loaded on first use. */
export function tlsModule(): typeof import('node:tls') {
  return load('node:tls') as typeof import('node:tls');
}
