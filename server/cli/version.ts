// `cortex-server --version` (or `version`): this server's version, the protocol package it
// was built with (@cortex/agent-protocol; its major is the protocol's), Node and the platform.
// One line, or one JSON object with --json. Exit 0.
import { versionText } from '../../common/version.js';
import { out, parse } from './common.js';
import { HELP, PROG } from './help.js';

export async function versionCmd(args: string[]): Promise<void> {
  const { values } = parse(args, { json: { type: 'boolean' } }, HELP.version);
  const [{ SERVER_VERSION }, { default: protocol }] = await Promise.all([
    import('../server.js'),
    import('@cortex/agent-protocol/package.json', { with: { type: 'json' } }),
  ]);
  out(versionText(PROG, SERVER_VERSION, protocol.version, values.json === true));
}
