/**
 * The hub's forge publisher (docs/hub.md "Forge status"): for every profile with
 * `publish_forge_status: true`, the qualification state of each linked Change (`agentscm change
 * link`) is published as a commit status — pending, success or failure, context
 * `agentscm/qualification`, the failure codes in the description — on the linked commit.
 *
 * It only reads: qualification is the operator's read-only answer (src/tasks/admission/qualification-local.ts),
 * so a forge that is slow, down or refusing never changes task state. A pass runs shortly after
 * every task request of the profile and every `intervalMs` (to see what the CLI changed); a
 * status is sent only when it differs from the last one the forge accepted for that commit. A
 * failed publication is logged and retried with exponential backoff until it succeeds or the
 * state moves on.
 */
import { isAgentscmError } from '../contracts/errors.js';
import type { HubForgeConfig } from '../contracts/hub-config.js';
import type { Store } from '../native/store-handle.js';
import { qualifyLocal } from '../tasks/admission/qualification-local.js';
import type { HubProfile } from './config.js';
import { sendForgeStatus, type ForgeStatus } from './forge-client.js';
import { listForgeLinks, type ForgeLink } from './forge-links.js';

export interface ForgePublisherOptions {
  /** Time between passes over every link; default 15 s. */
  readonly intervalMs?: number;
  /** Delay between a task request and the pass it triggers (requests in a burst share one); default 250 ms. */
  readonly debounceMs?: number;
  /** First retry delay after a failed publication, doubled per failure; default 1 s. */
  readonly retryBaseMs?: number;
  /** Longest retry delay; default 60 s. */
  readonly retryMaxMs?: number;
  /** Where the publisher's JSON log lines go (the hub's access log). */
  readonly log: (line: string) => void;
  /**
   * A read Store of the profile's data directory, from the hub (src/hub/server.ts): one per pass,
   * closed by the publisher when the pass has looked at every link.
   */
  readonly readStore: (profile: HubProfile) => Store;
}

/** The status a Change's qualification answer shows on the forge (`store`: the profile's read Store). */
export function forgeStatusOf(profile: HubProfile, store: Store, changeId: string): ForgeStatus {
  let answer;
  try {
    answer = qualifyLocal(store, {
      repository: profile.nativeRepository,
      profile: profile.profileId,
      target: profile.target,
      change: changeId,
    });
  } catch (error) {
    // No review context yet, the Change gone, the store busy: nothing qualifies, nothing failed.
    return {
      state: 'pending',
      description: `not qualified yet: ${isAgentscmError(error) ? error.code : 'unavailable'}`,
    };
  }
  if (answer.qualified && answer.receipt_digest !== null) {
    return {
      state: 'success',
      description: `qualified: revision ${answer.revision.slice(0, 12)}, receipt ${answer.receipt_digest.slice(0, 12)}`,
    };
  }
  const codes = [...new Set(answer.failures.map((failure) => failure.code))].sort();
  if (codes.includes('result_failed') || codes.includes('collector_not_passed')) {
    return { state: 'failure', description: `not qualified: ${codes.join(', ')}` };
  }
  const why = codes.length > 0 ? codes.join(', ') : `next ${answer.next.operation}`;
  return { state: 'pending', description: `not qualified yet: ${why}` };
}

interface LinkState {
  /** What the forge last accepted for this link (sha, state and description). */
  published: string | null;
  failures: number;
  retryAtMs: number;
  sending: boolean;
}

