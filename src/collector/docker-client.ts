/**
 * Over 400 lines: one Engine API client; every call shares its transport, byte bound and field checks.
 *
 * A small Docker Engine API client: version negotiation through /_ping and /version, image
 * inspection (never pull), container create / attach / start / wait / inspect / kill / remove,
 * and listing by label for custody reconciliation. Requests go through a DockerTransport
 * (the real Unix-socket one, or the fake one for fault injection).
 *
 * Engine answers are parsed with JSON.parse behind a byte bound: the local engine is inside the
 * trusted boundary (the local owner, controller and Docker daemon remain trusted:
 * docs/command-collector.md "Execution"), and its documents use signed integers the strict wire
 * decoder refuses by design. Every field used is type-checked before use.
 */
import { AgentscmError } from '../contracts/errors.js';
import type { DockerTransport, TransportResponse } from './docker-transport.js';

/** The oldest Engine API this client speaks (Docker 20.10) and the newest it asks for. */
export const MIN_API_VERSION = '1.41';
export const MAX_API_VERSION = '1.51';

const SMALL_BODY = 1 << 20;
const LARGE_BODY = 8 << 20;
const CONTROL_TIMEOUT_MS = 30_000;

export interface EngineVersion {
  readonly version: string;
  readonly apiVersion: string;
  readonly minApiVersion: string;
  readonly os: string;
  readonly arch: string;
  readonly kernelVersion: string;
}

export interface EngineInfo {
  readonly securityOptions: readonly string[];
  readonly cgroupVersion: string;
  readonly operatingSystem: string;
  readonly osType: string;
  readonly architecture: string;
}

export interface ImageInfo {
  readonly id: string;
  readonly repoTags: readonly string[];
  readonly os: string;
  readonly architecture: string;
  /** Config.Labels (a dependency image's lockfile digest: docs/deps.md). */
  readonly labels: Readonly<Record<string, string>>;
}

export interface ContainerState {
  readonly id: string;
  readonly name: string;
  readonly status: string;
  readonly running: boolean;
  readonly exitCode: number;
  readonly oomKilled: boolean;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly error: string;
  readonly labels: Readonly<Record<string, string>>;
}

