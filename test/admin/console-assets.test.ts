// The console's static files at /ui/ (built by `npm run build` into dist/console/).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleDir } from '../../server/console.js';
import { httpBase, httpRequest } from '../server/control-helpers.js';
import { startTestServer, type TestServer } from '../server/wire.js';

describe('console assets at /ui/', () => {
  let t: TestServer;
  let base: string;
  beforeAll(async () => {
    if (consoleDir() === undefined) throw new Error('dist/console is missing: run `npm run build` first');
    t = await startTestServer();
    base = httpBase(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves the page and its bundle with a CSP that allows nothing from elsewhere', async () => {
    const page = await httpRequest(`${base}/ui/`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<script type="module" src="./app.js">');
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    const js = await httpRequest(`${base}/ui/app.js`);
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|localhost)[a-z0-9.-]+\.(com|net|org|io)\/[\w/.-]*\.(js|css)/i); // no CDN
    const css = await httpRequest(`${base}/ui/app.css`);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('/ui redirects to /ui/; paths outside the folder, unknown files and other methods are refused', async () => {
    const r = await httpRequest(`${base}/ui`);
    expect([r.status, r.headers['location']]).toEqual([308, 'ui/']);
    for (const p of ['/ui/../package.json', '/ui/%2e%2e/%2e%2e/package.json', '/ui/nothing.js', '/ui/app.ts']) {
      expect((await httpRequest(`${base}${p}`)).status, p).toBe(404);
    }
    expect((await httpRequest(`${base}/ui/`, { method: 'POST', body: {} })).status).toBe(405);
  });

  it('a browser opening / is sent to the console (relative, for a proxy prefix); a script gets the 404 naming the endpoints', async () => {
    const browser = await httpRequest(`${base}/`, { headers: { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect([browser.status, browser.headers['location']]).toEqual([302, 'ui/']);
    const script = await httpRequest(`${base}/`);
    expect(script.status).toBe(404);
    expect(script.text).toContain('the console at /ui/');
    expect((await httpRequest(`${base}/`, { method: 'POST', body: {}, headers: { Accept: 'text/html' } })).status).toBe(404);
  });
});
