/**
 * Over 400 lines: the dashboard's one browser bundle entry, one render function per view sharing its state.
 *
 * The read-only dashboard (docs/dashboard.md): a reader grant's token entered once and kept in
 * sessionStorage (sent only as an Authorization header, never in a URL), hash routes for the
 * views, polling for refresh, and a "reconnecting" status while the hub does not answer. It only
 * ever sends GET requests. Every value is rendered through dom.ts as text.
 */
import { text as asText, attemptWords, failureWords, h, id, link, nextWords, table, time, type Child } from './dom.js';

type Json = Record<string, unknown>;

const TOKEN_KEY = 'agentscm.reader_token';
const POLL_KEY = 'agentscm.poll_ms';
// The profiles this token can read, kept for the tab so that a reload fetches its view at once.
const PROFILES_KEY = 'agentscm.profiles';
const API = '/v1/hub/ui-api';

const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
const status = document.getElementById('status') as HTMLElement;

let profiles: Json[] = [];
let profileIndex = 0;
let lastSignature = '';
let timer: ReturnType<typeof setTimeout> | null = null;
let generation = 0;

class HubUnavailable extends Error {}
class HubRefused extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function pollMs(): number {
  const value = Number(sessionStorage.getItem(POLL_KEY) ?? '');
  return Number.isInteger(value) && value >= 200 ? value : 5000;
}

function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

async function request(path: string): Promise<Response> {
  const bearer = token();
  if (bearer === null) throw new HubRefused(401, 'HUB_AUTH_REQUIRED', 'no token');
  let response: Response;
  try {
    response = await fetch(path, {
      method: 'GET',
      headers: { authorization: `Bearer ${bearer}` },
      cache: 'no-store',
      credentials: 'omit',
      referrerPolicy: 'no-referrer',
    });
  } catch {
    throw new HubUnavailable('the hub does not answer');
  }
  if (response.status >= 500) throw new HubUnavailable(`the hub answered ${response.status}`);
  if (!response.ok) {
    let code = 'HTTP_' + String(response.status);
    let message = response.statusText;
    try {
      const body = (await response.json()) as { error?: { code?: string; message?: string } };
      code = body.error?.code ?? code;
      message = body.error?.message ?? message;
    } catch {
      // A refusal without a JSON body keeps its status text.
    }
    throw new HubRefused(response.status, code, message);
  }
  return response;
}

async function getText(path: string): Promise<string> {
  return (await request(path)).text();
}

function profileBase(): string {
  const profile = profiles[profileIndex];
  if (profile === undefined)
    throw new HubRefused(404, 'HUB_PROFILE_NOT_FOUND', 'this grant can read no profile of the hub');
  const [owner = '', name = ''] = String(profile.repository_id).split('/');
  const repository = `${encodeURIComponent(owner)}/${encodeURIComponent(name)}`;
  return `${API}/repositories/${repository}/profiles/${encodeURIComponent(String(profile.profile_id))}`;
}

function setStatus(text: string, reconnecting: boolean): void {
  status.textContent = text;
  status.className = reconnecting ? 'reconnecting' : '';
}

function words(value: unknown): string {
  return asText(value);
}

/** The failures grouped by code, each once with its count (the Change view lists them per task). */
function failureSummary(failures: readonly Json[]): Child {
  const counts = new Map<string, number>();
  for (const failure of failures) counts.set(asText(failure.code), (counts.get(asText(failure.code)) ?? 0) + 1);
  return h(
    'ul',
    {},
    ...[...counts].map(([code, count]) => h('li', {}, failureWords(code), count > 1 ? ` — ${count} tasks` : '')),
  );
}

function qualificationCell(q: Json | undefined, grouped = false): Child {
  if (q === undefined) return 'unknown';
  const error = q.error as Json | undefined;
  if (error !== undefined)
    return h('span', { class: 'muted' }, `not qualified: ${String(error.message)} (${String(error.code)})`);
  if (q.qualified === true) return h('span', { class: 'good' }, 'qualified');
  const failures = (q.failures as Json[] | undefined) ?? [];
  if (failures.length === 0) return h('span', { class: 'bad' }, 'not qualified');
  return h(
    'span',
    {},
    h('span', { class: 'bad' }, 'not qualified'),
    grouped
      ? failureSummary(failures)
      : h('ul', {}, ...failures.map((f) => h('li', {}, failureWords(f.code), ' — ', id(f.task_id)))),
  );
}

