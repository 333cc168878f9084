/**
 * Every key the service writes to the `KeyValueStore`, in one place. Braces mark the part Redis
 * Cluster hashes, so all keys of one session share a slot.
 */
export const kvKeys = {
  session: (id: string) => `sess:{${id}}`,
  failedLoginsOfUser: (user: string) => `fail:user:${user.toLowerCase()}`,
  failedLoginsOfAddress: (address: string) => `fail:addr:${address}`,
  oauthState: (state: string) => `oauth:state:${state}`,
  dfUuid: (dfUuid: string) => `oauth:df:${dfUuid}`,
};
