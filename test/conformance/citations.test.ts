// The runner judges an agent (or server) by the package's own description of the protocol, and
// says so: every rule it cites is a section of the generated PROTOCOL.md
// (`PROTOCOL.md#<section>`) or a schema the package ships, never the seed, DESIGN.md or
// DECISIONS.md, which a third-party author does not have (DECISIONS C11, K18). And PROTOCOL.md
// holds the behavioural rules the runner enforces ("Agent behaviour"), with RetryAfterData
// describing the resend_from_seq the server sends (DECISIONS B6a).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const PROTOCOL = readFileSync(join(ROOT, 'generated/PROTOCOL.md'), 'utf8');
const anchors = new Set([...PROTOCOL.matchAll(/^#+ (.+)$/gm)].map((m) => m[1]!.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));

/** Every string and template-literal text of a TypeScript file, with its line. */
function literals(file: string): { line: number; text: string }[] {
  const src = readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, src, ts.ScriptTarget.Latest, true);
  const out: { line: number; text: string }[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateHead(n) || ts.isTemplateMiddle(n) || ts.isTemplateTail(n)) {
      out.push({ line: sf.getLineAndCharacterOfPosition(n.getStart()).line + 1, text: n.text });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The section body under a heading of PROTOCOL.md (up to the next heading of any level). */
function section(title: string): string {
  const m = new RegExp(`^### ${title}\\n([\\s\\S]*?)(?=^#)`, 'm').exec(PROTOCOL);
  return m?.[1] ?? '';
}

describe('what the conformance runner cites', () => {
  const files = readdirSync(join(ROOT, 'conformance')).filter((f) => f.endsWith('.ts')).map((f) => join('conformance', f));

  it('no message of the runner cites the seed, DESIGN.md, DECISIONS.md or MEASURED.md', () => {
    const bad = files.flatMap((f) => literals(join(ROOT, f)).filter((l) => /\b(seed|Seed|DESIGN|DECISIONS|MEASURED)\b|§/.test(l.text)).map((l) => `${f}:${l.line}: ${l.text.slice(0, 160)}`));
    expect(bad).toEqual([]);
  });

  it('every PROTOCOL.md citation of the runner names a section of the generated PROTOCOL.md', () => {
    const cites = files.flatMap((f) => literals(join(ROOT, f)).flatMap((l) => [...l.text.matchAll(/PROTOCOL\.md(#[a-z0-9-]*)?/g)].map((m) => ({ where: `${f}:${l.line}`, anchor: m[1] }))));
    expect(cites.length).toBeGreaterThan(20);
    for (const c of cites) {
      expect(c.anchor, `${c.where}: "PROTOCOL.md" without a section`).toBeDefined();
      expect(anchors, `${c.where}: PROTOCOL.md${c.anchor}`).toContain(c.anchor!.slice(1));
    }
    // and every schema it names is shipped
    for (const f of files) for (const l of literals(join(ROOT, f))) for (const m of l.text.matchAll(/(?<![\w/.])schemas\/([a-z0-9_./-]+\.json)/g)) expect(existsSync(join(ROOT, 'generated/schemas', m[1]!)), `${f}:${l.line}: ${m[0]}`).toBe(true);
  });
});

describe('PROTOCOL.md: the behaviour the runner judges', () => {
  it('has an "Agent behaviour" section with the rules an agent must keep beyond the message shapes', () => {
    expect(PROTOCOL).toMatch(/^## Agent behaviour$/m);
    // the rotated token is saved before anything else is sent; fatal and revoked hellos stop it for good
    expect(section('Rotated token')).toMatch(/before the agent sends anything else/);
    expect(section('Hello refused')).toMatch(/-32001 AuthFailed, -32003 AgentVersionUnsupported.*stops connecting for good/);
    expect(section('Hello refused')).toMatch(/-32002 TokenRevoked.*delete the stored token and never connect again/);
    // seq_start = entries[0].seq, contiguous, never reused, resume from accepted_seq + 1, duplicates
    const seq = section('Sequence numbers');
    for (const rule of [/`seq_start` = `entries\[0\]\.seq`/, /never given to other content/, /acked = max\(the agent's own acked seq, `accepted_seq`\)/, /push again from acked \+ 1/, /still acks it: delivery is at least once/]) expect(seq).toMatch(rule);
    // an ack counts only up to what was sent; partial acks
    expect(section('Acks')).toMatch(/Count an ack only up to the highest seq the agent has sent/);
    expect(section('Acks')).toMatch(/partial ack/);
    // the refusals: -32008 half the batch, -32020/-32030 pause, -32004 reconnect, resend_from_seq
    const ref = section('Refusals and resends');
    for (const rule of [/-32008 PayloadTooLarge: send the refused entries again from the same `seq_start` in pushes of at most half the batch size/, /-32020 Backpressure and -32030 QuotaExceeded: push nothing for `data\.retry_after_ms`/, /-32004 UnknownHost: close the connection and reconnect/, /carries `resend_from_seq`.*do not halve the send rate again/, /Each refusal asks for one resend/]) expect(ref).toMatch(rule);
    // shutdown: drain, then close 1000 with final_seq=<the last seq acked>
    expect(section('Shutdown and drain')).toMatch(/close the connection with 1000 Normal closure and the reason `final_seq=<n>`, n the last seq acked/);
  });

  it('RetryAfterData describes resend_from_seq, which the server sends on a follow-on -32020', () => {
    const schema = JSON.parse(readFileSync(join(ROOT, 'generated/schemas/error-data.json'), 'utf8')) as { $defs: Record<string, { properties: Record<string, { type?: string; description?: string }>; required?: string[] }> };
    const d = schema.$defs['RetryAfterData']!;
    expect(d.properties['resend_from_seq']?.type).toBe('integer');
    expect(d.properties['resend_from_seq']?.description).toMatch(/PROTOCOL\.md#refusals-and-resends/);
    expect(d.required).toEqual(['retry_after_ms']);
  });
});
