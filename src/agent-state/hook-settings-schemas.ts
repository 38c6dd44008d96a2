/**
 * The agent clients' own schemas for their hook settings files, copied from
 * docs/schemas/external/ (sources in its README; test/hooks/external-schemas.test.ts checks the
 * copies are exact). Data only: they are the clients', not agentscm's.
 */

/** Claude Code settings.json, the hooks part (SchemaStore claude-code-settings.json). */
export const CLAUDE_SETTINGS_HOOKS_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Claude Code settings: the hooks part',
  type: 'object',
  additionalProperties: true,
  properties: {
    hooks: {
      type: 'object',
      additionalProperties: {
        type: 'array',
        items: {
          $ref: '#/$defs/hookMatcher',
        },
      },
    },
  },
  $defs: {
    hookCommand: {
      anyOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['type', 'command'],
          properties: {
            type: {
              type: 'string',
              const: 'command',
            },
            command: {
              type: 'string',
              minLength: 1,
            },
            timeout: {
              type: 'number',
              exclusiveMinimum: 0,
            },
            async: {
              type: 'boolean',
            },
            asyncRewake: {
              type: 'boolean',
            },
            shell: {
              type: 'string',
              enum: ['bash', 'powershell'],
            },
            if: {
              type: 'string',
            },
            statusMessage: {
              type: 'string',
            },
            args: {
              type: 'array',
              items: {
                type: 'string',
              },
            },
          },
        },
        {
          type: 'object',
          required: ['type'],
          properties: {
            type: {
              enum: ['prompt', 'agent', 'http', 'mcp_tool'],
            },
          },
        },
      ],
    },
    hookMatcher: {
      type: 'object',
      additionalProperties: false,
      required: ['hooks'],
      properties: {
        matcher: {
          type: 'string',
        },
        hooks: {
          type: 'array',
          items: {
            $ref: '#/$defs/hookCommand',
          },
        },
      },
    },
  },
} as const;

/** Codex hooks.json (SchemaStore codex-hooks.json). */
export const CODEX_HOOKS_CONFIG_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://json.schemastore.org/codex-hooks.json',
  title: 'Codex hooks configuration',
  type: 'object',
  required: ['hooks'],
  additionalProperties: false,
  properties: {
    hooks: {
      type: 'object',
      minProperties: 1,
      additionalProperties: {
        $ref: '#/definitions/matcherGroups',
      },
      properties: {
        SessionStart: {
          $ref: '#/definitions/matcherGroups',
        },
        PreToolUse: {
          $ref: '#/definitions/matcherGroups',
        },
        PermissionRequest: {
          $ref: '#/definitions/matcherGroups',
        },
        PostToolUse: {
          $ref: '#/definitions/matcherGroups',
        },
        PreCompact: {
          $ref: '#/definitions/matcherGroups',
        },
        PostCompact: {
          $ref: '#/definitions/matcherGroups',
        },
        UserPromptSubmit: {
          $ref: '#/definitions/matcherGroups',
        },
        SubagentStart: {
          $ref: '#/definitions/matcherGroups',
        },
        SubagentStop: {
          $ref: '#/definitions/matcherGroups',
        },
        Stop: {
          $ref: '#/definitions/matcherGroups',
        },
      },
    },
  },
  definitions: {
    matcherGroups: {
      type: 'array',
      minItems: 1,
      items: {
        $ref: '#/definitions/matcherGroup',
      },
    },
    matcherGroup: {
      type: 'object',
      required: ['hooks'],
      additionalProperties: true,
      properties: {
        matcher: {
          type: 'string',
        },
        hooks: {
          type: 'array',
          minItems: 1,
          items: {
            $ref: '#/definitions/hookHandler',
          },
        },
      },
    },
    hookHandler: {
      anyOf: [
        {
          $ref: '#/definitions/commandHandler',
        },
        {
          $ref: '#/definitions/skippedHandler',
        },
      ],
    },
    commandHandler: {
      type: 'object',
      required: ['type', 'command'],
      additionalProperties: true,
      properties: {
        type: {
          const: 'command',
        },
        command: {
          type: 'string',
          minLength: 1,
        },
        commandWindows: {
          type: 'string',
          minLength: 1,
        },
        timeout: {
          type: 'integer',
          minimum: 0,
        },
        statusMessage: {
          type: 'string',
        },
        async: {
          type: 'boolean',
        },
      },
    },
    skippedHandler: {
      type: 'object',
      required: ['type'],
      additionalProperties: true,
      properties: {
        type: {
          type: 'string',
          enum: ['prompt', 'agent'],
        },
      },
    },
  },
} as const;
