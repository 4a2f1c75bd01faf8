// Serves the operator console (built into dist/console/ by `npm run build`) at /ui/.
// Static files only; the page talks to /admin/ with the access rules of ./admin/access.ts.
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGED_HOME } from './packaged.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** Headers of every console answer: nothing from elsewhere, no framing, no referrer. */
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

/** dist/console next to dist/server (compiled), console/ next to lib/ (the tarball), or <repo>/dist/console (sources run by tests). */
export function consoleDir(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const dir of [join(here, '..', 'console'), join(here, '..', 'dist', 'console')]) {
    if (existsSync(join(dir, 'app.js'))) return dir; // (the sources in <repo>/console have no app.js)
  }
  return undefined;
}

const cache = new Map<string, Buffer>();

/** Handles /ui and /ui/*, and a browser's GET / (to the console); returns false for other paths. */
export function handleConsole(req: IncomingMessage, res: ServerResponse, path: string): boolean {
  if (path === '/' && (req.method === 'GET' || req.method === 'HEAD') && (req.headers['accept'] ?? '').includes('text/html')) {
    // a browser opening the server's address (or a proxy's prefix) lands in the console; relative,
    // as /ui's, to stay under a prefix. Scripts (no text/html) keep the 404 that lists the endpoints.
    res.writeHead(302, { Location: 'ui/' }).end();
    return true;
  }
  if (path !== '/ui' && !path.startsWith('/ui/')) return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { code: 405, message: 'the console is static: use GET' } }));
    return true;
  }
  if (path === '/ui') {
    // relative, so that it stays under a reverse proxy's path prefix (/cortex/ui → /cortex/ui/)
    res.writeHead(308, { Location: 'ui/' }).end();
    return true;
  }
  const dir = consoleDir();
  if (dir === undefined) {
    const why =
      PACKAGED_HOME === undefined
        ? 'The console is not built: run `npm run build` (npm install and npm start do it).\n'
        : `The console is missing from this install (no console/app.js in ${PACKAGED_HOME}): unpack the cortex-server tarball again.\n`;
    res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' }).end(why);
    return true;
  }
  let rel: string;
  try {
    rel = decodeURIComponent(path.slice('/ui/'.length)) || 'index.html';
  } catch {
    rel = '';
  }
  const file = normalize(join(dir, rel));
  const ext = /\.[a-z]+$/.exec(rel)?.[0] ?? '';
  if (rel === '' || !file.startsWith(dir + sep) || TYPES[ext] === undefined || !existsSync(file)) {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS }).end(`no console file ${path}; the console is at /ui/\n`);
    return true;
  }
  let body = cache.get(file);
  if (body === undefined) {
    body = readFileSync(file);
    cache.set(file, body);
  }
  res.writeHead(200, {
    'Content-Type': TYPES[ext] as string,
    'Content-Length': String(body.length),
    // index.html always fresh (it names the bundle); the bundle revalidates.
    'Cache-Control': ext === '.html' ? 'no-store' : 'no-cache',
    ...SECURITY_HEADERS,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
  return true;
}
