// The session peer's envelope fast path (server/ws/session-peer.ts isPlainRequest, DECISIONS
// P7): whatever it passes, the generated validator passes too; it does pass the ordinary
// requests (so the fast path is taken); and the peer answers a bad envelope as before.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { validateJsonRpcMessage, validateJsonRpcRequest } from '@cortex/agent-protocol';
import { expect, it } from 'vitest';
import { isPlainRequest } from '../../server/ws/session-peer.js';

const examples = readdirSync(join(__dirname, '../../contract/examples'))
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(join(__dirname, '../../contract/examples', f), 'utf8')) as unknown);

const base = { jsonrpc: '2.0', id: 7, method: 'agent.hello', params: { a: 1 } };
const variants: unknown[] = [
  base,
  { ...base, id: 'x' },
  { ...base, id: 1.5 },
  { ...base, id: null },
  { ...base, id: true },
  { ...base, id: -3 },
  { ...base, id: 2 ** 60 },
  { ...base, params: [] },
  { ...base, params: null },
  { ...base, params: 'x' },
  { jsonrpc: '2.0', id: 1, method: 'm' },
  { jsonrpc: '2.0', id: 1, method: '' },
  { jsonrpc: '2.0', id: 1, method: 5 },
  { jsonrpc: '1.0', id: 1, method: 'm' },
  { id: 1, method: 'm' },
  { jsonrpc: '2.0', method: 'm', params: {} },
  { jsonrpc: '2.0', id: 1, method: 'm', extra: 1 },
  { jsonrpc: '2.0', id: 1, method: 'm', result: 1 },
  { jsonrpc: '2.0', id: 1, result: {} },
  { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' } },
  JSON.parse('{"jsonrpc":"2.0","id":1,"method":"m","__proto__":{}}'),
  [base],
  null,
  'x',
  Object.assign(Object.create({ inherited: 1 }), base),
];

it('passes only what validateJsonRpcMessage (and validateJsonRpcRequest) pass', () => {
  let fast = 0;
  for (const msg of [...examples, ...variants]) {
    if (!isPlainRequest(msg)) continue;
    fast++;
    expect(validateJsonRpcMessage(msg), JSON.stringify(msg)).toBe(true);
    expect(validateJsonRpcRequest(msg), JSON.stringify(msg)).toBe(true);
  }
  expect(fast).toBeGreaterThanOrEqual(8);
});

it('takes the fast path for every request example of the contract', () => {
  const requests = examples.filter((m) => typeof m === 'object' && m !== null && 'method' in m && 'id' in m);
  expect(requests.length).toBeGreaterThan(0);
  for (const m of requests) expect(isPlainRequest(m), JSON.stringify(m)).toBe(true);
  for (const m of [{ ...base, id: 1.5 }, { ...base, params: null }, { jsonrpc: '2.0', id: 1, method: '' }, { jsonrpc: '2.0', method: 'm' }]) expect(isPlainRequest(m)).toBe(false);
});
