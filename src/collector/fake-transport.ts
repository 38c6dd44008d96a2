/**
 * An in-memory Engine API beside the real Unix-socket transport, for the faults a real engine
 * cannot produce on demand (issue 4 "Tests": lost result, unknown cleanup). It answers the
 * endpoints the collector uses with the same status codes as Docker, runs each "container" as
 * a scripted result, and can be told to lose the wait answer, refuse removal, lose the create
 * answer after creating, or stop answering altogether. Never used outside tests.
 */
import { PassThrough, type Readable } from 'node:stream';

import { AgentscmError } from '../contracts/errors.js';
import type { DockerTransport, TransportRequest, TransportResponse } from './docker-transport.js';

export interface FakeScript {
  readonly exitCode: number;
  readonly stdout?: string;
  readonly stderr?: string;
  readonly oomKilled?: boolean;
  /** How long the "command" runs before it exits (default 5 ms). */
  readonly runMs?: number;
}

export interface FakeFaults {
  /** The wait request fails as if the connection dropped (the result is lost). */
  loseWait?: boolean;
  /** DELETE answers 500 and the container stays (cleanup cannot be confirmed). */
  refuseRemove?: boolean;
  /** The container is created but the create answer is lost. */
  loseCreateAnswer?: boolean;
  /** Every request fails as if the socket were gone. */
  down?: boolean;
  /** The engine accepts requests but never reports the container stopped, and kill does nothing. */
  hangWait?: boolean;
  /** The "command" is stopped by someone else (as `docker stop` or an engine shutdown would). */
  stoppedFromOutside?: boolean;
}

interface FakeContainer {
  readonly id: string;
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly spec: Record<string, unknown>;
  status: 'created' | 'running' | 'exited';
  exitCode: number;
  oomKilled: boolean;
  stream: PassThrough | null;
  kills: string[];
  timer: NodeJS.Timeout | null;
  waiters: (() => void)[];
}

export interface FakeEngineOptions {
  readonly apiVersion?: string;
  readonly minApiVersion?: string;
  readonly images?: Readonly<Record<string, string>>;
  /** Decide the result of a container from its create body. */
  readonly script?: (spec: Record<string, unknown>) => FakeScript;
}