export interface ContainerSummary {
  readonly id: string;
  readonly names: readonly string[];
  readonly state: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Compare dotted API versions numerically ("1.9" < "1.41"). */
export function compareApiVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

const API_VERSION = /^1\.[0-9]{1,3}$/;

/** The version both sides speak: the engine's newest capped at ours, refused below the floor. */
export function negotiateApiVersion(engineApi: string, engineMin: string | undefined): string {
  if (!API_VERSION.test(engineApi)) {
    throw new AgentscmError(
      'RUNTIME_API_UNSUPPORTED',
      `the engine reports API version ${JSON.stringify(engineApi.slice(0, 32))}, which is not a 1.x version`,
    );
  }
  const chosen = compareApiVersions(engineApi, MAX_API_VERSION) > 0 ? MAX_API_VERSION : engineApi;
  if (compareApiVersions(chosen, MIN_API_VERSION) < 0) {
    throw new AgentscmError(
      'RUNTIME_API_UNSUPPORTED',
      `the engine speaks Engine API ${engineApi}; agentscm needs ${MIN_API_VERSION} or newer`,
      {
        hint: 'use Docker Engine 20.10 or newer',
      },
    );
  }
  if (engineMin !== undefined && API_VERSION.test(engineMin) && compareApiVersions(chosen, engineMin) < 0) {
    throw new AgentscmError(
      'RUNTIME_API_UNSUPPORTED',
      `the engine needs Engine API ${engineMin} or newer; agentscm speaks up to ${MAX_API_VERSION}`,
      {
        hint: 'use an engine that still accepts this API version',
      },
    );
  }
  return chosen;
}

function str(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

function obj(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function labelsOf(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(obj(value))) if (typeof v === 'string') out[key] = v;
  return out;
}

function engineMessage(response: TransportResponse): string {
  const text = Buffer.from(response.body).toString('utf8').slice(0, 512);
  try {
    const parsed = obj(JSON.parse(text) as unknown);
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON: use the raw text
  }
  return text.trim();
}

export class DockerClient {
  private constructor(
    private readonly transport: DockerTransport,
    readonly apiVersion: string,
    readonly engine: EngineVersion,
  ) {}

  /** Connect: /_ping must answer, then /version fixes the negotiated API version. */
  static async connect(transport: DockerTransport): Promise<DockerClient> {
    const ping = await transport.request({ method: 'GET', path: '/_ping', maxBytes: 1024, timeoutMs: 5000 });
    if (ping.status !== 200) {
      throw new AgentscmError(
        'RUNTIME_UNAVAILABLE',
        `the engine at ${transport.describe} answered /_ping with HTTP ${ping.status}`,
        {
          hint: 'start the engine (as root: npm run runtime:start)',
        },
      );
    }
    const pingApi = ping.headers['api-version'];
    const response = await transport.request({
      method: 'GET',
      path: '/version',
      maxBytes: SMALL_BODY,
      timeoutMs: CONTROL_TIMEOUT_MS,
    });
    if (response.status !== 200) {
      throw new AgentscmError(
        'RUNTIME_API_ERROR',
        `the engine answered /version with HTTP ${response.status}: ${engineMessage(response)}`,
      );
    }
    const body = parseBody(response, '/version');
    const engine: EngineVersion = {
      version: str(body.Version),
      apiVersion: str(body.ApiVersion, pingApi ?? ''),
      minApiVersion: str(body.MinAPIVersion),
      os: str(body.Os),
      arch: str(body.Arch),
      kernelVersion: str(body.KernelVersion),
    };
    const apiVersion = negotiateApiVersion(
      engine.apiVersion,
      engine.minApiVersion === '' ? undefined : engine.minApiVersion,
    );
    return new DockerClient(transport, apiVersion, engine);
  }

  get describe(): string {
    return this.transport.describe;
  }

  private path(rest: string): string {
    return `/v${this.apiVersion}${rest}`;
  }

  private async call(
    method: 'GET' | 'POST' | 'DELETE',
    rest: string,
    options: { body?: unknown; maxBytes?: number; timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<TransportResponse> {
    return this.transport.request({
      method,
      path: this.path(rest),
      ...(options.body === undefined ? {} : { body: Buffer.from(JSON.stringify(options.body), 'utf8') }),
      maxBytes: options.maxBytes ?? SMALL_BODY,
      timeoutMs: options.timeoutMs ?? CONTROL_TIMEOUT_MS,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  }

  private fail(what: string, response: TransportResponse): never {
    throw new AgentscmError(
      'RUNTIME_API_ERROR',
      `the engine refused ${what}: HTTP ${response.status} ${engineMessage(response)}`,
      {
        details: { status: response.status },
      },
    );
  }

  async info(): Promise<EngineInfo> {
    const response = await this.call('GET', '/info', { maxBytes: LARGE_BODY });
    if (response.status !== 200) this.fail('GET /info', response);
    const body = parseBody(response, '/info');
    const security = Array.isArray(body.SecurityOptions)
      ? body.SecurityOptions.filter((s): s is string => typeof s === 'string')
      : [];
    return {
      securityOptions: [...security].sort(),
      cgroupVersion: str(body.CgroupVersion),
      operatingSystem: str(body.OperatingSystem),
      osType: str(body.OSType),
      architecture: str(body.Architecture),
    };
  }

  /** Inspect an image by reference; a missing image is IMAGE_NOT_FOUND (it is never pulled). */
  async inspectImage(reference: string): Promise<ImageInfo> {
    const response = await this.call('GET', `/images/${encodeURIComponent(reference)}/json`, { maxBytes: LARGE_BODY });
    if (response.status === 404) {
      throw new AgentscmError(
        'IMAGE_NOT_FOUND',
        `the image ${reference} is not present in the engine at ${this.describe}; agentscm never pulls images`,
        {
          hint: 'build or load the image into the engine first (the test image: npm run runtime:start)',
          details: { image: reference },
        },
      );
    }
    if (response.status !== 200) this.fail(`to inspect image ${reference}`, response);
    const body = parseBody(response, 'image inspect');
    const id = str(body.Id);
    if (!/^sha256:[0-9a-f]{64}$/.test(id))
      throw new AgentscmError(
        'RUNTIME_API_ERROR',
        `the engine reported image ID ${JSON.stringify(id.slice(0, 80))} for ${reference}`,
      );
    const tags = Array.isArray(body.RepoTags) ? body.RepoTags.filter((t): t is string => typeof t === 'string') : [];
    const config = body.Config as { Labels?: unknown } | null | undefined;
    const labels: Record<string, string> = {};
    if (typeof config?.Labels === 'object' && config.Labels !== null)
      for (const [key, value] of Object.entries(config.Labels)) if (typeof value === 'string') labels[key] = value;
    return { id, repoTags: tags, os: str(body.Os), architecture: str(body.Architecture), labels };
  }

  /**
   * Build an image from a tar context (`POST /build`, the Dockerfile at its root; no pull, no
   * network for RUN steps) and tag it `tag`; returns the engine's answer lines (JSON messages).
   */
  async buildImage(context: Uint8Array, tag: string, timeoutMs: number): Promise<string> {
    const query = `t=${encodeURIComponent(tag)}&rm=1&forcerm=1&networkmode=none&pull=0`;
    const response = await this.transport.request({
      method: 'POST',
      path: this.path(`/build?${query}`),
      body: context,
      maxBytes: LARGE_BODY,
      timeoutMs,
    });
    if (response.status !== 200) this.fail(`to build image ${tag}`, response);
    return Buffer.from(response.body).toString('utf8');
  }

  /** Tag an image (`POST /images/{id}/tag`). */
  async tagImage(image: string, repo: string, tag: string): Promise<void> {
    const query = `repo=${encodeURIComponent(repo)}&tag=${encodeURIComponent(tag)}`;
    const response = await this.call('POST', `/images/${encodeURIComponent(image)}/tag?${query}`);
    if (response.status !== 201 && response.status !== 200) this.fail(`to tag image ${image}`, response);
  }

  /** Create a container; returns its ID. A name already in use is a conflict (HTTP 409). */
  async createContainer(name: string, spec: Record<string, unknown>): Promise<string> {
    const response = await this.call('POST', `/containers/create?name=${encodeURIComponent(name)}`, { body: spec });
    if (response.status === 404) {
      throw new AgentscmError(
        'IMAGE_NOT_FOUND',
        `the engine has no image ${str(spec.Image)}; agentscm never pulls images`,
        {
          hint: 'build or load the image into the engine first',
        },
      );
    }
    if (response.status !== 201) this.fail(`to create container ${name}`, response);
    const id = str(parseBody(response, 'container create').Id);
    if (!/^[0-9a-f]{64}$/.test(id))
      throw new AgentscmError('RUNTIME_API_ERROR', 'the engine returned a malformed container ID');
    return id;
  }

  /** Hijack stdout/stderr of a created (not yet started) container. */
  async attachContainer(id: string): Promise<NodeJS.ReadableStream & { destroy(error?: Error): unknown }> {
    return this.transport.attach(
      this.path(`/containers/${id}/attach?stream=1&stdout=1&stderr=1&logs=0`),
      CONTROL_TIMEOUT_MS,
    );
  }

  async startContainer(id: string): Promise<void> {
    const response = await this.call('POST', `/containers/${id}/start`);
    if (response.status !== 204 && response.status !== 304)
      this.fail(`to start container ${id.slice(0, 12)}`, response);
  }

  /** Wait for the container to stop; resolves with the engine's status code. No client timeout. */
  async waitContainer(id: string, signal?: AbortSignal): Promise<{ statusCode: number; error: string }> {
    const response = await this.call('POST', `/containers/${id}/wait?condition=not-running`, {
      timeoutMs: 0,
      ...(signal === undefined ? {} : { signal }),
    });
    if (response.status !== 200) this.fail(`to wait for container ${id.slice(0, 12)}`, response);
    const body = parseBody(response, 'container wait');
    const code = typeof body.StatusCode === 'number' ? body.StatusCode : -1;
    return { statusCode: code, error: str(obj(body.Error).Message) };
  }

  /** Inspect a container by ID or name; null when it does not exist. */
  async inspectContainer(idOrName: string): Promise<ContainerState | null> {
    const response = await this.call('GET', `/containers/${encodeURIComponent(idOrName)}/json`, {
      maxBytes: LARGE_BODY,
    });
    if (response.status === 404) return null;
    if (response.status !== 200) this.fail(`to inspect container ${idOrName.slice(0, 64)}`, response);
    const body = parseBody(response, 'container inspect');
    const state = obj(body.State);
    return {
      id: str(body.Id),
      name: str(body.Name).replace(/^\//, ''),
      status: str(state.Status),
      running: state.Running === true,
      exitCode: typeof state.ExitCode === 'number' ? state.ExitCode : -1,
      oomKilled: state.OOMKilled === true,
      startedAt: str(state.StartedAt),
      finishedAt: str(state.FinishedAt),
      error: str(state.Error),
      labels: labelsOf(obj(body.Config).Labels),
    };
  }

  /** SIGKILL a container; a container that already stopped (409) or vanished (404) is fine. */
  async killContainer(id: string): Promise<void> {
    const response = await this.call('POST', `/containers/${id}/kill?signal=KILL`);
    if (response.status === 204 || response.status === 404 || response.status === 409) return;
    this.fail(`to kill container ${id.slice(0, 12)}`, response);
  }

  /** Force-remove a container with its anonymous volumes; a missing container is fine. */
  async removeContainer(id: string): Promise<void> {
    const response = await this.call('DELETE', `/containers/${id}?force=1&v=1`);
    if (response.status === 204 || response.status === 404) return;
    this.fail(`to remove container ${id.slice(0, 12)}`, response);
  }

  /**
   * Signals of the `kill` events of one container between two instants (Unix seconds, with
   * fractions). The engine emits them for every stop: ours, `docker stop`, its own shutdown.
   */
  async containerKillSignals(id: string, since: number, until: number): Promise<string[]> {
    const filters = encodeURIComponent(JSON.stringify({ type: ['container'], container: [id], event: ['kill'] }));
    const response = await this.call(
      'GET',
      `/events?since=${since.toFixed(3)}&until=${until.toFixed(3)}&filters=${filters}`,
      { maxBytes: SMALL_BODY },
    );
    if (response.status !== 200) this.fail('to read container events', response);
    const signals: string[] = [];
    for (const line of Buffer.from(response.body).toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      let event: Record<string, unknown>;
      try {
        event = obj(JSON.parse(line) as unknown);
      } catch (error) {
        throw new AgentscmError('RUNTIME_API_ERROR', 'the engine sent a malformed event', { cause: error });
      }
      signals.push(str(obj(obj(event.Actor).Attributes).signal, '?'));
    }
    return signals;
  }

  /** Every container (running or not) carrying label key=value. */
  async listContainersByLabel(key: string, value: string): Promise<ContainerSummary[]> {
    const filters = encodeURIComponent(JSON.stringify({ label: [`${key}=${value}`] }));
    const response = await this.call('GET', `/containers/json?all=1&filters=${filters}`, { maxBytes: LARGE_BODY });
    if (response.status !== 200) this.fail('to list containers', response);
    const parsed = parseAny(response, 'container list');
    if (!Array.isArray(parsed))
      throw new AgentscmError('RUNTIME_API_ERROR', 'the engine answered the container list with a non-array');
    return parsed.map((item) => {
      const row = obj(item);
      return {
        id: str(row.Id),
        names: Array.isArray(row.Names)
          ? row.Names.filter((n): n is string => typeof n === 'string').map((n) => n.replace(/^\//, ''))
          : [],
        state: str(row.State),
        labels: labelsOf(row.Labels),
      };
    });
  }

  async close(): Promise<void> {
    await this.transport.close();
  }
}

function parseAny(response: TransportResponse, what: string): unknown {
  try {
    return JSON.parse(Buffer.from(response.body).toString('utf8')) as unknown;
  } catch (error) {
    throw new AgentscmError('RUNTIME_API_ERROR', `the engine's ${what} answer is not JSON`, { cause: error });
  }
}

function parseBody(response: TransportResponse, what: string): Record<string, unknown> {
  return obj(parseAny(response, what));
}
