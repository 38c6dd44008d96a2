/**
 * Flags of the commands that build a command collector profile for a step of the target's
 * installed requirement (`agent-task collector add`, `agent-task profile create`): where the step
 * is, and the docker executable and socket whose runtime identity the profile pins.
 */
import { Flags } from '@oclif/core';

/** `--target` and `--repository`: the requirement that has the step. */
export const requirementStepFlags = {
  target: Flags.string({
    description: 'Protected target whose installed requirement has the step.',
    default: 'main',
    helpValue: 'NAME',
  }),
  repository: Flags.string({
    description: 'Repository ID or name (default: the only repository of the store).',
    helpValue: 'ID_OR_NAME',
  }),
};

/** `--docker` and `--docker-socket`: the runtime identity observed on the recipe's image. */
export const runtimeIdentityFlags = {
  docker: Flags.string({
    description: 'The docker executable hashed into the runtime identity, never run (default: docker on PATH).',
    helpValue: 'PATH',
  }),
  'docker-socket': Flags.string({
    description: 'Unix socket of the Docker Engine API (default: /var/run/docker.sock).',
    helpValue: 'PATH',
  }),
};
