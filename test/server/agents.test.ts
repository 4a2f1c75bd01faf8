import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashToken, tokenMatches } from '../../server/auth/tokens.js';
import {
  currentControlRev,
  findForHello,
  getAgent,
  issueAgent,
  listAgents,
  listControlChangesSince,
  markActive,
  markDisconnected,
  reissueToken,
  requestDecommission,
  requestRotation,
  revoke,
  rotateOnFirstEnrollment,
  rotateOnHello,
  setAgentConfig,
  touchLastSeenMany,
  type SessionStart,
} from '../../server/db/agents.repository.js';
import { getSetting, getSettings, setSetting, setSettings } from '../../server/db/settings.repository.js';
import { HostRevokedError, UnknownHostError } from '../../server/db/storage.js';
import { recordEnrollmentToken } from '../../server/security/enrollment.js';
import { readForHello } from '../../server/ws/hello-flow.js';
import { entries, openTempDb, type TempDb } from './helpers.js';

let t: TempDb;
beforeEach(async () => {
  t = await openTempDb();
});
afterEach(async () => {
  await t.cleanup();
});

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function session(overrides: Partial<SessionStart> = {}): SessionStart {
  return {
    session_id: randomUUID(),
    agent_version: '1.2.3',
    hostname: 'web-01.internal',
    platform_json: JSON.stringify({ os: 'linux', arch: 'x86_64', kernel: '6.1' }),
    capabilities_json: JSON.stringify({ supported_probes: [], sources: [], max_batch_entries: 1000, compression: [] }),
    last_handshake: new Date().toISOString(),
    ...overrides,
  };
}

async function hashesOf(host_id: string) {
  return t.storage.db
    .selectFrom('agents')
    .select(['token_hash', 'token_hash_prev', 'connection_state', 'session_id'])
    .where('host_id', '=', host_id)
    .executeTakeFirstOrThrow();
}