function nextCell(q: Json | undefined): Child {
  const next = q?.next as Json | undefined;
  if (next === undefined) return 'none';
  return h(
    'span',
    {},
    nextWords(next.operation),
    next.task_id === undefined ? null : h('span', {}, ' for ', id(next.task_id)),
  );
}

function pager(route: string, cursor: unknown): Child {
  if (typeof cursor !== 'string') return null;
  return h('p', {}, link(`${route}/page/${cursor}`, 'Next page'));
}

// ---- views -------------------------------------------------------------------------------

interface Rendered {
  readonly signature: string;
  readonly nodes: () => Child[];
}

async function changesView(cursor: string): Promise<Rendered> {
  const text = await getText(`${profileBase()}/changes?cursor=${encodeURIComponent(cursor)}`);
  const data = JSON.parse(text) as Json;
  const changes = data.changes as Json[];
  return {
    signature: text,
    nodes: () => [
      h('h2', {}, `Changes (${String(data.total)})`),
      table(
        ['Change', 'Version', 'Revision', 'Qualification', 'Next'],
        changes.map((c) => {
          const q = c.qualification as Json | undefined;
          return [
            link(`/change/${encodeURIComponent(String(c.id))}`, String(c.id)),
            words(c.current_version),
            id(c.current_revision),
            qualificationCell(q, true),
            nextCell(q),
          ];
        }),
      ),
      pager('/changes', data.next_cursor),
    ],
  };
}

function taskSection(t: Json): HTMLElement {
  const attempts = (t.attempts as Json[] | undefined) ?? [];
  return h(
    'section',
    { class: 'task' },
    h('h3', {}, `Step ${String(t.step_id)}`, ' ', id(t.task_id)),
    h(
      'p',
      {},
      `Change ${String(t.change_id)} version ${String(t.change_version)}, revision `,
      id(t.revision),
      `, policy epoch ${String(t.policy_epoch)}, highest fence ${String(t.last_fence)}, ` +
        `${t.required === true ? 'required' : 'optional'}`,
    ),
    attempts.length === 0
      ? h('p', { class: 'muted' }, 'No attempt yet.')
      : table(
          ['Fence', 'Attempt', 'Agent', 'State', 'Lease expires', 'Started', 'Result', 'Signer', 'Execution record'],
          attempts.map((a) => {
            const attempt = a.attempt as Json;
            const agent = attempt.agent as Json;
            const assertion = a.assertion as Json | null;
            const transfer = a.transfer as Json | null;
            const signer = transfer?.signer as Json | undefined;
            const record = transfer?.execution_record as Json | null | undefined;
            return [
              words(attempt.fence),
              id(attempt.attempt_id),
              `${String(agent.owner_id)}/${String(agent.agent_id)}`,
              attemptWords(a.state),
              time(a.lease_expires_at_ms),
              time(a.created_at_ms),
              transfer !== null && transfer !== undefined
                ? `imported: ${String(transfer.outcome)}`
                : assertion !== null
                  ? `${String(assertion.trust_class)}: ${String(assertion.outcome)}`
                  : 'none',
              signer === undefined
                ? 'none'
                : h(
                    'span',
                    {},
                    `${String(signer.executor_id)}, registration `,
                    id(signer.registration_id),
                    ` epoch ${String(signer.registration_epoch)}, key `,
                    id(signer.verification_key_id),
                    signer.registration_current === true ? ' (current)' : ' (no longer current)',
                  ),
              record === null || record === undefined
                ? 'none'
                : h('div', {}, recordView(record), ...outputTailView(transfer as Json)),
            ];
          }),
        ),
  );
}

