/** The protocol reference (Markdown), generated from the contract. */
import type { Contract, JsonSchema } from './contract.js';
import type { NamedSchema } from './bundle.js';
import { MD_HEADER } from './header.js';
import { behaviourSection } from './emit-behaviour.js';

function describeSchema(s: JsonSchema, named: Map<string, NamedSchema>, depth = 0): string[] {
  const rows: string[] = [];
  const props = (s['properties'] ?? {}) as Record<string, JsonSchema>;
  const required = new Set((s['required'] ?? []) as string[]);
  for (const [k, p] of Object.entries(props)) {
    rows.push(`| ${'&nbsp;&nbsp;'.repeat(depth)}\`${k}\` | ${typeText(p)} | ${required.has(k) ? 'yes' : 'no'} | ${constraints(p)} |`);
    if (p['type'] === 'object' && p['properties']) rows.push(...describeSchema(p, named, depth + 1));
  }
  return rows;
}

function typeText(p: JsonSchema): string {
  if (typeof p['$ref'] === 'string') return `[${(p['$ref'] as string).slice(8)}](#${(p['$ref'] as string).slice(8).toLowerCase()})`;
  if (p['const'] !== undefined) return `\`${JSON.stringify(p['const'])}\``;
  const t = p['type'];
  let text = Array.isArray(t) ? (t as string[]).join(' \\| ') : typeof t === 'string' ? t : 'any';
  if (t === 'array' && p['items'] && typeof p['items'] === 'object') text = `array of ${typeText(p['items'] as JsonSchema)}`;
  if (Array.isArray(p['oneOf'])) text = (p['oneOf'] as JsonSchema[]).map(typeText).join(' \\| ');
  return text;
}

function constraints(p: JsonSchema): string {
  const c: string[] = [];
  if (p['deprecated'] === true) c.push('**deprecated** (still accepted; a later major version removes it)');
  for (const k of ['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'format', 'pattern']) if (p[k] !== undefined) c.push(`${k} ${k === 'pattern' ? `\`${String(p[k]).replace(/\|/g, '\\|')}\`` : String(p[k])}`);
  if (Array.isArray(p['enum'])) c.push(`one of ${(p['enum'] as unknown[]).map((v) => `\`${String(v)}\``).join(', ')}`);
  if (p['additionalProperties'] === false) c.push('no other properties');
  if (typeof p['description'] === 'string') c.push(String(p['description']).replace(/\|/g, '\\|').replace(/\n/g, ' '));
  return c.join('; ');
}

/** The Probes table's args cell: each argument (required ones marked), linking to its section. */
function argsSummary(name: string, args: JsonSchema): string {
  const props = Object.keys((args['properties'] ?? {}) as Record<string, unknown>);
  const required = new Set((args['required'] ?? []) as string[]);
  const anchor = `#${name.replace(/[^a-z0-9_ -]/gi, '').toLowerCase()}`;
  if (props.length === 0) return `none ([\`{}\`](${anchor}))`;
  return `[${props.map((k) => `\`${k}\`${required.has(k) ? ' (required)' : ''}`).join(', ')}](${anchor})`;
}

/** A package-relative citation as a link; PROTOCOL.md's own anchors stay in this file. */
const cite = (ref: string) => (ref.startsWith('PROTOCOL.md#') ? `[${ref.slice(12)}](${ref.slice(11)})` : ref === 'PROTOCOL.md' ? 'above' : `\`${ref}\``);

