/**
 * The dashboard's read-only JSON routes (docs/dashboard.md "Routes and bounds"; issue "What an
 * operator sees"): `GET /v1/hub/ui-api/...`, authenticated with a reader grant of the profile's
 * repository. The reader grant and the profile are checked here; the views are in
 * src/hub/ui-views.ts.
 */
import { AgentscmError } from '../contracts/errors.js';
import type { LiveGrant } from '../native/grants.js';
import type { Store } from '../native/store-handle.js';
import { authorizeReader } from './auth.js';
import type { HubProfile } from './config.js';
import { answerUiRequest, checkQuery, json, type UiAnswer, type UiView } from './ui-views.js';

export const UI_API_PREFIX = '/v1/hub/ui-api';
export const UI_API_PROFILES_PATH = `${UI_API_PREFIX}/profiles`;
/** `…/repositories/{owner}/{name}/profiles/{profile}/{view}[/{id}[/bundle]]` */
export const UI_API_VIEW_ROUTE = new RegExp(
  String.raw`^/v1/hub/ui-api/repositories/([^/]+)/([^/]+)/profiles/([^/]+)/` +
    String.raw`(changes|tasks|runs|receipts|targets|registrations)(?:/([^/]+))?(?:/(bundle))?$`,
);
/** The Stores a dashboard request reads through (the worker thread owns and closes them). */
export interface UiStores {
  /** One read-only Store per configured data_dir, keyed by it: the reader grant is looked up in each. */
  readonly readers: ReadonlyMap<string, Store>;
  /** The worker's Store of a profile's data directory, kept open across requests. */
  storeOf(profile: HubProfile): Store;
}

/** The hub profiles a reader grant may view: those of the store that knew it (`reader`) and of its repository. */
export function readableProfiles(
  profiles: readonly HubProfile[],
  grant: LiveGrant,
  readers: UiStores['readers'],
  reader: Store,
): HubProfile[] {
  return profiles.filter(
    (profile) => readers.get(profile.dataDir) === reader && profile.nativeRepository === grant.repository,
  );
}

/** `GET /v1/hub/ui-api/profiles`: what the dashboard offers to open. */
export function profilesAnswer(profiles: readonly HubProfile[], query: URLSearchParams): UiAnswer {
  checkQuery(query, []);
  return json({
    profiles: profiles.map((p) => ({ repository_id: p.repositoryId, profile_id: p.profileId, target: p.target })),
  });
}

function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** True when `pathname` is one of the dashboard's JSON routes (the main thread's routing; the work is serveUiApi's). */
export function isUiApiPath(pathname: string): boolean {
  return pathname === UI_API_PROFILES_PATH || UI_API_VIEW_ROUTE.test(pathname);
}

/**
 * One dashboard JSON route, run in a hub worker thread (docs/hub.md "A busy store"): the reader
 * grant first (nothing about a store or a profile is answered before it), then the profile, then
 * the view.
 */
export function serveUiApi(
  profiles: readonly HubProfile[],
  token: string,
  request: { readonly pathname: string; readonly search: string; readonly nowMs: number },
  stores: UiStores,
): UiAnswer {
  const { pathname, search, nowMs } = request;
  const query = new URLSearchParams(search);
  const { grant, store } = authorizeReader(stores.readers, token, 'the dashboard routes');
  const readable = (of: readonly HubProfile[]): HubProfile[] => readableProfiles(of, grant, stores.readers, store);
  if (pathname === UI_API_PROFILES_PATH) return profilesAnswer(readable(profiles), query);
  const match = UI_API_VIEW_ROUTE.exec(pathname);
  const [owner, name, profileId] = [
    decodeSegment(match?.[1] ?? ''),
    decodeSegment(match?.[2] ?? ''),
    decodeSegment(match?.[3] ?? ''),
  ];
  const item = match?.[5] === undefined ? null : decodeSegment(match[5]);
  if (
    match === null ||
    owner === null ||
    name === null ||
    profileId === null ||
    (item === null && match[5] !== undefined)
  ) {
    throw new AgentscmError('HUB_ROUTE_NOT_FOUND', `no hub route GET ${pathname.slice(0, 200)}`, {
      hint: 'see docs/hub.md for the routes',
    });
  }
  const profile = profiles.find((p) => p.repositoryId === `${owner}/${name}` && p.profileId === profileId);
  // A profile of another store or repository is one this grant cannot see: not found.
  if (profile === undefined || !readable([profile]).includes(profile)) {
    throw new AgentscmError(
      'HUB_PROFILE_NOT_FOUND',
      `no profile ${profileId.slice(0, 128)} for repository ${`${owner}/${name}`.slice(0, 300)} that this reader ` +
        'grant can see',
      {
        hint: 'GET /v1/hub/ui-api/profiles lists the profiles of the grant',
      },
    );
  }
  return answerUiRequest({
    profile,
    view: match[4] as UiView,
    item,
    bundle: match[6] !== undefined,
    query,
    nowMs,
    store: stores.storeOf(profile),
  });
}
