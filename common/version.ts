// What `cortex-server --version` and `cortex-agent --version` print: the program's version, the
// protocol package it was built with (@cortex/agent-protocol, whose version the caller reads: its
// major is the protocol's), Node and the platform. One line, or one JSON object (--json).

/** The version report of program `name` at `version`, built with protocol package `protocol`, as one line or as JSON text. */
export function versionText(name: string, version: string, protocol: string, json: boolean): string {
  const v = { name, version, protocol, node: process.version, platform: `${process.platform}-${process.arch}` };
  return json ? JSON.stringify(v) : `${v.name} ${v.version} (protocol ${v.protocol}, node ${v.node}, ${v.platform})`;
}
