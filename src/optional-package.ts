/**
 * Loads an optional peer package (passkeys' `@simplewebauthn/server`, a store's driver, the
 * OpenTelemetry SDK, Swagger UI) for the option that needs it; a missing package is named with the
 * command that installs it. Node and Bun say `ERR_MODULE_NOT_FOUND` (`MODULE_NOT_FOUND` through
 * `require`); any other failure is thrown as it came.
 */
export async function loadOptional<T>(loading: Promise<T>, option: string, name: string, install = name): Promise<T> {
  try {
    return await loading;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') throw new Error(`${option} needs the ${name} package: npm install ${install}`);
    throw error;
  }
}