function recordView(record: Json): HTMLElement {
  const stream = (name: string): string => {
    const s = record[name] as Json | undefined;
    return s === undefined
      ? 'none'
      : `${String(s.retained_bytes)} of ${String(s.observed_bytes)} bytes ` +
          `retained${s.truncated === true ? ' (truncated)' : ''}, sha256 ${String(s.sha256)}`;
  };
  return h(
    'dl',
    {},
    h('dt', {}, 'outcome'),
    h(
      'dd',
      {},
      `${String(record.outcome)}, exit ${String(record.exit_code)}` +
        `${record.timed_out === true ? ', timed out' : ''}${record.oom_killed === true ? ', out of memory' : ''}`,
    ),
    h('dt', {}, 'stdout'),
    h('dd', {}, stream('stdout')),
    h('dt', {}, 'stderr'),
    h('dd', {}, stream('stderr')),
    h('dt', {}, 'image'),
    h('dd', {}, id(record.image_id)),
    h('dt', {}, 'started, finished'),
    h('dd', {}, `${String(record.started_at)} – ${String(record.finished_at)} (${String(record.duration_ms)} ms)`),
  );
}

/**
 * A command that did not pass: the last lines of each stream its transfer carries, already bounded
 * (40 lines, 4 KiB) and escaped by the authority; shown as text, never markup.
 */
function outputTailView(transfer: Json): Child[] {
  const tail = transfer.output_tail as Json | null | undefined;
  const cut = transfer.output_tail_cut as Json | null | undefined;
  if (tail === null || tail === undefined) return [];
  return (['stdout', 'stderr'] as const).flatMap((name) => {
    const shown = asText(tail[name]);
    if (shown === '') return [];
    const left = (cut?.[name] ?? tail.truncated) === true ? ' (earlier output left out)' : '';
    return [
      h('p', { class: 'muted' }, `${name}, last lines${left}:`),
      h('pre', { 'aria-label': `${name} output tail` }, shown),
    ];
  });
}

function contextCell(context: Json | undefined): Child {
  if (context === undefined) return 'unknown';
  if (typeof context.context_digest === 'string') return id(context.context_digest);
  const error = context.error as Json | undefined;
  return h('span', { class: 'muted' }, `${asText(error?.message)} (${asText(error?.code)})`);
}

function diffView(diff: Json | null): Child {
  if (diff === null) return h('p', { class: 'muted' }, 'The profile names no target of this repository.');
  const changes = (diff.changes as Json[] | undefined) ?? [];
  const total = Number(diff.total);
  return h(
    'div',
    {},
    h(
      'p',
      {},
      'From the target at ',
      id(diff.from),
      ' to the Change at ',
      id(diff.to),
      `: ${total === 0 ? 'no file differs' : `${total} file${total === 1 ? ' differs' : 's differ'}`}` +
        `${total > changes.length ? ` (the first ${changes.length} shown)` : ''}.`,
    ),
    changes.length === 0
      ? null
      : table(
          ['Path', 'Change', 'Before', 'After'],
          changes.map((c) => [h('code', {}, asText(c.path)), asText(c.change), asText(c.before), asText(c.after)]),
        ),
  );
}

