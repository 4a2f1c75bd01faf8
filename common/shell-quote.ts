// Commands a command line prints for the operator to copy (`agent issue`'s enroll command, the
// serve banner, the admin API's enroll_command, a hint's `cortex-agent buffer check --state-dir
// DIR`) must run as printed in a POSIX shell: a path with a space or a quote in it, or a URL
// with a `$(…)` or `;` in its path (a reverse proxy's X-Forwarded-Prefix allows both), was
// printed bare — split into several words, or run as a command.

/** Characters a POSIX shell takes literally in an unquoted word (no quoting needed). */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * `value` as one word of a POSIX shell (sh, bash, dash, zsh): as it is when it holds only
 * characters the shell takes literally, else in single quotes, each `'` in it written `'\''`.
 * An empty word, and one that starts with `~` or `=` (zsh's path expansion), is quoted too.
 */
export function shellQuote(value: string): string {
  if (PLAIN.test(value) && !value.startsWith('=')) return value; // zsh expands a word that starts with =
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** `words` as one shell command line, each word quoted by shellQuote. */
export function shellCommand(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}
