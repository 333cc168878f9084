/**
 * Runs the README's client examples as printed: a `ts` block, its types stripped (esbuild), as an
 * ES module of its own that imports the built package (dist/), with the addresses pointed at a test
 * service. What it prints is compared with the `// value` comments of its `console.log` lines.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { transform } from 'esbuild';

const root = new URL('../../', import.meta.url);

/** The text of the README's `## title` section. */
export function readmeSection(title: string): string {
  const readme = readFileSync(new URL('README.md', root), 'utf8');
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README has no section "${title}"`);
  const end = readme.indexOf('\n## ', start + 5);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The fenced code blocks of a text in one language, in order. */
export const codeBlocks = (text: string, language: string): string[] =>
  [...text.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1]!);

/** What a block says it prints: the trailing `// ...` comment of each `console.log` line. */
export const printed = (code: string): string[] => [...code.matchAll(/console\.log\(.*\/\/ (.+)$/gm)].map((match) => match[1]!.trim());

/** Runs a block with each `replace` key swapped for its value; answers the lines it printed. */
export async function runExample(code: string, replace: Record<string, string>): Promise<string[]> {
  let script = code.replaceAll("'odbrest/client'", JSON.stringify(new URL('dist/client.js', root).href));
  for (const [from, to] of Object.entries(replace)) script = script.replaceAll(from, to);
  const { code: js } = await transform(script, { loader: 'ts', format: 'esm', target: 'node20' });
  const file = join(mkdtempSync(join(tmpdir(), 'odbrest-client-example-')), 'example.mjs');
  writeFileSync(file, js);
  const { stdout } = await promisify(execFile)(process.execPath, [file]);
  return stdout.trim().split('\n');
}