async function changeView(changeId: string): Promise<Rendered> {
  const base = profileBase();
  const [text, tasksText] = await Promise.all([
    getText(`${base}/changes/${encodeURIComponent(changeId)}`),
    getText(`${base}/tasks?change=${encodeURIComponent(changeId)}`),
  ]);
  const data = JSON.parse(text) as Json;
  const change = data.change as Json;
  const q = data.qualification as Json;
  const target = data.target as Json;
  const tasks = (JSON.parse(tasksText) as Json).tasks as Json[];
  const versions = (change.versions as Json[] | undefined) ?? [];
  return {
    signature: text + tasksText,
    nodes: () => [
      h('h2', {}, `Change ${String(change.id)}`),
      h('h3', {}, 'Subject'),
      table(
        ['Version', 'Revision', 'Policy epoch', 'Review context', 'Target', 'Qualification', 'Next', 'Receipt'],
        [
          [
            words(change.current_version),
            id(change.current_revision),
            words(data.policy_epoch),
            contextCell(data.context as Json | undefined),
            h('span', {}, String(target.name), ' at ', id(target.revision)),
            qualificationCell(q),
            nextCell(q),
            typeof q.receipt_digest === 'string' ? link(`/receipt/${q.receipt_digest}`, id(q.receipt_digest)) : 'none',
          ],
        ],
      ),
      h('h3', {}, 'Revision against its target'),
      diffView(data.diff as Json | null),
      h(
        'h3',
        {},
        `Versions (${asText(change.version_count)}` +
          `${Number(change.version_count) > versions.length ? ', the newest 100 shown' : ''})`,
      ),
      table(
        ['Version', 'Revision', 'Previous revision'],
        versions.map((v) => [
          words(v.version),
          id(v.revision),
          v.previous_revision === null ? 'none' : id(v.previous_revision),
        ]),
      ),
      h('h3', {}, `Tasks (${tasks.length})`),
      ...tasks.map(taskSection),
    ],
  };
}

async function tasksView(cursor: string): Promise<Rendered> {
  const text = await getText(`${profileBase()}/tasks?cursor=${encodeURIComponent(cursor)}`);
  const data = JSON.parse(text) as Json;
  return {
    signature: text,
    nodes: () => [h('h2', {}, 'Tasks'), ...(data.tasks as Json[]).map(taskSection), pager('/tasks', data.next_cursor)],
  };
}

async function receiptsView(cursor: string): Promise<Rendered> {
  const text = await getText(`${profileBase()}/receipts?cursor=${encodeURIComponent(cursor)}`);
  const data = JSON.parse(text) as Json;
  return {
    signature: text,
    nodes: () => [
      h('h2', {}, 'Receipts'),
      table(
        ['Receipt', 'Change', 'Target', 'Context', 'Written'],
        (data.receipts as Json[]).map((r) => [
          link(`/receipt/${String(r.receipt_digest)}`, id(r.receipt_digest)),
          String(r.change_id),
          String(r.target),
          id(r.context_digest),
          time(r.created_at_ms),
        ]),
      ),
      pager('/receipts', data.next_cursor),
    ],
  };
}

function jsonList(value: unknown): Child {
  if (value === null || typeof value !== 'object') return words(value);
  return h('pre', {}, JSON.stringify(value, null, 2));
}

async function downloadBundle(digest: string, button: HTMLButtonElement): Promise<void> {
  button.disabled = true;
  try {
    const blob = await (await request(`${profileBase()}/receipts/${encodeURIComponent(digest)}/bundle`)).blob();
    const url = URL.createObjectURL(blob);
    const anchor = h('a', { href: url, download: `receipt-${digest}.agscmrb` });
    document.body.append(anchor);
    anchor.click();
    anchor.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    setStatus('bundle downloaded', false);
  } catch (error) {
    setStatus(`the bundle could not be downloaded: ${error instanceof Error ? error.message : String(error)}`, false);
  } finally {
    button.disabled = false;
  }
}

async function receiptView(digest: string): Promise<Rendered> {
  const text = await getText(`${profileBase()}/receipts/${encodeURIComponent(digest)}`);
  const data = JSON.parse(text) as Json;
  const receipt = data.receipt as Json;
  return {
    signature: text,
    nodes: () => {
      const button = h(
        'button',
        { type: 'button', id: 'download-bundle' },
        'Download offline bundle',
      ) as HTMLButtonElement;
      button.addEventListener('click', () => void downloadBundle(String(data.receipt_digest), button));
      return [
        h('h2', {}, 'Receipt ', id(data.receipt_digest)),
        h('p', {}, 'Written ', time(data.created_at_ms), ' ', button),
        table(
          ['Field', 'Value'],
          Object.entries(receipt).map(([key, value]) => [key, jsonList(value)]),
        ),
      ];
    },
  };
}

