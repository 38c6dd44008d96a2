/**
 * The dashboard's only way to put data on the page (docs/dashboard.md "Safe by construction"):
 * elements are created with createElement and every value becomes a Text node (textContent);
 * nothing here parses HTML, so a hostile string from the store or an agent stays text. Text
 * with a control or bidirectional formatting character (a file name such as `src/evil` U+202E
 * `sj.exe`) is shown through the same displayLines every human output uses: escaped and marked.
 */
import { displayLines } from '../../contracts/display-text.js';

export type Child = Node | string | number | bigint | boolean | null | undefined;

/** An element with plain attributes (never an event handler attribute) and text or element children. */
export function h(tag: string, attrs: Readonly<Record<string, string>> = {}, ...children: Child[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name.toLowerCase().startsWith('on')) throw new Error(`refusing event handler attribute ${name}`);
    element.setAttribute(name, displayLines(value));
  }
  append(element, children);
  return element;
}

/** What a marked text says on hover. */
const UNSAFE_TITLE =
  'This text holds control or bidirectional formatting characters, which can make it read as something else; they ' +
  'are shown escaped (\\uXXXX).';

export function append(element: Element, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined) continue;
    if (child instanceof Node) {
      element.append(child);
      continue;
    }
    // Text from the store (a file name, a message) with a control or bidi character is shown
    // escaped and marked [!], never raw (src/contracts/display-text.ts; docs/dashboard.md).
    const raw = String(child);
    const shown = displayLines(raw);
    element.append(
      shown === raw ? document.createTextNode(raw) : h('span', { class: 'unsafe-text', title: UNSAFE_TITLE }, shown),
    );
  }
}

/** A time in the reader's local time, with the raw milliseconds value on hover. */
export function time(ms: unknown): HTMLElement {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return h('span', { class: 'muted' }, 'none');
  const date = new Date(ms);
  return h(
    'time',
    { datetime: date.toISOString(), title: `${ms} ms since 1970-01-01 UTC (${date.toISOString()})` },
    date.toLocaleString(),
  );
}

/** Any JSON value as display text: scalars as they are, null as "none", objects as JSON. */
export function text(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return JSON.stringify(value);
}

/** A long hex ID shortened to 12 characters, the whole value on hover. */
export function id(value: unknown): HTMLElement {
  const text = typeof value === 'string' ? value : '';
  return h('code', { title: text }, text.length > 16 ? `${text.slice(0, 12)}…` : text);
}

/** A link inside the dashboard (hash routes only). */
export function link(route: string, ...children: Child[]): HTMLElement {
  return h('a', { href: `#${route}` }, ...children);
}

export function table(headers: readonly string[], rows: readonly (readonly Child[])[]): HTMLElement {
  return h(
    'table',
    {},
    h('thead', {}, h('tr', {}, ...headers.map((text) => h('th', { scope: 'col' }, text)))),
    h('tbody', {}, ...rows.map((row) => h('tr', {}, ...row.map((cell) => h('td', {}, cell))))),
  );
}

/** Qualification failure codes (docs/qualification.md "Failure codes") as an operator reads them. */
const FAILURE_WORDS: Readonly<Record<string, string>> = {
  attempt_in_progress: 'a check is still running',
  attempt_uncertain: 'a check ended without a clear result; it must be reconciled',
  authorization_changed: 'the grant or executor registration behind a result changed; the result no longer counts',
  capability_unavailable: 'a required capability is not available on this authority',
  collector_not_passed: 'a collected check did not pass',
  dependency_incomplete: 'a step this one depends on is not complete',
  prior_subject_unresolved: 'a check of an older version of this Change is still unresolved',
  receipt_invalid: 'the retained receipt does not match the evidence any more',
  receipt_missing: 'every check passed but no receipt was written yet',
  result_failed: 'a check failed',
  result_not_qualifying: 'a result was reported by an agent, not observed by a registered executor',
  source_paths_failed: 'the revision does not have the files the workflow requires',
  task_pending: 'a check has not started',
};

const NEXT_WORDS: Readonly<Record<string, string>> = {
  collector_claim: 'run the check with a collector',
  reconcile: 'reconcile the uncertain or expired attempt',
  collector_finalize: 'finalize: write the receipt',
  checkpoint: 'checkpoint: the subject is no longer current',
  none: 'nothing to do',
};

export function failureWords(code: unknown): string {
  const key = String(code);
  return Object.hasOwn(FAILURE_WORDS, key) ? `${FAILURE_WORDS[key]} (${key})` : key;
}

export function nextWords(operation: unknown): string {
  const key = String(operation);
  return Object.hasOwn(NEXT_WORDS, key) ? `${NEXT_WORDS[key]} (${key})` : key;
}

/** Attempt states as words: leases live, expired or replaced. */
export function attemptWords(state: unknown): string {
  switch (state) {
    case 'leased':
      return 'lease live';
    case 'expired':
      return 'lease expired (the execution may still run)';
    case 'replaced':
      return 'replaced by a newer fence';
    case 'finished':
      return 'finished';
    case 'cancelled':
      return 'cancelled';
    default:
      return String(state);
  }
}
