// The architecture's import rules (README "How the folders fit"), checked by
// dependency-cruiser in `npm run lint` (part of `npm test`). A rule broken here names the
// importing file, the imported one and the rule; test/architecture/ shows each rule fails
// on a forbidden import.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'server-not-agent',
      comment: 'The reference server and the reference agent never import each other: share code through generated/ (from the contract).',
      severity: 'error',
      from: { path: '^server/' },
      to: { path: '^agent/' },
    },
    {
      name: 'agent-not-server',
      comment: 'The reference agent and the reference server never import each other: share code through generated/ (from the contract).',
      severity: 'error',
      from: { path: '^agent/' },
      to: { path: '^server/' },
    },
    {
      name: 'generated-self-contained',
      comment: 'generated/ is a package of its own: it imports nothing outside itself but Node built-ins (and its declared peer ws).',
      severity: 'error',
      from: { path: '^generated/' },
      // (validators.js is emitted straight into dist/ by codegen: unresolvable from src/, and local)
      to: { pathNot: ['^generated/', '^node_modules/ws/'], dependencyTypesNot: ['core'], couldNotResolve: false },
    },
    {
      name: 'codegen-not-programs',
      comment: 'codegen/ reads contract/ and writes generated/; it never imports the server, the agent or the runners built on generated/.',
      severity: 'error',
      from: { path: '^codegen/' },
      to: { path: '^(server|agent|conformance|fleet|console)/' },
    },
    {
      name: 'runners-on-generated-only',
      comment: 'The conformance runner and the fleet emulator check ANY implementation: they are built on generated/ alone, never on the reference server or agent.',
      severity: 'error',
      from: { path: '^(conformance|fleet)/' },
      to: { path: '^(server|agent)/' },
    },
    {
      name: 'console-on-admin-api',
      comment: 'The web console talks to the server only over /admin/ (HTTP): it imports generated/ (validators, types) and its own front-end libraries, never server/ or agent/ code.',
      severity: 'error',
      from: { path: '^console/' },
      to: { path: '^(server|agent)/' },
    },
    {
      name: 'common-imports-nothing-of-ours',
      comment: 'common/ (UsageError and the error-code catalogue, log redaction paths) is shared by server, agent, codegen, conformance and fleet: it imports only Node built-ins, so importing it never ties one program to another.',
      severity: 'error',
      from: { path: '^common/' },
      to: { pathNot: '^common/', dependencyTypesNot: ['core'] },
    },
    {
      name: 'no-circular',
      comment: 'No import circle anywhere (type-only imports count too): a module and what it imports can be read, tested and changed without the other end of a loop. Break one by moving the shared part to a third module or by depending on an interface.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'programs-not-tests',
      comment: 'Shipped code never imports test code.',
      severity: 'error',
      from: { path: '^(server|agent|generated|codegen|common|conformance|fleet|console)/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|generated/dist|node_modules|artifacts|data)/|\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: require('node:path').join(__dirname, 'tsconfig.base.json') },
    enhancedResolveOptions: {
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