async function targetsView(): Promise<Rendered> {
  const text = await getText(`${profileBase()}/targets`);
  const data = JSON.parse(text) as Json;
  return {
    signature: text,
    nodes: () => [
      h('h2', {}, 'Targets'),
      ...(data.targets as Json[]).flatMap((t) => [
        h('h3', {}, `Target ${String(t.name)}`),
        h(
          'p',
          {},
          'At revision ',
          id(t.revision),
          ', requirement ',
          t.requirement_digest === null ? 'none' : id(t.requirement_digest),
        ),
        ((t.landings as Json[] | undefined) ?? []).length === 0
          ? h('p', { class: 'muted' }, 'Nothing landed yet.')
          : table(
              ['Landed', 'Change', 'Revision', 'From', 'Receipt', 'By'],
              (t.landings as Json[]).map((l) => [
                time(l.landed_at_ms),
                link(
                  `/change/${encodeURIComponent(String(l.change_id))}`,
                  `${String(l.change_id)} v${String(l.change_version)}`,
                ),
                id(l.revision),
                id(l.previous_revision),
                l.receipt_kind === 'imported'
                  ? link(`/receipt/${String(l.receipt_digest)}`, id(l.receipt_digest))
                  : h('span', {}, `${String(l.receipt_kind)} `, id(l.receipt_digest)),
                String(l.landed_by),
              ]),
            ),
      ]),
    ],
  };
}

async function registrationsView(): Promise<Rendered> {
  const text = await getText(`${profileBase()}/registrations`);
  const data = JSON.parse(text) as Json;
  const hub = data.hub_profile as Json;
  return {
    signature: text,
    nodes: () => [
      h('h2', {}, 'Registrations and profiles'),
      h(
        'p',
        {},
        `Hub profile ${String(hub.profile_id)} of ${String(hub.repository_id)} on target ${String(hub.target)}, ` +
          'requirement ',
        id(hub.requirement_digest),
        `, policy epoch ${String(hub.policy_epoch)}`,
      ),
      h('h3', {}, 'Executor registrations'),
      table(
        ['Registration', 'Step', 'Executor', 'Epoch', 'Key', 'State', 'Revocation reason'],
        (data.registrations as Json[]).map((r) => [
          id(r.registration_id),
          String(r.step),
          String(r.executor_id),
          `${String(r.registration_epoch)} of ${String(r.latest_epoch)}`,
          id(r.verification_key_id),
          r.revoked === true
            ? h('span', { class: 'bad' }, 'revoked')
            : r.current === true
              ? h('span', { class: 'good' }, 'current')
              : 'superseded',
          asText(r.revocation_reason),
        ]),
      ),
      h('h3', {}, 'Collector profiles'),
      table(
        ['Profile', 'Step', 'Registration', 'Epoch', 'Installed'],
        (data.collector_profiles as Json[]).map((p) => [
          id(p.collector_profile_id),
          String(p.step_id),
          id(p.registration_id),
          words(p.registration_epoch),
          time(p.installed_at_ms),
        ]),
      ),
    ],
  };
}

async function runsView(cursor: string): Promise<Rendered> {
  const text = await getText(`${profileBase()}/runs?cursor=${encodeURIComponent(cursor)}`);
  const data = JSON.parse(text) as Json;
  return {
    signature: text,
    nodes: () => [
      h('h2', {}, `Skill-workflow runs (${String(data.total)})`),
      table(
        ['Run', 'Name', 'Revision', 'State', 'Steps', 'Started', 'Updated'],
        (data.runs as Json[]).map((r) => [
          link(`/run/${encodeURIComponent(String(r.run_id))}`, String(r.run_id)),
          String(r.name),
          id(r.revision),
          String(r.state),
          words(r.step_count),
          time(r.created_at_ms),
          time(r.updated_at_ms),
        ]),
      ),
      pager('/runs', data.next_cursor),
    ],
  };
}

function outputBlock(name: string, stream: Json | undefined): Child[] {
  if (stream === undefined) return [];
  const note =
    `${name}: ${String(stream.bytes)} bytes retained, sha256 ` +
    `${String(stream.sha256)}${stream.truncated === true ? ' (only the first 64 KiB shown)' : ''}`;
  return [h('p', { class: 'muted' }, note), h('pre', { 'aria-label': `${name} output` }, asText(stream.text))];
}

