/** The store contracts of `odbrest/testing` (src/testing/), bound to vitest, as a host binds them. */
import * as vitest from 'vitest';
import { storeContracts } from '../../src/testing/index.js';

export const { objectStoreContract, keyValueStoreContract, blobStoreContract } = storeContracts(vitest);
export { realClock } from '../../src/testing/index.js';
export type * from '../../src/testing/index.js';