export function emitDocs(contract: Contract, named: NamedSchema[]): string {
  const byName = new Map(named.map((n) => [n.name, n]));
  const nameOf = (file: string) => named.find((n) => n.origin === `contract/schemas/${file}`)!;
  const out: string[] = [MD_HEADER, `# Cortex agent protocol V${String(contract.limits['protocol_version']?.value)} — reference`, ''];
  out.push(
    `JSON-RPC 2.0 over WebSocket, subprotocol \`${String(contract.limits['subprotocol']?.value)}\`, path \`${String(contract.limits['ws_path']?.value)}\`: one message per text frame, no batching, frames of at most ${String(contract.limits['max_frame_bytes']?.value)} bytes. Generated from the protocol contract: with \`schemas/\` (the JSON Schemas), \`vectors/\` (valid and invalid messages with their expected outcome) and \`spec/\` (OpenRPC, AsyncAPI) it is this package's complete description of the protocol.`,
    '',
    '## Methods',
    '',
    '| method | direction | kind | errors |',
    '|---|---|---|---|',
    ...contract.methods.map((m) => `| [\`${m.name}\`](#${m.name.replace(/\./g, '')})${m.deprecated ? ' (deprecated)' : ''} | ${m.direction.replace(/_/g, ' ')} | ${m.kind} | ${m.errors.join(', ') || '—'} |`),
    '',
  );
  for (const m of contract.methods) {
    out.push(`### ${m.name}`, '');
    if (m.deprecated) out.push('**Deprecated**: still part of the protocol; a later major version removes it.', '');
    out.push(`${m.summary}`, '', `- ${m.direction.replace(/_/g, ' ')}; ${m.kind}${m.response_to ? ` to \`${m.response_to}\`` : ''}.`);
    if (m.errors.length) out.push(`- Errors: ${m.errors.map((c) => `${c} ${contract.errors.find((e) => e.code === c)?.name ?? ''}`).join(', ')}.`);
    out.push('');
    for (const [label, file] of [['Params', m.params], ['Result', m.result]] as const) {
      if (!file) continue;
      const n = nameOf(file);
      out.push(`**${label}** — \`${n.name}\` (\`schemas/${file}\`)`, '');
      if (n.aliasOf) out.push(`Same as [${n.aliasOf}](#${n.aliasOf.toLowerCase()}).`, '');
      else out.push('| field | type | required | constraints |', '|---|---|---|---|', ...describeSchema(n.schema, byName), '');
    }
    for (const ex of m.examples) out.push(`Example (${ex.message}):`, '', '```json', JSON.stringify(contract.examples.get(ex.file), null, 2), '```', '');
  }
  out.push('## Shared definitions', '');
  for (const n of named.filter((x) => x.origin.startsWith('contract/schemas/defs.json'))) {
    out.push(`### ${n.name}`, '', typeof n.schema['description'] === 'string' ? String(n.schema['description']) : '', '');
    if (n.schema['properties']) out.push('| field | type | required | constraints |', '|---|---|---|---|', ...describeSchema(n.schema, byName), '');
    else out.push(`${typeText(n.schema)}${constraints(n.schema) ? ` — ${constraints(n.schema)}` : ''}`, '');
  }
  out.push('## Error codes', '', '| code | name | direction | meaning | closes with | data |', '|---|---|---|---|---|---|');
  for (const e of contract.errors) out.push(`| ${e.code} | ${e.name} | ${e.direction} | ${e.meaning.replace(/\|/g, '\\|')} | ${e.close_code ?? '—'} | ${e.data ?? '—'} |`);
  out.push('', '## WebSocket close codes', '', '| code | name | meaning | origin |', '|---|---|---|---|');
  for (const c of contract.closeCodes) out.push(`| ${c.code} | ${c.name} | ${c.meaning} | ${c.source === 'seed' ? 'V1 protocol' : 'this toolkit'} |`);
  out.push('', '## Limits and timings', '', '| name | value | unit | meaning | see |', '|---|---|---|---|---|');
  for (const [k, l] of Object.entries(contract.limits)) out.push(`| \`${k}\` | \`${String(l.value)}\` | ${l.unit ?? ''} | ${l.description} | ${cite(l.source)} |`);
  const sm = contract.stateMachine;
  out.push('', '## Agent connection state machine', '', sm.description, '', '```mermaid', 'stateDiagram-v2', `    [*] --> ${sm.initial}`);
  for (const t of sm.transitions) out.push(`    ${t.from} --> ${t.to}: ${t.event}`);
  for (const f of sm.final) out.push(`    ${f.from} --> [*]: ${f.description}`);
  out.push('```', '', '| from | event | to | when |', '|---|---|---|---|', ...sm.transitions.map((t) => `| ${t.from} | \`${t.event}\` | ${t.to} | ${t.description}${t.errors ? ` (${t.errors.join(', ')})` : ''} |`), '');
  out.push(...behaviourSection(contract));
  out.push('## Probes', '', 'What a `probe.request` may name in `probe`, with the `args` each takes (validated against `schemas/probes/<probe>.args.json`: an args object that fails is answered -32602) and its output (`schemas/probes/<probe>.output.json`).', '');
  out.push('| probe | summary | args |', '|---|---|---|', ...contract.probes.map((p) => `| \`${p.name}\` | ${p.summary} | ${argsSummary(p.name, p.args)} |`), '');
  out.push('### Probe arguments', '');
  for (const p of contract.probes) {
    out.push(`#### ${p.name}`, '', `\`schemas/probes/${p.name}.args.json\`${typeof p.args['description'] === 'string' ? `: ${String(p.args['description'])}` : ''}`, '');
    const props = Object.keys((p.args['properties'] ?? {}) as Record<string, unknown>);
    if (props.length === 0) out.push(`No arguments: \`args\` is an empty object${p.args['additionalProperties'] === false ? ' (no properties allowed)' : ''}.`, '');
    else out.push('| arg | type | required | constraints |', '|---|---|---|---|', ...describeSchema(p.args, byName), '', p.args['additionalProperties'] === false ? 'No other properties.' : 'Other properties are allowed.', '');
  }
  return out.join('\n');
}
