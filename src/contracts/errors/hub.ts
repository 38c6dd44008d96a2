/**
 * The hub: HTTP, MCP, auth, workers (src/hub/).
 * The rows of docs/errors.md "hub".
 */
import { EXIT, type ErrorSection } from './exit.js';

export const HUB_ERRORS = {
  title: 'hub',
  codes: {
    HUB_CONFIG_DATA_DIR_RELATIVE: {
      exit: EXIT.INVALID,
      summary:
        'A profile of the hub execution config names a data_dir that is not an absolute path; the hub did not start.',
    },
    HUB_CONFIG_PROFILE_DUPLICATE: {
      exit: EXIT.INVALID,
      summary:
        'Two profiles of the hub execution config have the same repository_id and profile_id; the hub did not start.',
    },
    HUB_CONFIG_LISTEN_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'The listen address of the hub execution config is not HOST:PORT with an IP address and a port from 0 to ' +
        '65535; the hub did not start.',
    },
    HUB_CONFIG_FORGE_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'A profile of the hub execution config publishes forge status without a usable forge (missing forge, ' +
        'relative or unreadable or non-private token file, base URL with credentials, query or fragment) or ' +
        'names a forge without publish_forge_status; the hub did not start.',
    },
    FORGE_LINK_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'The forge link names a project or commit SHA the forge cannot have (GitHub: OWNER/NAME; GitLab: a ' +
        'project path or numeric ID; SHA: 40 or 64 lowercase hex digits); nothing was linked.',
    },
    HUB_PROFILE_UNAVAILABLE: {
      exit: EXIT.UNAVAILABLE,
      summary:
        "A profile's data_dir holds no native store, or the store has no repository native_repository; the hub " +
        'did not start. At run time: a configured store could not be read to authenticate a request (HTTP 503); ' +
        "the answer names no path, the hub's log has the reason.",
    },
    HUB_AUTH_REQUIRED: {
      exit: EXIT.INVALID,
      summary:
        'The request has no Authorization: Bearer header with one grant token (HTTP 401); nothing was read or changed.',
    },
    HUB_GRANT_SCOPE_MISMATCH: {
      exit: EXIT.INVALID,
      summary:
        "The grant's scope does not allow this endpoint: reader grants reach only the legacy /mcp endpoint and " +
        "the dashboard's read-only routes, agent grants only the task routes (HTTP 403).",
    },
    HUB_ROUTE_NOT_FOUND: { exit: EXIT.INVALID, summary: 'No hub route has this method and path (HTTP 404).' },
    HUB_PROFILE_NOT_FOUND: {
      exit: EXIT.INVALID,
      summary:
        "The repository and profile of the request are not an agent task profile of the hub's config (HTTP 404).",
    },
    HUB_BODY_TOO_LARGE: {
      exit: EXIT.INVALID,
      summary:
        "The request body is larger than the route's bound (512 KiB for JSON routes); it was refused before " +
        'being buffered (HTTP 413).',
    },
    HUB_UPLOAD_BUSY: {
      exit: EXIT.UNAVAILABLE,
      summary:
        'The hub is already reading as many collector uploads as it allows at once; nothing was read or changed; ' +
        'retry after the seconds Retry-After gives (HTTP 503).',
    },
    HUB_REQUIREMENT_CHANGED: {
      exit: EXIT.CONFLICT,
      summary:
        "The target's installed requirement is no longer the requirement_digest the profile pins; nothing was " +
        'read or changed (HTTP 409).',
    },
    HUB_QUERY_INVALID: {
      exit: EXIT.INVALID,
      summary:
        'A query parameter of a dashboard route is unknown, repeated or out of range (limit, cursor, change); ' +
        'nothing was read (HTTP 400).',
    },
  },
} as const satisfies ErrorSection;

/** The `details` of the codes of this family thrown with any (docs/errors.md "Details"). */
export interface HubErrorDetails {
  HUB_BODY_TOO_LARGE: { limit: number };
  HUB_UPLOAD_BUSY: { uploads: number; bytes: number; limit_bytes: number; limit_uploads: number };
}
