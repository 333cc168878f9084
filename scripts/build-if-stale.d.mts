/** Whether dist/ is missing, older than a source, or (with `types`) without its declaration files. */
export function isStale(types?: boolean): boolean;
/** Builds when stale, with the declaration files unless `types` is false. Throws with the build's output when it fails. */
export function buildIfStale(options?: { types?: boolean; say?: (line: string) => void }): boolean;
