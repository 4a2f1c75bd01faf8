// The admin API writes the audit trail (DECISIONS H9) for every authorized state-changing
// request, under the CLI's action names, with the admin token by hash prefix (never the
// token); tokens it issues expire like those of `agent issue` (DECISIONS H8).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollmentExpiresAt } from '../../server/security/enrollment.js';
import { adminActor, listAudit } from '../../server/security/audit.js';
import { httpBase, httpRequest } from '../server/control-helpers.js';
import { startTestServer, type TestServer } from '../server/wire.js';

const ADMIN_TOKEN = 'adm_' + 'Q'.repeat(40);
let t: TestServer;
let base: string;
beforeAll(async () => {
  t = await startTestServer({ admin_token: ADMIN_TOKEN });
  base = httpBase(t);
});
afterAll(async () => {
  await t.close();
});

const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };

describe('admin API audit trail', () => {
  it('issue, revoke and config are audited with the admin token actor; reads and refused requests are not', async () => {
    const issued = await httpRequest(`${base}/admin/agents`, { method: 'POST', body: { hostname: 'audited-1' }, headers: auth });
    expect(issued.status).toBe(201);
    const host = issued.body.host_id as string;
    t.tokens.push(issued.body.token);
    const expires = await enrollmentExpiresAt(t.server.storage.db, host);
    expect(expires).toBeTypeOf('string');
    const ttlDays = (Date.parse(expires as string) - Date.now()) / 86_400_000;
    expect(ttlDays).toBeGreaterThan(6.9);
    expect(ttlDays).toBeLessThanOrEqual(7);

    expect((await httpRequest(`${base}/admin/agents/${host}`, { headers: auth })).status).toBe(200);
    expect((await httpRequest(`${base}/admin/agents/${host}/revoke`, { method: 'POST', headers: { Authorization: 'Bearer wrong-token-wrong-token-wrong-token' } })).status).toBe(401);
    expect((await httpRequest(`${base}/admin/agents/${host}/revoke`, { method: 'POST', headers: auth })).status).toBeLessThan(300);

    const rows = (await listAudit(t.server.storage.db, { host_id: host })).map((r) => ({ actor: r.actor, action: r.action }));
    const actor = adminActor(ADMIN_TOKEN);
    expect(actor).not.toContain(ADMIN_TOKEN);
    expect(rows.sort((a, b) => a.action.localeCompare(b.action))).toEqual([
      { actor, action: 'agent.issue' },
      { actor, action: 'agent.revoke' },
    ]);
    for (const r of await listAudit(t.server.storage.db)) expect(JSON.stringify(r)).not.toContain(ADMIN_TOKEN);
  });
});
