/**
 * Where `trackClientAddress` (Node only) leaves the address for `createRouteHandlers` (any runtime):
 * an AsyncLocalStorage on `globalThis`, because Next bundles instrumentation and routes separately,
 * so module-level state is not shared between them.
 */
export const CLIENT_ADDRESS_KEY = Symbol.for('odbrest.next.clientAddress');

export interface ClientAddressStore {
  getStore(): string | undefined;
}
