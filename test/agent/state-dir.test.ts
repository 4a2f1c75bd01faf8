import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ensureStateDir,
  readAgentSettings,
  readHostId,
  StateDirError,
  statePaths,
  writeAgentSettings,
  writeHostId,
} from '../../agent/state-dir.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cortex-state-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const HOST = '2B9A0B3A-7E3C-4D2A-9C0E-9BBF5D3A1F01';

describe('state dir', () => {
  it('names the files of section 3', () => {
    expect(statePaths('/s')).toEqual({
      dir: '/s',
      token: '/s/token',
      hostId: '/s/host_id',
      agentJson: '/s/agent.json',
      bufferDb: '/s/buffer.db',
    });
  });

  it('creates the folder with mode 0700', async () => {
    const sub = join(dir, 'a', 'b');
    await ensureStateDir(sub);
    expect(statSync(sub).mode & 0o777).toBe(0o700);
  });

  it('stores host_id lowercased and reads it back', async () => {
    expect(await readHostId(dir)).toBeNull();
    await writeHostId(dir, HOST);
    expect(readFileSync(join(dir, 'host_id'), 'utf8')).toBe(`${HOST.toLowerCase()}\n`);
    expect(await readHostId(dir)).toBe(HOST.toLowerCase());
    await expect(writeHostId(dir, 'not-a-uuid')).rejects.toBeInstanceOf(StateDirError);
    writeFileSync(join(dir, 'host_id'), 'garbage');
    await expect(readHostId(dir)).rejects.toThrow(/does not hold a UUID/);
  });

  it('stores agent.json atomically and validates it', async () => {
    expect(await readAgentSettings(dir)).toBeNull();
    const settings = { server_url: 'ws://127.0.0.1:3100/ws/agent', allow_insecure: true, ca_file: null, extra_key: { kept: true } };
    await writeAgentSettings(dir, settings);
    expect(await readAgentSettings(dir)).toEqual(settings);
    expect(statSync(join(dir, 'agent.json')).mode & 0o777).toBe(0o600);
    await expect(writeAgentSettings(dir, { server_url: 'http://x/ws' })).rejects.toThrow(/ws:\/\/ or wss:\/\//);
    await expect(writeAgentSettings(dir, { server_url: 'wss://x/ws', buffer_hard_cap_bytes: -1 })).rejects.toThrow(/buffer_hard_cap_bytes/);
    expect(await readAgentSettings(dir)).toEqual(settings); // a rejected write changes nothing
    writeFileSync(join(dir, 'agent.json'), '{ nope');
    await expect(readAgentSettings(dir)).rejects.toThrow(/not valid JSON/);
    writeFileSync(join(dir, 'agent.json'), '{"allow_insecure": true}');
    await expect(readAgentSettings(dir)).rejects.toThrow(/server_url/);
  });
});
