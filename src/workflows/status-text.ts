/** Human-readable lines for run views and plan reports (the --json form is the view itself). */
import type { PlanReport } from './plan-report.js';
import type { RunView } from './status.js';

const MARK: Record<string, string> = {
  succeeded: 'ok  ',
  failed: 'FAIL',
  unavailable: 'n/a ',
  uncertain: '??  ',
  skipped: 'skip',
  pending: '..  ',
  running: 'run ',
  not_run: '--  ',
};

function reasonOf(result: unknown): string {
  if (typeof result !== 'object' || result === null) return '';
  const reason =
    (result as { reason?: unknown; summary?: unknown }).reason ?? (result as { summary?: unknown }).summary;
  return typeof reason === 'string' ? ` — ${reason}` : '';
}

/** A word as a POSIX shell reads it back: unchanged when safe, else single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

export interface RunLineOptions {
  /**
   * The data directory the run lives in: with it, a command step that did not succeed gets the
   * command that shows its output.
   */
  readonly dataDir?: string;
}

export function formatRunLines(view: RunView, options: RunLineOptions = {}): string[] {
  const lines = [
    `run ${view.run_id} (${view.name}): ${view.state}${view.state_reason === null ? '' : ` — ${view.state_reason}`}`,
  ];
  lines.push(`  plan ${view.plan_digest}  skill ${view.skill_digest}`);
  const noLongerCurrent = view.source_current === false ? ' — no longer current' : '';
  lines.push(
    `  source ${view.source.repository} @ ${view.source.revision} ` +
      `(policy epoch ${view.source.policy_epoch})${noLongerCurrent}`,
  );
  if (view.controller.active)
    lines.push(
      `  another controller is active (${view.controller.operation ?? 'unknown'}, pid ${view.controller.pid ?? '?'})`,
    );
  for (const step of view.steps) {
    const execution = step.execution === null ? '' : ` [attempt ${step.execution.attempt_id} ${step.execution.state}]`;
    const optional = step.required ? '' : ', optional';
    lines.push(
      `  ${MARK[step.state] ?? step.state} ${step.id} (${step.kind}${optional})${reasonOf(step.result)}${execution}`,
    );
    if (step.execution !== null && step.state !== 'succeeded' && options.dataDir !== undefined) {
      lines.push(
        `       its output: agentscm --data-dir ${shellWord(options.dataDir)} ` +
          `check-command-show ${step.execution.attempt_id}`,
      );
    }
    const tail = step.execution?.output_tail ?? null;
    for (const name of ['stdout', 'stderr'] as const) {
      if (tail === null || tail[name] === '') continue;
      const cut = step.execution?.output_tail_cut?.[name] ?? tail.truncated;
      lines.push(`       ${name}, last lines${cut ? ' (earlier output left out)' : ''}:`);
      for (const line of tail[name].split('\n')) lines.push(`         | ${line}`);
    }
  }
  lines.push('  admission: not_assessed (a run is an observation, never an approval)');
  return lines;
}

export function formatPlanLines(report: PlanReport): string[] {
  const lines = [
    `plan ${report.plan_digest}`,
    `skill ${report.skill_digest}`,
    `workflow ${report.name} on ${report.source.repository} @ ${report.source.revision} ` +
      `(policy epoch ${report.source.policy_epoch})`,
  ];
  for (const step of report.steps) {
    const optional = step.required ? '' : ', optional';
    const after = step.needs.length > 0 ? ` after ${step.needs.join(', ')}` : '';
    lines.push(`  ${step.position + 1}. ${step.id} (${step.kind}${optional})${after}`);
  }
  return lines;
}
