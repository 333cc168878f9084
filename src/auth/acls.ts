import * as v from 'valibot';
import type { FieldValue, StoredObject } from '../storage/types.js';
import { readLicences } from './seats.js';
import { TwoFactor } from './two-factor.js';
import { Acls } from '../openapi/schemas.js';


/** One element of a login answer's `acls`. */
export type AclEntry = v.InferOutput<typeof Acls>['~Elements'][number];

/** The login body's `device.deviceId` when it is a string (the member is optional and otherwise ignored). */
export function deviceIdOf(login: unknown): string | null {
  if (typeof login !== 'object' || login === null) return null;
  const device = (login as { device?: unknown }).device;
  if (typeof device !== 'object' || device === null) return null;
  const id = (device as { deviceId?: unknown }).deviceId;
  return typeof id === 'string' ? id : null;
}

/** A licence entry's own settings (`{app, parallel?, addOns?, level?}`), when the entry is an object. */
function licenceEntry(licences: FieldValue | undefined, app: string): Record<string, FieldValue> | undefined {
  if (!Array.isArray(licences)) return undefined;
  for (const entry of licences) {
    if (typeof entry === 'object' && entry !== null && !Array.isArray(entry) && entry.app === app) return entry;
  }
  return undefined;
}

/**
 * `acls`: one entry per application the session holds. `Oid` names the licence (the principal and the
 * application), `LicenseKey` is the application's name (never a secret), `ParallelConnections` the
 * seat count (0: unlimited); add-ons and a level come from the licence entry when the host gives them
 * (`{"app": "shop", "parallel": 2, "addOns": ["x"], "level": "pro"}`).
 */
export function loginAcls(principal: StoredObject, userName: string, appNames: readonly string[], deviceId: string | null): v.InferOutput<typeof Acls> {
  const held = readLicences(principal.fields._licences);
  const twoFactor = TwoFactor.describe(principal);
  const elements = appNames.map((app): AclEntry => {
    const entry = licenceEntry(principal.fields._licences, app);
    const addOns = Array.isArray(entry?.addOns) ? entry.addOns.filter((name): name is string => typeof name === 'string') : [];
    return {
      Oid: `${principal.id}:${app}`,
      Status: 0,
      UserName: userName,
      DeviceID: deviceId,
      LicenseKey: app,
      LicenseLevel: typeof entry?.level === 'string' ? entry.level : null,
      ParallelConnections: held.get(app) ?? 0,
      TFAActivated: twoFactor.isActivated,
      TFAConfirmed: twoFactor.isConfirmed,
      Application: app,
      AddOns: { '~Count': addOns.length, '~Elements': addOns },
    };
  });
  return { '~Count': elements.length, '~Elements': elements };
}