function frame(stream: 1 | 2, text: string): Buffer {
  const body = Buffer.from(text, 'utf8');
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

function json(status: number, value: unknown, headers: Record<string, string> = {}): TransportResponse {
  return {
    status,
    headers: { 'content-type': 'application/json', ...headers },
    body: Buffer.from(JSON.stringify(value), 'utf8'),
  };
}

function gone(): AgentscmError {
  return new AgentscmError('RUNTIME_UNAVAILABLE', 'the container engine at fake:// did not answer: connection reset', {
    hint: 'fake engine fault',
  });
}

export class FakeDockerEngine {
  readonly faults: FakeFaults = {};
  readonly calls: string[] = [];
  readonly containers = new Map<string, FakeContainer>();
  /** Every container ever created, including removed ones. */
  created = 0;
  private seq = 0;

  constructor(private readonly options: FakeEngineOptions = {}) {}

  get transport(): DockerTransport {
    return {
      describe: 'fake://engine',
      request: (request) => this.handle(request),
      attach: (path) => this.attach(path),
      close: () => Promise.resolve(),
    };
  }

  private find(idOrName: string): FakeContainer | undefined {
    const direct = this.containers.get(idOrName);
    if (direct !== undefined) return direct;
    return [...this.containers.values()].find((c) => c.name === idOrName || c.id.startsWith(idOrName));
  }

  private exit(container: FakeContainer, code: number, oom: boolean): void {
    if (container.status === 'exited') return;
    if (container.timer !== null) clearTimeout(container.timer);
    container.status = 'exited';
    container.exitCode = code;
    container.oomKilled = oom;
    container.stream?.end();
    for (const wake of container.waiters.splice(0)) wake();
  }

  private attach(path: string): Promise<Readable & { destroy(error?: Error): unknown }> {
    if (this.faults.down === true) return Promise.reject(gone());
    const id = /\/containers\/([^/]+)\/attach/.exec(path)?.[1] ?? '';
    const container = this.find(id);
    if (container === undefined)
      return Promise.reject(new AgentscmError('RUNTIME_API_ERROR', `no such container ${id}`));
    container.stream = new PassThrough();
    return Promise.resolve(container.stream);
  }

  private async handle(request: TransportRequest): Promise<TransportResponse> {
    const path = request.path.replace(/^\/v1\.[0-9]+/, '');
    this.calls.push(`${request.method} ${path}`);
    if (this.faults.down === true) throw gone();
    const [route = '', query = ''] = path.split('?');
    const params = new URLSearchParams(query);
    if (route === '/_ping')
      return { status: 200, headers: { 'api-version': this.options.apiVersion ?? '1.45' }, body: Buffer.from('OK') };
    if (route === '/version') {
      return json(200, {
        Version: '99.0.0-fake',
        ApiVersion: this.options.apiVersion ?? '1.45',
        MinAPIVersion: this.options.minApiVersion ?? '1.24',
        Os: 'linux',
        Arch: 'amd64',
        KernelVersion: 'fake',
      });
    }
    if (route === '/info')
      return json(200, {
        SecurityOptions: ['name=seccomp,profile=default'],
        CgroupVersion: '2',
        OSType: 'linux',
        Architecture: 'x86_64',
        OperatingSystem: 'fake',
      });
    const image = /^\/images\/(.+)\/json$/.exec(route);
    if (image?.[1] !== undefined) {
      const ref = decodeURIComponent(image[1]);
      const id = (this.options.images ?? {})[ref];
      return id === undefined
        ? json(404, { message: `No such image: ${ref}` })
        : json(200, { Id: id, RepoTags: [ref], Os: 'linux', Architecture: 'amd64' });
    }
    if (route === '/containers/create' && request.method === 'POST')
      return this.create(params.get('name') ?? '', request.body);
    if (route === '/containers/json') {
      const filters = JSON.parse(params.get('filters') ?? '{}') as { label?: string[] };
      const wanted = filters.label ?? [];
      const rows = [...this.containers.values()]
        .filter((c) =>
          wanted.every((l) => {
            const [k = '', v = ''] = l.split('=');
            return c.labels[k] === v;
          }),
        )
        .map((c) => ({ Id: c.id, Names: [`/${c.name}`], State: c.status, Labels: c.labels }));
      return json(200, rows);
    }
    if (route === '/events') {
      const filters = JSON.parse(params.get('filters') ?? '{}') as { container?: string[] };
      const lines = (filters.container ?? [])
        .flatMap(
          (id) =>
            this.find(id)?.kills.map((signal) =>
              JSON.stringify({ Type: 'container', Action: 'kill', Actor: { ID: id, Attributes: { signal } } }),
            ) ?? [],
        )
        .join('\n');
      return { status: 200, headers: {}, body: Buffer.from(lines) };
    }
    const m = /^\/containers\/([^/]+)(\/[a-z]+)?$/.exec(route);
    if (m?.[1] === undefined) return json(404, { message: `unknown route ${route}` });
    const container = this.find(decodeURIComponent(m[1]));
    const action = m[2] ?? '';
    if (container === undefined) return json(404, { message: `No such container: ${m[1]}` });
    switch (`${request.method} ${action}`) {
      case 'GET /json':
        return json(200, {
          Id: container.id,
          Name: `/${container.name}`,
          State: {
            Status: container.status,
            Running: container.status === 'running',
            ExitCode: container.exitCode,
            OOMKilled: container.oomKilled,
            StartedAt: '2026-01-01T00:00:00Z',
            FinishedAt: '2026-01-01T00:00:01Z',
            Error: '',
          },
          Config: { Labels: container.labels },
        });
      case 'POST /start':
        return this.start(container);
      case 'POST /wait':
        if (this.faults.hangWait === true) {
          const signal = request.signal;
          await new Promise<never>((_, reject) => {
            if (signal === undefined) return;
            if (signal.aborted) reject(signal.reason as Error);
            signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
          });
        }
        if (container.status !== 'exited') await new Promise<void>((resolve) => container.waiters.push(resolve));
        if (this.faults.loseWait === true) throw gone();
        return json(200, { StatusCode: container.exitCode, Error: null });
      case 'POST /kill':
        if (container.status !== 'running') return json(409, { message: 'container is not running' });
        if (this.faults.hangWait === true) return { status: 204, headers: {}, body: Buffer.alloc(0) };
        container.kills.push(params.get('signal') === 'KILL' ? '9' : (params.get('signal') ?? '15'));
        this.exit(container, 137, false);
        return { status: 204, headers: {}, body: Buffer.alloc(0) };
      case 'DELETE ':
        if (this.faults.refuseRemove === true)
          return json(500, { message: 'driver failed to remove root filesystem: device or resource busy' });
        this.exit(container, container.status === 'created' ? 0 : container.exitCode, container.oomKilled);
        this.containers.delete(container.id);
        return { status: 204, headers: {}, body: Buffer.alloc(0) };
      default:
        return json(404, { message: `unknown ${request.method} ${route}` });
    }
  }

  private create(name: string, body: Uint8Array | undefined): TransportResponse {
    if (this.find(name) !== undefined)
      return json(409, { message: `Conflict. The container name "/${name}" is already in use` });
    const spec = JSON.parse(Buffer.from(body ?? new Uint8Array()).toString('utf8')) as Record<string, unknown>;
    this.seq += 1;
    this.created += 1;
    const id = this.seq.toString(16).padStart(64, 'f');
    const labels = (spec.Labels ?? {}) as Record<string, string>;
    this.containers.set(id, {
      id,
      name,
      labels,
      spec,
      status: 'created',
      exitCode: 0,
      oomKilled: false,
      stream: null,
      kills: [],
      timer: null,
      waiters: [],
    });
    if (this.faults.loseCreateAnswer === true) throw gone();
    return json(201, { Id: id, Warnings: [] });
  }

  private start(container: FakeContainer): TransportResponse {
    const script = this.options.script?.(container.spec) ?? { exitCode: 0 };
    container.status = 'running';
    container.timer = setTimeout(() => {
      if (this.faults.stoppedFromOutside === true) container.kills.push('15');
      if (script.stdout !== undefined) container.stream?.write(frame(1, script.stdout));
      if (script.stderr !== undefined) container.stream?.write(frame(2, script.stderr));
      this.exit(container, script.exitCode, script.oomKilled ?? false);
    }, script.runMs ?? 5);
    return { status: 204, headers: {}, body: Buffer.alloc(0) };
  }
}
