/**
 * What the page's views share: the htm binding of Preact's `h` (tagged templates, no JSX
 * transform), an error's text as the page shows it, and a run's status badge.
 */
import { h } from 'preact';
import htm from 'htm';
import { ApiError } from './api';

/** Preact's `h` bound to htm: the tagged template that builds the page's elements. */
export const html = htm.bind(h);

/** An error as the page shows it: an API error with its HTTP status, any other by its message. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return `${error.message} (HTTP ${error.status})`;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** A run's status as a badge (class `badge <status in lower case>`, styled by app.css). */
export function StatusBadge({ status }: { status: string }) {
  return html`<span class=${`badge ${status.toLowerCase()}`}>${status}</span>`;
}

/** `1 chunk`, `2 chunks`: a count with its noun in the right number (English; `plural` when not noun + "s"). */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n.toLocaleString()} ${n === 1 ? noun : plural}`;
}

/** `round 1`, `rounds 1–3`: a range of rounds, never "rounds 1–1". */
export function roundRange(from: number, to: number): string {
  return from === to ? `round ${from}` : `rounds ${from}–${to}`;
}
