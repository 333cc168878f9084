import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SwaggerUiFiles } from '../src/index.js';
import { load } from './config-modules.js';

/**
 * Swagger UI's files for the `apiReference` option, read from the `swagger-ui-dist` package (an
 * optional peer: `npm install swagger-ui-dist`); a missing package is named with that command.
 */
export async function swaggerUiFiles(option = 'apiReference'): Promise<SwaggerUiFiles> {
  // the package's folder, without loading its index (which evaluates the whole bundle); a name in a
  // variable, as the package has no types
  const entry = 'swagger-ui-dist/absolute-path.js';
  const module = (await load(import(entry) as Promise<{ default: () => string }>, option, 'swagger-ui-dist'));
  const folder = module.default();
  const [script, style] = await Promise.all([readFile(join(folder, 'swagger-ui-bundle.js'), 'utf8'), readFile(join(folder, 'swagger-ui.css'), 'utf8')]);
  return { script, style };
}
