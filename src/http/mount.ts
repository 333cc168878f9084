/** Where the service is mounted (PROTOCOL.md 1.1): a base path and an optional database alias segment. */
export interface MountOptions {
  /** Path the service is mounted at, e.g. `/api`. Default: the root. */
  basePath?: string;
  /** Optional database alias: one more path segment after the base (`/api/{alias}/v1/...`). */
  alias?: string;
}

/** Turns request paths into paths relative to the service root. */
export class Mount {
  readonly basePath: string;
  readonly alias: string | undefined;
  /** The base path and the alias segment, in order: what a request path must start with. */
  readonly #prefixes: string[];

  constructor({ basePath = '', alias }: MountOptions = {}) {
    if (alias !== undefined && (!/^[A-Za-z0-9_.-]+$/.test(alias) || ['v1', 'v2'].includes(alias))) {
      throw new Error(`mount.alias ${JSON.stringify(alias)} is not allowed (one path segment, not v1 or v2)`);
    }
    this.basePath = normalizeBase(basePath);
    this.alias = alias;
    this.#prefixes = [this.basePath, ...(alias === undefined ? [] : [`/${alias}`])].filter(Boolean);
  }

  /** The path relative to the service root, or `undefined` outside the base path or alias. */
  relativePath(pathname: string): string | undefined {
    let path = pathname;
    for (const prefix of this.#prefixes) {
      if (path !== prefix && !path.startsWith(`${prefix}/`)) return undefined;
      path = path.slice(prefix.length) || '/';
    }
    return path;
  }
}

function normalizeBase(base: string): string {
  const trimmed = base.replace(/\/+$/, '');
  if (trimmed === '') return '';
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}