describe('issueAgent / reissueToken / listAgents', () => {
  it('issues a NeverConnected row with a UUID v4 host_id and the BLAKE3 hash of a fresh token', async () => {
    const issued = await issueAgent(t.storage.db, 'web-01');
    expect(issued.host_id).toMatch(UUID_V4);
    expect(issued.hostname).toBe('web-01');
    expect(issued.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const row = await hashesOf(issued.host_id);
    expect(row.connection_state).toBe('NeverConnected');
    expect(row.token_hash).toBe(hashToken(issued.token));
    expect(row.token_hash_prev).toBeNull();
    const agent = await getAgent(t.storage.db, issued.host_id.toUpperCase());
    expect(agent?.accepted_seq).toBe(0);
    expect(agent?.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('lists agents without any token hash', async () => {
    const a = await issueAgent(t.storage.db, 'b-host');
    const b = await issueAgent(t.storage.db, 'a-host');
    const list = await listAgents(t.storage.db);
    expect(list.map((r) => r.hostname)).toEqual(['a-host', 'b-host']);
    for (const row of list) {
      expect(row).not.toHaveProperty('token_hash');
      expect(row).not.toHaveProperty('token_hash_prev');
      const text = JSON.stringify(row);
      expect(text).not.toContain(hashToken(a.token));
      expect(text).not.toContain(hashToken(b.token));
      expect(text).not.toContain(a.token);
      expect(text).not.toContain(b.token);
    }
    expect(await getAgent(t.storage.db, a.host_id)).not.toHaveProperty('token_hash');
    expect(await getAgent(t.storage.db, randomUUID())).toBeUndefined();
  });

  it('reissues: back to NeverConnected with the new hash, prev cleared, accepted_seq and logs kept', async () => {
    const first = await issueAgent(t.storage.db, 'web-01');
    const newHash = hashToken('long-lived-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaa');
    const s = session();
    expect(
      await rotateOnFirstEnrollment(t.storage.db, first.host_id, s, {
        presented_hash: hashToken(first.token),
        new_token_hash: newHash,
      }),
    ).toBe(true);
    await t.storage.ingest.commitBatch(first.host_id, entries(1, 5), new Date().toISOString());
    // a rotation leaves a previous hash behind; reissue must clear it
    await rotateOnHello(t.storage.db, first.host_id, session(), {
      presented_hash: newHash,
      new_token_hash: hashToken('another-token-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'),
      grace_until: new Date(Date.now() + 300_000).toISOString(),
    });
    expect((await hashesOf(first.host_id)).token_hash_prev).toBe(newHash);

    const again = await reissueToken(t.storage.db, first.host_id);
    expect(again.host_id).toBe(first.host_id);
    // the operator's label stays; the name the hello reported is kept beside it (DECISIONS I)
    expect(again.hostname).toBe('web-01');
    expect((await getAgent(t.storage.db, first.host_id))?.agent_hostname).toBe('web-01.internal');
    expect(again.token).not.toBe(first.token);
    const row = await hashesOf(first.host_id);
    expect(row).toEqual({
      token_hash: hashToken(again.token),
      token_hash_prev: null,
      connection_state: 'NeverConnected',
      session_id: null,
    });
    const agent = await getAgent(t.storage.db, first.host_id);
    expect(agent?.accepted_seq).toBe(5);
    const logs = await t.storage.db.selectFrom('logs').select('seq').execute();
    expect(logs).toHaveLength(5);
    // the old session's close no longer touches the row
    expect(await markDisconnected(t.storage.db, first.host_id, s.session_id, '1000 bye')).toBe(false);
    expect((await hashesOf(first.host_id)).connection_state).toBe('NeverConnected');
  });

  it('refuses to reissue an unknown host', async () => {
    const id = randomUUID();
    await expect(reissueToken(t.storage.db, id)).rejects.toBeInstanceOf(UnknownHostError);
    await expect(revoke(t.storage.db, id)).rejects.toBeInstanceOf(UnknownHostError);
  });
});

describe('handshake bookkeeping', () => {
  it('findForHello returns the hashes and state; unknown host is undefined', async () => {
    const a = await issueAgent(t.storage.db, 'h');
    const row = await findForHello(t.storage.db, a.host_id);
    expect(row?.connection_state).toBe('NeverConnected');
    expect(tokenMatches(a.token, row?.token_hash)).toBe(true);
    expect(row?.token_hash_prev).toBeNull();
    expect(row?.accepted_seq).toBe(0);
    expect(await findForHello(t.storage.db, randomUUID())).toBeUndefined();
  });

  it('readForHello reads the same row as findForHello and the enrollment expiry, in one statement', async () => {
    const a = await issueAgent(t.storage.db, 'h');
    const b = await issueAgent(t.storage.db, 'other');
    expect(await readForHello(t.storage.db, a.host_id)).toEqual({ row: await findForHello(t.storage.db, a.host_id), expires: undefined });
    const expires = await recordEnrollmentToken(t.storage.db, a.host_id, 3_600_000);
    await recordEnrollmentToken(t.storage.db, b.host_id, 60_000);
    const read = await readForHello(t.storage.db, a.host_id.toUpperCase());
    expect(read.expires).toBe(expires);
    expect(read.row).toEqual(await findForHello(t.storage.db, a.host_id));
    expect(Object.keys(read.row ?? {}).sort()).toEqual(Object.keys((await findForHello(t.storage.db, a.host_id)) ?? {}).sort());
    expect(await readForHello(t.storage.db, randomUUID())).toEqual({ row: undefined, expires: undefined });
  });

  it('first enrollment rotates atomically and only once', async () => {
    const a = await issueAgent(t.storage.db, 'h');
    const presented = hashToken(a.token);
    const s = session();
    const newHash = hashToken('rotated-cccccccccccccccccccccccccccccccccccc');
    expect(
      await rotateOnFirstEnrollment(t.storage.db, a.host_id, s, { presented_hash: presented, new_token_hash: newHash }),
    ).toBe(true);
    const row = await getAgent(t.storage.db, a.host_id);
    expect(row).toMatchObject({
      connection_state: 'Active',
      session_id: s.session_id,
      agent_version: '1.2.3',
      hostname: 'h', // the operator's label stays (DECISIONS I)
      agent_hostname: 'web-01.internal',
      platform_json: s.platform_json,
      capabilities_json: s.capabilities_json,
      last_handshake: s.last_handshake,
      first_seen: s.last_handshake,
      last_seen: s.last_handshake,
      token_rotated_at: s.last_handshake,
    });
    expect(await hashesOf(a.host_id)).toMatchObject({ token_hash: newHash, token_hash_prev: null });
    // replaying the one-time token cannot enroll again
    expect(
      await rotateOnFirstEnrollment(t.storage.db, a.host_id, session(), {
        presented_hash: presented,
        new_token_hash: hashToken('x'),
      }),
    ).toBe(false);
    expect((await hashesOf(a.host_id)).token_hash).toBe(newHash);
  });

  it('markActive replaces the session, keeps first_seen, and can clear the previous hash', async () => {
    const a = await issueAgent(t.storage.db, 'h');
    const first = session({ last_handshake: '2026-01-01T00:00:00.000Z' });
    const longLived = hashToken('long-lived-dddddddddddddddddddddddddddddddd');
    await rotateOnFirstEnrollment(t.storage.db, a.host_id, first, {
      presented_hash: hashToken(a.token),
      new_token_hash: longLived,
    });
    await markDisconnected(t.storage.db, a.host_id, first.session_id, '1006 abnormal');
    const second = session({ last_handshake: '2026-01-02T00:00:00.000Z', agent_version: '1.3.0' });
    expect(await markActive(t.storage.db, a.host_id, second, longLived)).toBe(true);
    const row = await getAgent(t.storage.db, a.host_id);
    expect(row).toMatchObject({
      connection_state: 'Active',
      session_id: second.session_id,
      agent_version: '1.3.0',
      first_seen: '2026-01-01T00:00:00.000Z',
      last_handshake: '2026-01-02T00:00:00.000Z',
    });
    // wrong hash: nothing changes
    expect(await markActive(t.storage.db, a.host_id, session(), hashToken('wrong'))).toBe(false);
    expect((await getAgent(t.storage.db, a.host_id))?.session_id).toBe(second.session_id);

    // rotation leaves prev; a hello with the new token may clear it
    const newer = hashToken('newer-eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee');
    await rotateOnHello(t.storage.db, a.host_id, session(), {
      presented_hash: longLived,
      new_token_hash: newer,
      grace_until: '2026-01-02T00:05:00.000Z',
    });
    expect(await hashesOf(a.host_id)).toMatchObject({ token_hash: newer, token_hash_prev: longLived });
    expect(await markActive(t.storage.db, a.host_id, session(), newer, { clear_prev: true })).toBe(true);
    expect(await hashesOf(a.host_id)).toMatchObject({ token_hash: newer, token_hash_prev: null });
    expect((await getAgent(t.storage.db, a.host_id))?.token_rotation_grace_until).toBeNull();
  });

  it('markDisconnected applies only to the current session', async () => {
    const a = await issueAgent(t.storage.db, 'h');
    const hash = hashToken('t1-fffffffffffffffffffffffffffffffffffffffff');
    const s1 = session();
    await rotateOnFirstEnrollment(t.storage.db, a.host_id, s1, { presented_hash: hashToken(a.token), new_token_hash: hash });
    const s2 = session();
    await markActive(t.storage.db, a.host_id, s2, hash); // a second session replaces the first
    expect(await markDisconnected(t.storage.db, a.host_id, s1.session_id, '4003 replaced')).toBe(false);
    let row = await getAgent(t.storage.db, a.host_id);
    expect(row).toMatchObject({ connection_state: 'Active', session_id: s2.session_id, last_disconnect: null });

    expect(
      await markDisconnected(t.storage.db, a.host_id, s2.session_id, '1009 oversize', { now: '2026-02-02T02:02:02.002Z' }),
    ).toBe(true);
    row = await getAgent(t.storage.db, a.host_id);
    expect(row).toMatchObject({
      connection_state: 'Disconnected',
      last_disconnect: '2026-02-02T02:02:02.002Z',
      last_disconnect_reason: '1009 oversize',
    });
  });

  it('never un-revokes: a revoked row stays Revoked on close and cannot be activated', async () => {
    const a = await issueAgent(t.storage.db, 'h');
    const hash = hashToken('t1-gggggggggggggggggggggggggggggggggggggggg');
    const s = session();
    await rotateOnFirstEnrollment(t.storage.db, a.host_id, s, { presented_hash: hashToken(a.token), new_token_hash: hash });
    await revoke(t.storage.db, a.host_id);
    expect(await hashesOf(a.host_id)).toEqual({
      token_hash: null,
      token_hash_prev: null,
      connection_state: 'Revoked',
      session_id: s.session_id,
    });
    expect(await markDisconnected(t.storage.db, a.host_id, s.session_id, '4002 revoked')).toBe(true);
    const row = await getAgent(t.storage.db, a.host_id);
    expect(row).toMatchObject({ connection_state: 'Revoked', last_disconnect_reason: '4002 revoked' });
    expect(await markActive(t.storage.db, a.host_id, session(), hash)).toBe(false);
    expect((await hashesOf(a.host_id)).connection_state).toBe('Revoked');
    await expect(requestRotation(t.storage.db, a.host_id, 300)).rejects.toBeInstanceOf(HostRevokedError);
    await expect(requestDecommission(t.storage.db, a.host_id, 30)).rejects.toBeInstanceOf(HostRevokedError);
    await expect(setAgentConfig(t.storage.db, a.host_id, '{}')).rejects.toBeInstanceOf(HostRevokedError);
  });

  it('touchLastSeenMany moves last_seen and reports a missing row', async () => {
    const a = await issueAgent(t.storage.db, 'h');
    expect(await touchLastSeenMany(t.storage.db, t.storage.dialect, [a.host_id], '2026-03-03T03:03:03.003Z')).toBe(1);
    expect((await getAgent(t.storage.db, a.host_id))?.last_seen).toBe('2026-03-03T03:03:03.003Z');
    expect(await touchLastSeenMany(t.storage.db, t.storage.dialect, [randomUUID()])).toBe(0);
  });
});

describe('admin requests and the control revision', () => {
  it('changes are read a page at a time, in (control_rev, host_id) order, each row once, however many share one control_rev (G18)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await issueAgent(t.storage.db, `p${i}`)).host_id);
    const base = await currentControlRev(t.storage.db);
    // one change of many rows (a group's config) gives them one control_rev
    await t.storage.db.updateTable('agents').set({ control_rev: base + 1 }).where('host_id', 'in', ids.slice(0, 6)).execute();
    await t.storage.db.updateTable('agents').set({ control_rev: base + 2 }).where('host_id', '=', ids[6]!).execute();
    const read: string[] = [];
    let page = await listControlChangesSince(t.storage.db, base, undefined, 4);
    for (;;) {
      read.push(...page.map((c) => c.host_id));
      if (page.length < 4) break;
      const last = page[page.length - 1]!;
      page = await listControlChangesSince(t.storage.db, Number(last.control_rev), last.host_id, 4);
    }
    expect(read).toEqual([...[...ids.slice(0, 6)].sort(), ids[6]]);
    expect((await listControlChangesSince(t.storage.db, base, undefined, 4)).map((c) => Number(c.control_rev))).toEqual([base + 1, base + 1, base + 1, base + 1]);
  });

  it('every admin change raises the database-wide control_rev', async () => {
    const start = await currentControlRev(t.storage.db);
    expect(start).toBe(0);
    const a = await issueAgent(t.storage.db, 'a');
    const b = await issueAgent(t.storage.db, 'b');
    const afterIssue = await currentControlRev(t.storage.db);
    expect(afterIssue).toBe(2);

    await requestRotation(t.storage.db, a.host_id, 120, { now: '2026-04-04T04:04:04.004Z' });
    await setAgentConfig(t.storage.db, b.host_id, '{"heartbeat_interval_secs":30}', '2026-05-05T00:00:00.000Z');
    await requestDecommission(t.storage.db, a.host_id, 15);
    const changes = await listControlChangesSince(t.storage.db, afterIssue);
    expect(changes.map((c) => c.host_id)).toEqual([b.host_id, a.host_id]);
    const [cb, ca] = changes;
    expect(cb).toMatchObject({
      agent_config_json: '{"heartbeat_interval_secs":30}',
      config_apply_after: '2026-05-05T00:00:00.000Z',
      config_version: 1,
    });
    expect(ca).toMatchObject({ rotate_requested_at: '2026-04-04T04:04:04.004Z', decommission_drain_secs: 15 });
    expect((await findForHello(t.storage.db, a.host_id))?.rotation_grace_secs).toBe(120);

    await setAgentConfig(t.storage.db, b.host_id, null, '2026-05-05T00:00:00.000Z');
    const cleared = await getAgent(t.storage.db, b.host_id);
    expect(cleared).toMatchObject({ agent_config_json: null, config_apply_after: null, config_version: 2 });
    expect(await currentControlRev(t.storage.db)).toBe(6);
    await expect(requestRotation(t.storage.db, randomUUID(), 1)).rejects.toBeInstanceOf(UnknownHostError);
  });
});

describe('server settings', () => {
  it('stores and reads JSON values by key (upsert)', async () => {
    expect(await getSetting(t.storage.db, 'max_batch_entries')).toBeUndefined();
    await setSetting(t.storage.db, 'max_batch_entries', 500);
    await setSettings(t.storage.db, { max_batch_entries: 800, listen: '127.0.0.1:3100', skip: undefined });
    expect(await getSetting(t.storage.db, 'max_batch_entries')).toBe(800);
    expect(await getSettings(t.storage.db)).toEqual({ max_batch_entries: 800, listen: '127.0.0.1:3100' });
  });
});
