/**
 * Hub benchmark (docs/hub.md): 32 concurrent clients, each with its own agent grant, run
 * claim → heartbeat → result on their own tasks over loopback HTTP against `agentscm hub serve`
 * (a child process, so that its peak RSS is its own), and the same cycles run through the
 * in-process facade with the same grant guard, in the same run. Prints both rates, the ratio
 * (target ≥ 0.6), p50/p99 latency of the HTTP requests and cycles, and the hub's peak RSS.
 *
 * Each store holds a requirement of 32 command steps; a round gives every client one task, and a
 * new Change version (untimed) gives 32 fresh tasks for the next round, listed (untimed) through
 * each side's own path — the hub over HTTP — so that each side derives the new subject outside
 * its timed cycles. AGENTSCM_BENCH_HUB_NODE_ARGS passes node options to the hub process only. AGENTSCM_BENCH_HUB_ROUNDS
 * sets the number of timed rounds (default 20), AGENTSCM_BENCH_HUB_WARMUP the untimed ones
 * (default 3). The hub runs from the built CLI (`npm run bench` builds first), or from the sources
 * through tsx with AGENTSCM_BENCH_HUB_CLI=sources or when there is no build. It also prints the
 * hub's CPU time per cycle beside the in-process side's (less sensitive to a loaded machine than
 * the rates) and ends with one JSON summary line.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';

import { encodeCanonicalText } from '../src/contracts/json/canonical-json.js';
import type { JsonObject, JsonValue } from '../src/contracts/json/json-value.js';
import { BUILT_BIN, DEV_BIN, REPO_ROOT, TSX_LOADER } from '../test/helpers/cli.js';
import { subjectOf, tasksPath, writeConfigFile, type TestGrant } from '../test/support/hub.js';
import {
  assertionRequest,
  claimedOf,
  claimRequest,
  mutationRequest,
  type TaskRef,
} from '../test/support/task-requests.js';
import { checkpoint } from '../test/support/tasks.js';
import { CLIENTS, facadeCycle, freshTasks, makeSide, percentile, type Side } from './_hub-cycle.js';

const ROUNDS = Number(process.env.AGENTSCM_BENCH_HUB_ROUNDS ?? 20);
const WARMUP = Number(process.env.AGENTSCM_BENCH_HUB_WARMUP ?? 3);

/**
 * The same list for the HTTP side, asked of the hub over HTTP (untimed): the hub derives the new
 * subject's tasks in its own process, as freshTasks does for the in-process side, so neither
 * side's timed cycles include the derivation that follows a checkpoint.
 */
async function freshTasksOverHttp(pool: Pool, side: Side, token: string): Promise<TaskRef[]> {
  const answer = await post(
    pool,
    token,
    encodeCanonicalText({ operation: 'requirements', input: null, subject: subjectOf(side.hub) }),
  );
  if (answer.status !== 200) throw new Error(`requirements: ${answer.status} ${JSON.stringify(answer.json)}`);
  return ((answer.json.result as JsonObject).tasks as JsonObject[]).map((row) => ({
    task_id: row.task_id as string,
    task_digest: row.task_digest as string,
  }));
}

/** One POST on the pool's keep-alive connections (undici: a cheap client keeps the measurement about the hub). */
async function post(pool: Pool, token: string, body: string): Promise<{ status: number; json: JsonObject }> {
  const res = await pool.request({
    path: tasksPath(),
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  });
  return { status: res.statusCode, json: (await res.body.json()) as JsonObject };
}

async function httpCycle(
  pool: Pool,
  side: Side,
  grant: TestGrant,
  task: TaskRef,
  n: number,
  requestMs: number[],
): Promise<void> {
  const send = async (operation: string, input: JsonValue, subject?: JsonValue): Promise<JsonObject> => {
    const body = encodeCanonicalText({ operation, input, ...(subject === undefined ? {} : { subject }) });
    const start = performance.now();
    const answer = await post(pool, grant.token, body);
    requestMs.push(performance.now() - start);
    if (answer.status !== 200) throw new Error(`${operation}: ${answer.status} ${JSON.stringify(answer.json)}`);
    return answer.json.result as JsonObject;
  };
  const claimed = claimedOf(
    await send('claim', claimRequest(grant.actor, task, `c-${n}`, `op-${n}`), subjectOf(side.hub)),
  );
  await send('heartbeat', mutationRequest(grant.actor, claimed, 'heartbeat', `h-${n}`));
  await send('result', assertionRequest(grant.actor, claimed, `r-${n}`, 'failed'));
}

