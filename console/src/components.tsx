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

export function ErrorText(props: { error: string | undefined }) {
  if (props.error === undefined) return null;
  return (
    <p role="alert" class="error">
      {props.error}
    </p>
  );
}
