// Text from elsewhere (log lines, an agent's hostname, a server's error reason) printed on an
// operator's terminal by a command line. Imports nothing (common/: see errors.ts).
/**
 * Text another party controls (an agent, whoever writes on a monitored host, a server), made
 * safe to print on an operator's terminal: C0 and C1 control characters, DEL, line and paragraph separators and
 * the bidirectional overrides become visible escapes (`\x1b`, `\n`, `\u202e`). A log line could
 * otherwise send terminal escape sequences (set the title, write the clipboard with OSC 52,
 * clear the screen) or forge extra rows with a newline. Tabs stay. --json output is JSON,
 * which escapes controls itself.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