/**
 * The hub runs from the built CLI (`npm run bench` builds first), as a user runs it; from the
 * TypeScript sources through tsx when there is no build or AGENTSCM_BENCH_HUB_CLI=sources.
 */
function hubCommand(): { args: string[]; from: string } {
  const sources =
    process.env.AGENTSCM_BENCH_HUB_CLI === 'sources' ||
    !existsSync(join(REPO_ROOT, 'dist', 'commands', 'hub', 'serve.js'));
  return sources
    ? { args: ['--import', TSX_LOADER, DEV_BIN], from: 'the TypeScript sources (tsx)' }
    : { args: [BUILT_BIN], from: 'the built CLI (bin/run.js)' };
}

async function startHubProcess(
  side: Side,
  logPath: string,
): Promise<{ url: string; pid: number; from: string; stop: () => Promise<void> }> {
  const { args, from } = hubCommand();
  // The access log goes to a file, as a supervised hub's stderr does (its cost is part of a request).
  const accessLog = openSync(logPath, 'w');
  // AGENTSCM_BENCH_HUB_NODE_ARGS: extra node options for the hub process only (a profiler, say).
  const nodeArgs = (process.env.AGENTSCM_BENCH_HUB_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
  const child = spawn(
    process.execPath,
    [...nodeArgs, ...args, 'hub', 'serve', '--config', writeConfigFile(side.hub), '--json'],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', accessLog] },
  );
  closeSync(accessLog);
  const stdout = child.stdout;
  if (stdout === null) throw new Error('the hub has no stdout pipe');
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const end = out.indexOf('\n');
      if (end >= 0) resolve(out.slice(0, end));
    });
    child.on('exit', (code) => reject(new Error(`hub exited ${String(code)}`)));
  });
  const { url } = JSON.parse(line) as { url: string };
  const pid = child.pid ?? 0;
  return {
    url,
    pid,
    from,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** User + system CPU time of a process so far, in ms (Linux /proc; null elsewhere). */
function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** USER_HZ of Linux /proc times (100 on every mainstream kernel build). */
const CLOCK_TICKS = 100;

/** VmHWM of a process in bytes (Linux), or null. */
function peakRss(pid: number): number | null {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] === undefined ? null : Number(match[1]) * 1024;
  } catch {
    return null;
  }
}