export class ForgePublisher {
  private readonly profiles: readonly (HubProfile & { forge: HubForgeConfig })[];
  private readonly states = new Map<string, LinkState>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly debounced = new Map<HubProfile, NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();
  private interval: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    profiles: readonly HubProfile[],
    private readonly options: ForgePublisherOptions,
  ) {
    this.profiles = profiles.filter(
      (profile): profile is HubProfile & { forge: HubForgeConfig } =>
        profile.forge !== undefined && profile.forge !== null,
    );
  }

  /** Whether any profile publishes. */
  get active(): boolean {
    return this.profiles.length > 0;
  }

  /** Run a first pass now and then one every interval. */
  start(): void {
    if (!this.active || this.closed) return;
    for (const profile of this.profiles) this.pass(profile);
    this.interval = setInterval(() => {
      for (const profile of this.profiles) this.pass(profile);
    }, this.options.intervalMs ?? 15_000);
    this.interval.unref();
  }

  /** A task request of `profile` finished: look again soon. */
  poke(profile: HubProfile): void {
    const publishing = this.profiles.find(
      (p) => p.repositoryId === profile.repositoryId && p.profileId === profile.profileId,
    );
    if (publishing === undefined || this.closed || this.debounced.has(publishing)) return;
    const timer = setTimeout(() => {
      this.debounced.delete(publishing);
      this.pass(publishing);
    }, this.options.debounceMs ?? 250);
    timer.unref();
    this.debounced.set(publishing, timer);
  }

  /** Stop every timer and wait for publications in flight (each bounded by its request timeout). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.interval !== null) clearInterval(this.interval);
    for (const timer of this.debounced.values()) clearTimeout(timer);
    for (const timer of this.timers) clearTimeout(timer);
    await Promise.allSettled([...this.inFlight]);
  }

  private pass(profile: HubProfile & { forge: HubForgeConfig }): void {
    if (this.closed) return;
    let links: ForgeLink[];
    try {
      links = listForgeLinks(profile, profile.nativeRepository);
    } catch (error) {
      this.log({
        repository: profile.repositoryId,
        profile: profile.profileId,
        result: 'links_unreadable',
        error: isAgentscmError(error) ? error.code : 'INTERNAL',
      });
      return;
    }
    if (links.length === 0) return;
    const store = this.options.readStore(profile);
    try {
      for (const link of links) this.consider(profile, store, link);
    } finally {
      store.close();
    }
  }

  private consider(profile: HubProfile & { forge: HubForgeConfig }, store: Store, link: ForgeLink): void {
    const key = `${profile.repositoryId}\u0000${profile.profileId}\u0000${link.change_id}`;
    let state = this.states.get(key);
    if (state === undefined) {
      state = { published: null, failures: 0, retryAtMs: 0, sending: false };
      this.states.set(key, state);
    }
    if (state.sending || Date.now() < state.retryAtMs) return;
    const status = forgeStatusOf(profile, store, link.change_id);
    const wanted = JSON.stringify([link.forge, link.project, link.sha, status.state, status.description]);
    if (wanted === state.published) return;
    if (link.forge !== profile.forge.kind) {
      // A link to another kind of forge than this profile publishes to: say so once per state.
      state.published = wanted;
      this.log({
        repository: profile.repositoryId,
        profile: profile.profileId,
        change: link.change_id,
        forge: link.forge,
        result: 'skipped',
        error: `profile publishes to ${profile.forge.kind}`,
      });
      return;
    }
    state.sending = true;
    const current = state;
    const sent = sendForgeStatus(
      profile.forge,
      { kind: link.forge, project: link.project, sha: link.sha },
      status,
    ).then(
      (httpStatus) => {
        if (httpStatus >= 200 && httpStatus < 300) {
          current.published = wanted;
          current.failures = 0;
          current.retryAtMs = 0;
          this.log({
            repository: profile.repositoryId,
            profile: profile.profileId,
            change: link.change_id,
            forge: link.forge,
            sha: link.sha,
            state: status.state,
            result: 'published',
            http_status: httpStatus,
          });
        } else {
          this.failed(profile, link, current, status.state, `http_${httpStatus}`);
        }
      },
      (error: unknown) => {
        const code = isAgentscmError(error)
          ? error.code
          : typeof (error as { code?: unknown }).code === 'string'
            ? String((error as { code: string }).code)
            : 'network';
        this.failed(profile, link, current, status.state, code);
      },
    );
    const tracked = sent.finally(() => {
      current.sending = false;
      this.inFlight.delete(tracked);
    });
    this.inFlight.add(tracked);
  }

  private failed(
    profile: HubProfile & { forge: HubForgeConfig },
    link: ForgeLink,
    state: LinkState,
    wanted: string,
    error: string,
  ): void {
    state.failures += 1;
    const delay = Math.min(
      (this.options.retryBaseMs ?? 1000) * 2 ** Math.min(state.failures - 1, 20),
      this.options.retryMaxMs ?? 60_000,
    );
    state.retryAtMs = Date.now() + delay;
    this.log({
      repository: profile.repositoryId,
      profile: profile.profileId,
      change: link.change_id,
      forge: link.forge,
      sha: link.sha,
      state: wanted,
      result: 'failed',
      error,
      attempt: state.failures,
      retry_in_ms: delay,
    });
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.pass(profile);
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }

  private log(fields: Record<string, unknown>): void {
    this.options.log(JSON.stringify({ time: new Date().toISOString(), event: 'forge_status', ...fields }));
  }
}