async function runView(runId: string): Promise<Rendered> {
  const text = await getText(`${profileBase()}/runs/${encodeURIComponent(runId)}`);
  const data = JSON.parse(text) as Json;
  const run = data.run as Json;
  const source = run.source as Json;
  const attempts = (data.attempts as Json[] | undefined) ?? [];
  return {
    signature: text,
    nodes: () => [
      h('h2', {}, `Run ${String(run.run_id)} (${String(run.name)})`),
      h(
        'p',
        {},
        `State ${String(run.state)}${run.state_reason === null ? '' : `: ${asText(run.state_reason)}`}; revision `,
        id(source.revision),
        `, policy epoch ${String(source.policy_epoch)}; started `,
        time(run.created_at_ms),
        ', updated ',
        time(run.updated_at_ms),
      ),
      table(
        ['Step', 'Kind', 'State', 'Started', 'Finished'],
        ((run.steps as Json[] | undefined) ?? []).map((s) => [
          String(s.id),
          String(s.kind),
          String(s.state),
          time(s.started_at_ms),
          time(s.finished_at_ms),
        ]),
      ),
      ...attempts.flatMap((a) => [
        h('h3', {}, `Command step ${String(a.step_id)}: attempt `, id(a.attempt_id)),
        h('p', {}, `${String(a.state)}, outcome ${asText(a.outcome)}; ${asText(a.summary)}`),
        ...outputBlock('stdout', a.stdout as Json | undefined),
        ...outputBlock('stderr', a.stderr as Json | undefined),
      ]),
    ],
  };
}

// ---- routing, refresh, token -------------------------------------------------------------

function route(): Promise<Rendered> {
  const hash = location.hash.replace(/^#/, '') || '/changes';
  const parts = hash
    .split('/')
    .slice(1)
    .map((part) => decodeURIComponent(part));
  const [view = 'changes', arg, cursor] = parts;
  const pageCursor = arg === 'page' && cursor !== undefined && /^[0-9]{1,16}$/.test(cursor) ? cursor : '0';
  switch (view) {
    case 'change':
      return changeView(arg ?? '');
    case 'tasks':
      return tasksView(pageCursor);
    case 'receipts':
      return receiptsView(pageCursor);
    case 'receipt':
      return receiptView(arg ?? '');
    case 'targets':
      return targetsView();
    case 'registrations':
      return registrationsView();
    case 'runs':
      return runsView(pageCursor);
    case 'run':
      return runView(arg ?? '');
    default:
      return changesView(pageCursor);
  }
}

function schedule(): void {
  if (timer !== null) clearTimeout(timer);
  timer = setTimeout(() => void refresh(false), pollMs());
}

async function refresh(navigated: boolean): Promise<void> {
  const mine = ++generation;
  const started = performance.now();
  let checkProfiles = false;
  try {
    if (profiles.length === 0) {
      const cached = cachedProfiles();
      if (cached === null) await loadProfiles();
      else {
        profiles = cached;
        renderNav();
        // Checked again once the view is drawn; the view's own request authenticates the token.
        checkProfiles = true;
      }
    }
    const rendered = await route();
    if (mine !== generation) return;
    if (navigated || rendered.signature !== lastSignature) {
      lastSignature = rendered.signature;
      main.replaceChildren();
      for (const node of rendered.nodes())
        if (node !== null && node !== undefined) main.append(node instanceof Node ? node : String(node));
      if (navigated) main.focus();
      // User Timing entries for whoever measures the dashboard (bench/dashboard.bench.ts).
      performance.clearMeasures('agentscm:view');
      performance.measure('agentscm:view', { start: started });
    }
    if (checkProfiles) loadProfiles().catch(() => undefined);
    setStatus(`updated ${new Date().toLocaleTimeString()}`, false);
  } catch (error) {
    if (mine !== generation) return;
    if (error instanceof HubUnavailable) {
      setStatus('reconnecting… (the hub does not answer; the last view stays shown)', true);
    } else if (error instanceof HubRefused && (error.status === 401 || error.status === 403)) {
      forget();
      showTokenForm(`The hub refused the token: ${error.message} (${error.code}).`);
      return;
    } else if (error instanceof HubRefused) {
      lastSignature = '';
      main.replaceChildren(h('h2', {}, 'Not available'), h('p', {}, `${error.message} (${error.code})`));
      setStatus('', false);
    } else {
      setStatus(`error: ${error instanceof Error ? error.message : String(error)}`, true);
    }
  }
  if (mine === generation) schedule();
}

async function loadProfiles(): Promise<void> {
  const text = await getText(`${API}/profiles`);
  const data = JSON.parse(text) as Json;
  const changed = JSON.stringify(data.profiles) !== JSON.stringify(profiles);
  profiles = data.profiles as Json[];
  sessionStorage.setItem(PROFILES_KEY, JSON.stringify(profiles));
  if (changed) renderNav();
}

function cachedProfiles(): Json[] | null {
  const text = sessionStorage.getItem(PROFILES_KEY);
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) && value.length > 0 ? (value as Json[]) : null;
  } catch {
    return null;
  }
}

