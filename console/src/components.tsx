// Pieces shared by the pages.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { STATE_LABEL } from './util.js';

export function StateBadge(props: { state: string }) {
  return <span class={`state state-${props.state}`}>{STATE_LABEL[props.state] ?? props.state}</span>;
}

/** A modal confirmation (native <dialog>: focus moves in, Esc cancels, focus returns). */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  onConfirm(): void;
  onCancel(): void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d === null) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby="confirm-title" onCancel={(e) => { e.preventDefault(); props.onCancel(); }}>
      <h2 id="confirm-title">{props.title}</h2>
      <div class="dialog-body">{props.children}</div>
      <div class="buttons">
        <button type="button" onClick={props.onCancel} autofocus>
          Cancel
        </button>
        <button type="button" class={props.danger === true ? 'danger' : 'primary'} onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/**
 * Beside the one-line enroll command (the API's `enroll_command`, `--token TOKEN`): a token given
 * on the command line is visible in ps and kept in the shell's history on the host; `cortex-server
 * agent issue` says the same (README "Secrets off the command line", DECISIONS I33).
 */
export function TokenFileHint() {
  return (
    <p class="help">
      While this runs, every user on the host can read the token in <code>ps</code>, and the shell keeps it in its history. To keep the token out of <code>ps</code> and the shell history on the host, use the command above (<code>--token -</code>), or save the token to a file (mode 0600) and give <code>--token-file FILE</code> instead of <code>--token TOKEN</code>.
    </p>
  );
}

export function ErrorText(props: { error: string | undefined }) {
  if (props.error === undefined) return null;
  return (
    <p role="alert" class="error">
      {props.error}
    </p>
  );
}

/**
 * Characters that change how the text around them is shown while showing nothing themselves:
 * the bidirectional controls (U+202A-U+202E embeddings and overrides, U+2066-U+2069 isolates,
 * the marks U+200E, U+200F, U+061C) and the zero-width ones (U+200B-U+200D, U+2060, U+FEFF).
 * A host name or label carrying U+202E ("RIGHT-TO-LEFT OVERRIDE") is shown reversed and can pass
 * for another; so these are drawn as their code point, and the text is isolated (<bdi>) so it
 * cannot reorder what stands beside it. So are the C0 controls but tab and newline, and DEL, which
 * a log line may carry (an ANSI colour's ESC, a bell): `agent tail` prints them escaped too.
 */
const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g;

/** `text` as it reads: each invisible control shown as a marked \uXXXX (see INVISIBLE). */
export function Visible(props: { text: string }) {
  const parts: (string | { cp: string })[] = [];
  let last = 0;
  for (const m of props.text.matchAll(INVISIBLE)) {
    const at = m.index;
    if (at > last) parts.push(props.text.slice(last, at));
    parts.push({ cp: (m[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0') });
    last = at + m[0].length;
  }
  if (parts.length === 0) return <bdi>{props.text}</bdi>;
  if (last < props.text.length) parts.push(props.text.slice(last));
  return (
    <bdi class="has-controls" title="contains invisible control characters, shown as \uXXXX">
      {parts.map((p, i) => (typeof p === 'string' ? p : <span key={i} class="ctrl">{`\\u${p.cp}`}</span>))}
    </bdi>
  );
}

/** Plain text with the invisible controls written as \uXXXX (for titles, labels, aria text). */
export function visibleText(text: string): string {
  return text.replace(INVISIBLE, (c) => `\\u${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`);
}
