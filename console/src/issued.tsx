// The card that shows a one-time enrollment token once: after "Issue enrollment token" (the
// enroll page) and after "New enrollment token" (a host's page). It shows the command that keeps
// the token off the host's command line first (`enroll_command_stdin`: `--token -`, enroll asks
// for the token without showing it, or reads it from stdin), then the token with its own copy
// button; the API's one-line `enroll_command` (`--token TOKEN`: seen by every local user in `ps`
// while enroll runs, and kept in the shell history) stays behind a disclosure that says so
// (DECISIONS I33). The token lives only in the caller's component state: never in the URL,
// sessionStorage, localStorage or a log (J18). Every value is a text child (escaped by Preact).
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { IssuedToken } from './api.js';
import { TokenFileHint } from './components.js';

type Copyable = 'command' | 'token' | 'one-line command';

const COPIED: Record<Copyable, string> = { command: 'Command copied.', token: 'Token copied.', 'one-line command': 'One-line command copied.' };

export function IssuedCard(props: {
  issued: IssuedToken;
  /** The card's heading (h2) and its id (aria-labelledby). */
  title: ComponentChildren;
  titleId: string;
  /** What to do when the token is lost, after "The token is shown once." */
  lost: string;
  children?: ComponentChildren;
}) {
  const { issued } = props;
  const [copied, setCopied] = useState<Copyable | undefined>();
  const [copyError, setCopyError] = useState<string | undefined>();
  const id = props.titleId;

  async function copy(what: Copyable, text: string): Promise<void> {
    setCopied(undefined);
    setCopyError(undefined);
    try {
      await navigator.clipboard.writeText(text);
      setCopied(what);
    } catch {
      setCopyError(`Copying is not allowed here; select the ${what} and copy it by hand.`);
    }
  }

  /**
   * A copy button and, beside it, the status that announces its copy (one per button: it shows
   * where it was pressed). Called as a function, not a component: a component made in here would
   * be a new type on each render, and the button, remounted, would lose the focus.
   */
  function copyButton(what: Copyable, text: string) {
    return (
      <div class="buttons">
        <button type="button" onClick={() => void copy(what, text)}>{`Copy ${what}`}</button>
        <span role="status">{copied === what ? COPIED[what] : ''}</span>
      </div>
    );
  }

  return (
    <section class="card issued" aria-labelledby={id}>
      <h2 id={id}>{props.title}</h2>
      <p>
        <strong>The token is shown once.</strong> {props.lost}
      </p>
      <h3 class="step">Command to run on the host</h3>
      <p id={`${id}-how`} class="help">
        Run this on the host; paste the token when it asks for it (nothing is shown as you type), or pipe it from a file: <code>… &lt; token-file</code>.
        The token is on no command line, so <code>ps</code> and the shell history do not keep it.
      </p>
      <pre class="command" tabIndex={0} aria-label="Enroll command" aria-describedby={`${id}-how`}>{issued.enroll_command_stdin}</pre>
      {copyButton('command', issued.enroll_command_stdin)}
      <h3 class="step">Token</h3>
      <pre class="command token" tabIndex={0} aria-label="Enrollment token">{issued.token}</pre>
      {copyButton('token', issued.token)}
      {copyError !== undefined && (
        <p role="alert" class="error">
          {copyError}
        </p>
      )}
      <details class="one-line">
        <summary>One line, token on the command line (visible to other users in ps)</summary>
        <TokenFileHint />
        <pre class="command" tabIndex={0} aria-label="One-line command with the token">{issued.enroll_command}</pre>
        {copyButton('one-line command', issued.enroll_command)}
      </details>
      {props.children}
    </section>
  );
}
