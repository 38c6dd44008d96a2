/**
 * The require_capability action (spec: "require_capability records an operation the profile
 * cannot perform"). This profile performs source_paths and command through their own actions
 * and nothing else, so its capability list is empty: every named capability is unavailable.
 * A required one blocks the run; an optional one is an omission, never a success.
 */

/** Capabilities this profile can perform through require_capability: none (docs/skill-workflows.md). */
export const PROFILE_CAPABILITIES: readonly string[] = [];

export interface CapabilityObservation {
  readonly capability: string;
  readonly available: boolean;
}

/** Assess one require_capability step; no I/O and no side effect. */
export function assessCapability(capability: string): CapabilityObservation {
  return { capability, available: PROFILE_CAPABILITIES.includes(capability) };
}
