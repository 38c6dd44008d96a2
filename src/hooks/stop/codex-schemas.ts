/**
 * Codex's own Stop hook input and output schemas (openai/codex
 * codex-rs/hooks/schema/generated/), copied from docs/schemas/external/codex-hooks/;
 * test/hooks/external-schemas.test.ts checks the copies are exact.
 */

/** What a Codex Stop hook receives on stdin. */
export const CODEX_STOP_INPUT_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  additionalProperties: false,
  definitions: {
    NullableString: {
      type: ['string', 'null'],
    },
  },
  properties: {
    cwd: {
      type: 'string',
    },
    hook_event_name: {
      const: 'Stop',
      type: 'string',
    },
    last_assistant_message: {
      $ref: '#/definitions/NullableString',
    },
    model: {
      type: 'string',
    },
    permission_mode: {
      enum: ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'],
      type: 'string',
    },
    session_id: {
      type: 'string',
    },
    stop_hook_active: {
      type: 'boolean',
    },
    transcript_path: {
      $ref: '#/definitions/NullableString',
    },
    turn_id: {
      type: 'string',
    },
  },
  required: [
    'cwd',
    'hook_event_name',
    'last_assistant_message',
    'model',
    'permission_mode',
    'session_id',
    'stop_hook_active',
    'transcript_path',
    'turn_id',
  ],
  title: 'stop.command.input',
  type: 'object',
} as const;

/** What a Codex Stop hook may print on stdout. */
export const CODEX_STOP_OUTPUT_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  additionalProperties: false,
  allOf: [
    {
      if: {
        properties: {
          decision: {
            const: 'block',
          },
        },
        required: ['decision'],
      },
      then: {
        properties: {
          reason: {
            pattern: '.*\\S.*',
            type: 'string',
          },
        },
        required: ['reason'],
      },
    },
  ],
  definitions: {
    BlockDecisionWire: {
      enum: ['block'],
      type: 'string',
    },
  },
  properties: {
    continue: {
      default: true,
      type: 'boolean',
    },
    decision: {
      anyOf: [
        {
          $ref: '#/definitions/BlockDecisionWire',
        },
        {
          type: 'null',
        },
      ],
      default: null,
    },
    reason: {
      default: null,
      description:
        'Claude requires `reason` when `decision` is `block`; we enforce that semantic rule during output parsing ' +
        'rather than in the JSON schema.',
      type: ['string', 'null'],
    },
    stopReason: {
      default: null,
      type: ['string', 'null'],
    },
    suppressOutput: {
      default: false,
      type: 'boolean',
    },
    systemMessage: {
      default: null,
      type: ['string', 'null'],
    },
  },
  title: 'stop.command.output',
  type: 'object',
} as const;
