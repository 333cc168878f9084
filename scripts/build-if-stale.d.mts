/** Whether dist/ is missing or older than a source. */
export function isStale(): boolean;
/** Builds when stale; `say` gets one line before a build starts. Throws with the build's output when it fails. */
export function buildIfStale(say?: (line: string) => void): boolean;
