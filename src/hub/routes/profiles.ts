/** The hub profile a route names: by repository and profile id, or by the segments of its path. */
import type { IncomingMessage } from 'node:http';

import { AgentscmError } from '../../contracts/errors.js';
import type { HubConfig, HubProfile } from '../config.js';
import { notFound } from './respond.js';

function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** The config's profile `profileId` of `repositoryId` (HUB_PROFILE_NOT_FOUND). */
export function profileOf(config: HubConfig, repositoryId: string, profileId: string): HubProfile {
  const profile = config.profiles.find((p) => p.repositoryId === repositoryId && p.profileId === profileId);
  if (profile === undefined) {
    throw new AgentscmError(
      'HUB_PROFILE_NOT_FOUND',
      `no agent task profile ${profileId.slice(0, 128)} for repository ${repositoryId.slice(0, 300)} on this hub`,
      {
        hint: 'use a repository and profile of the hub execution config',
      },
    );
  }
  return profile;
}

/** The profile of a route whose match holds OWNER, NAME and PROFILE as its first three groups. */
export function routeProfile(config: HubConfig, req: IncomingMessage, match: RegExpExecArray): HubProfile {
  const [owner, name, profileId] = [
    decodeSegment(match[1] ?? ''),
    decodeSegment(match[2] ?? ''),
    decodeSegment(match[3] ?? ''),
  ];
  if (owner === null || name === null || profileId === null) throw notFound(req, match[0]);
  return profileOf(config, `${owner}/${name}`, profileId);
}