export async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agentscm-bench-hub-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  try {
    const viaHttp = makeSide();
    const inProcess = makeSide();
    const logPath = join(dir, 'access.log');
    const hub = await startHubProcess(viaHttp, logPath);
    const pool = new Pool(hub.url, { connections: CLIENTS, pipelining: 1 });
    let n = 0;
    let httpMs = 0;
    let facadeMs = 0;
    let timedCycles = 0;
    let hubCpuMs = 0;
    let facadeCpuMs = 0;
    let clientCpuMs = 0;
    const requestMs: number[] = [];
    const cycleMs: number[] = [];
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      const timed = round >= WARMUP;
      if (round > 0) {
        checkpoint(viaHttp.hub.store, viaHttp.hub.store.revision);
        checkpoint(inProcess.hub.store, inProcess.hub.store.revision);
      }
      const httpTasks = await freshTasksOverHttp(pool, viaHttp, viaHttp.grants[0]?.token ?? '');
      const localTasks = freshTasks(inProcess, inProcess.grants[0]?.token ?? '');
      const roundRequests: number[] = [];
      const cpuBefore = cpuMs(hub.pid);
      const clientCpu = process.cpuUsage();
      let start = performance.now();
      await Promise.all(
        viaHttp.grants.map(async (grant, i) => {
          const begun = performance.now();
          await httpCycle(pool, viaHttp, grant, httpTasks[i] as TaskRef, (n += 1), roundRequests);
          if (timed) cycleMs.push(performance.now() - begun);
        }),
      );
      const httpRound = performance.now() - start;
      const cpuAfter = cpuMs(hub.pid);
      const clientCpuUsed = process.cpuUsage(clientCpu);
      const ownCpu = process.cpuUsage();
      start = performance.now();
      inProcess.grants.forEach((grant, i) => facadeCycle(inProcess, grant, localTasks[i] as TaskRef, (n += 1)));
      const facadeRound = performance.now() - start;
      const ownCpuUsed = process.cpuUsage(ownCpu);
      if (timed) {
        httpMs += httpRound;
        facadeMs += facadeRound;
        timedCycles += CLIENTS;
        hubCpuMs += cpuBefore === null || cpuAfter === null ? Number.NaN : cpuAfter - cpuBefore;
        facadeCpuMs += (ownCpuUsed.user + ownCpuUsed.system) / 1000;
        clientCpuMs += (clientCpuUsed.user + clientCpuUsed.system) / 1000;
        requestMs.push(...roundRequests);
      }
    }
    await pool.close();
    viaHttp.connections.close();
    inProcess.connections.close();
    const rss = peakRss(hub.pid);
    await hub.stop();
    // Every request has its access-log line: 3 per cycle and one task list per round.
    const expected = (3 * CLIENTS + 1) * (WARMUP + ROUNDS);
    const logged = readFileSync(logPath, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"route":"agent-tasks"')).length;
    if (logged !== expected) throw new Error(`the access log has ${logged} agent-tasks lines, not ${expected}`);
    const httpRate = timedCycles / (httpMs / 1000);
    const facadeRate = timedCycles / (facadeMs / 1000);
    const ratio = httpRate / facadeRate;
    requestMs.sort((a, b) => a - b);
    cycleMs.sort((a, b) => a - b);
    const f = (x: number): string => x.toFixed(1);
    process.stdout.write(
      `hub runs from ${hub.from}; load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}\n`,
    );
    process.stdout.write(
      `cycles: ${timedCycles} (${CLIENTS} concurrent clients x ${ROUNDS} rounds, claim -> heartbeat -> result)\n`,
    );
    process.stdout.write(`hub over loopback HTTP:  ${f(httpRate)} cycles/s\n`);
    process.stdout.write(
      `in-process facade:       ${f(facadeRate)} cycles/s (same grant guard per operation, connections kept open as the hub does)\n`,
    );
    process.stdout.write(`ratio: ${ratio.toFixed(2)} (target >= 0.6) ${ratio >= 0.6 ? 'ok' : 'BELOW TARGET'}\n`);
    process.stdout.write(
      `HTTP request latency: p50 ${f(percentile(requestMs, 50))} ms, p99 ${f(percentile(requestMs, 99))} ms\n`,
    );
    process.stdout.write(
      `cycle latency under 32 clients: p50 ${f(percentile(cycleMs, 50))} ms, p99 ${f(percentile(cycleMs, 99))} ms\n`,
    );
    process.stdout.write(
      `CPU time per cycle: hub ${Number.isNaN(hubCpuMs) ? 'unavailable' : `${(hubCpuMs / timedCycles).toFixed(2)} ms`}, in-process facade ${(facadeCpuMs / timedCycles).toFixed(2)} ms, the 32 HTTP clients ${(clientCpuMs / timedCycles).toFixed(2)} ms (less sensitive to load than the rates)\n`,
    );
    process.stdout.write(`hub peak RSS: ${rss === null ? 'unavailable' : `${(rss / 1024 / 1024).toFixed(1)} MiB`}\n`);
    const r = (x: number, digits = 1): number => Number(x.toFixed(digits));
    const summary = {
      bench: 'hub',
      entry: hub.from.includes('built') ? 'built' : 'sources',
      clients: CLIENTS,
      rounds: ROUNDS,
      cycles: timedCycles,
      http_cycles_per_s: r(httpRate),
      in_process_cycles_per_s: r(facadeRate),
      ratio: r(ratio, 2),
      ratio_target: 0.6,
      request_p50_ms: r(percentile(requestMs, 50)),
      request_p99_ms: r(percentile(requestMs, 99)),
      cycle_p50_ms: r(percentile(cycleMs, 50)),
      cycle_p99_ms: r(percentile(cycleMs, 99)),
      hub_cpu_ms_per_cycle: Number.isNaN(hubCpuMs) ? null : r(hubCpuMs / timedCycles, 2),
      in_process_cpu_ms_per_cycle: r(facadeCpuMs / timedCycles, 2),
      client_cpu_ms_per_cycle: r(clientCpuMs / timedCycles, 2),
      hub_peak_rss_mib: rss === null ? null : r(rss / 1024 / 1024),
      load_average: loadavg().map((x) => r(x, 2)),
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(dir, { recursive: true, force: true });
  }
}
