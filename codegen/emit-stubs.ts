/**
 * Typed RPC stubs, written with ts-morph: for each side a typed caller class (one method per
 * method it sends; notifications return void) and a typed handler interface (one entry per
 * method it receives), plus constructors of typed peers.
 */
import { Project, Scope, type SourceFile } from 'ts-morph';
import { camel, type Contract, type MethodEntry } from './contract.js';
import type { NamedSchema } from './bundle.js';
import { wireMethods } from './emit-code.js';

type Side = { dir: MethodEntry['direction']; peer: string; otherPeer: string; client: string; handlers: string; register: string; create: string; side: 'agent' | 'server' };

const AGENT: Side = { dir: 'agent_to_server', peer: 'AgentPeer', otherPeer: 'ServerPeer', client: 'AgentClient', handlers: 'AgentHandlers', register: 'registerAgentHandlers', create: 'createAgentPeer', side: 'agent' };
const SERVER: Side = { dir: 'server_to_agent', peer: 'ServerPeer', otherPeer: 'AgentPeer', client: 'ServerClient', handlers: 'ServerHandlers', register: 'registerServerHandlers', create: 'createServerPeer', side: 'server' };

export function emitStubs(contract: Contract, named: NamedSchema[]): string {
  const typeOf = (file: string) => `T.${named.find((n) => n.origin === `contract/schemas/${file}`)!.name}`;
  const methods = wireMethods(contract);
  const project = new Project({ useInMemoryFileSystem: true });
  const sf = project.createSourceFile('client.ts', '', { overwrite: true });
  sf.addImportDeclarations([
    { moduleSpecifier: './runtime/peer.js', namedImports: ['Peer', 'type PeerOptions', 'type RequestOptions', 'type RequestHandler', 'type NotificationHandler'] },
    { moduleSpecifier: './runtime/transport.js', namedImports: ['type Transport'] },
    { moduleSpecifier: './types.js', namespaceImport: 'T', isTypeOnly: true },
    { moduleSpecifier: './catalog.js', namedImports: ['WIRE_METHODS', 'type AgentToServer', 'type ServerToAgent'] },
    { moduleSpecifier: './errors.js', namedImports: ['errorFromWire'] },
    { moduleSpecifier: './validators.js', namedImports: ['validateJsonRpcMessage'] },
    { moduleSpecifier: './probes.js', namedImports: ['checkProbeOutput'] },
  ]);
  sf.addTypeAlias({ isExported: true, name: 'AgentPeer', type: 'Peer<AgentToServer, ServerToAgent>', docs: ['A peer on the agent side: sends agent→server methods, receives server→agent methods.'] });
  sf.addTypeAlias({ isExported: true, name: 'ServerPeer', type: 'Peer<ServerToAgent, AgentToServer>', docs: ['A peer on the server side: sends server→agent methods, receives agent→server methods.'] });
  sf.addTypeAlias({
    isExported: true,
    name: 'PeerSettings',
    type: "Omit<PeerOptions, 'methods' | 'side' | 'validateEnvelope' | 'errorFactory'> & Partial<Pick<PeerOptions, 'errorFactory'>>",
    docs: ['Options of a typed peer; the catalog, envelope validator and typed error factory are filled in.'],
  });
  for (const s of [AGENT, SERVER]) addSide(sf, s, methods, typeOf);
  sf.formatText({ indentSize: 2, convertTabsToSpaces: true, semicolons: 'insert' as never });
  return sf.getFullText();
}

function addSide(sf: SourceFile, s: Side, methods: MethodEntry[], typeOf: (file: string) => string): void {
  const sends = methods.filter((m) => m.direction === s.dir);
  const receives = methods.filter((m) => m.direction !== s.dir);
  sf.addFunction({
    isExported: true,
    name: s.create,
    parameters: [
      { name: 'transport', type: 'Transport' },
      { name: 'settings', type: 'PeerSettings', initializer: '{}' },
    ],
    returnType: s.peer,
    docs: [`A typed JSON-RPC peer for the ${s.side} side over any text-frame transport.`],
    statements: `return new Peer(transport, { errorFactory: errorFromWire, ${s.side === 'agent' ? 'checkOutgoingResult: checkProbeOutput, ' : ''}...settings, methods: WIRE_METHODS, side: '${s.side}', validateEnvelope: validateJsonRpcMessage });`,
  });
  sf.addClass({
    isExported: true,
    name: s.client,
    docs: [`Typed caller for the ${s.side} side: one method per method the ${s.side} sends. Requests resolve to the typed result or reject with an RpcError subclass (the other side's answer) or a PeerError (local: timeout, closed, invalid result); notifications return nothing to await.`],
    ctors: [{ parameters: [{ name: 'peer', type: s.peer, isReadonly: true, scope: Scope.Public }] }],
    methods: sends.map((m) =>
      m.kind === 'request'
        ? {
            name: camel(m.name),
            docs: [`${m.name} (request; PROTOCOL.md#${m.name.replace(/\./g, '')}): ${m.summary}\n\nErrors: ${m.errors.join(', ') || 'none'}.`],
            parameters: [
              { name: 'params', type: typeOf(m.params!) },
              { name: 'options', type: 'RequestOptions', hasQuestionToken: true },
            ],
            returnType: `Promise<${typeOf(m.result!)}>`,
            statements: `return this.peer.request(${JSON.stringify(m.name)}, params, options);`,
          }
        : {
            name: camel(m.name),
            docs: [`${m.name} (notification; PROTOCOL.md#${m.name.replace(/\./g, '')}): ${m.summary}`],
            parameters: [{ name: 'params', type: typeOf(m.params!) }],
            returnType: 'void',
            statements: `this.peer.notify(${JSON.stringify(m.name)}, params);`,
          },
    ),
  });
  sf.addInterface({
    isExported: true,
    name: s.handlers,
    docs: [`Handlers the ${s.side} implements for the methods it receives. Request handlers return the result (or a promise of it) or throw an RpcError subclass; anything else thrown becomes -32603.`],
    properties: receives.map((m) => ({
      name: JSON.stringify(m.name),
      docs: [`${m.name} (${m.kind}; PROTOCOL.md#${m.name.replace(/\./g, '')}): ${m.summary}${m.kind === 'request' ? `\n\nErrors: ${m.errors.join(', ') || 'none'}.` : ''}`],
      type: m.kind === 'request' ? `RequestHandler<${typeOf(m.params!)}, ${typeOf(m.result!)}>` : `NotificationHandler<${typeOf(m.params!)}>`,
    })),
  });
  sf.addFunction({
    isExported: true,
    name: s.register,
    parameters: [
      { name: 'peer', type: s.peer },
      { name: 'handlers', type: `Partial<${s.handlers}>` },
    ],
    returnType: 'void',
    docs: [`Register the given handlers on a ${s.side} peer (methods without a handler answer -32601).`],
    statements: receives.map((m) => {
      const h = `handlers[${JSON.stringify(m.name)}]`;
      return `if (${h}) peer.${m.kind === 'request' ? 'onRequest' : 'onNotification'}(${JSON.stringify(m.name)}, ${h});`;
    }),
  });
}