function forget(): void {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(PROFILES_KEY);
  profiles = [];
}

function renderNav(): void {
  const views: [string, string][] = [
    ['/changes', 'Changes'],
    ['/tasks', 'Tasks'],
    ['/receipts', 'Receipts'],
    ['/targets', 'Targets'],
    ['/registrations', 'Registrations and profiles'],
    ['/runs', 'Runs'],
  ];
  const children: Child[] = views.map(([path, label]) => link(path, label));
  if (profiles.length > 1) {
    const select = h(
      'select',
      { 'aria-label': 'Profile' },
      ...profiles.map((p, index) =>
        h('option', { value: String(index) }, `${String(p.repository_id)} / ${String(p.profile_id)}`),
      ),
    ) as HTMLSelectElement;
    select.value = String(profileIndex);
    select.addEventListener('change', () => {
      profileIndex = Number(select.value);
      void refresh(true);
    });
    children.push(select);
  } else if (profiles[0] !== undefined) {
    children.push(
      h('span', { class: 'muted' }, `${String(profiles[0].repository_id)} / ${String(profiles[0].profile_id)}`),
    );
  }
  const signOut = h('button', { type: 'button' }, 'Forget token');
  signOut.addEventListener('click', () => {
    forget();
    showTokenForm('The token was removed from this tab.');
  });
  children.push(' ', signOut);
  nav.replaceChildren();
  for (const child of children)
    if (child !== null && child !== undefined) nav.append(child instanceof Node ? child : String(child));
  nav.hidden = false;
}

function showTokenForm(message: string | null): void {
  if (timer !== null) clearTimeout(timer);
  generation += 1;
  nav.hidden = true;
  lastSignature = '';
  const input = h('input', {
    type: 'password',
    id: 'token',
    name: 'token',
    autocomplete: 'off',
    required: '',
    size: '70',
  }) as HTMLInputElement;
  const form = h(
    'form',
    { id: 'token-form' },
    h('h2', {}, 'Reader token'),
    h(
      'p',
      {},
      'Paste the token of a reader grant (agentscm grant create --scope reader --actor OWNER/AGENT --token-file ' +
        'FILE). It is kept in this tab only (sessionStorage) and sent as an Authorization header.',
    ),
    message === null ? null : h('p', { class: 'bad', role: 'alert' }, message),
    h('label', { for: 'token' }, 'Token'),
    input,
    ' ',
    h('button', { type: 'submit' }, 'Open dashboard'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    forget();
    sessionStorage.setItem(TOKEN_KEY, input.value.trim());
    void refresh(true);
  });
  main.replaceChildren(form);
  setStatus('', false);
  input.focus();
}

window.addEventListener('hashchange', () => void refresh(true));
if (token() === null) showTokenForm(null);
else void refresh(true);
