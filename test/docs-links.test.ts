/**
 * The documentation's links hold: every relative link and image of README.md and docs/*.md names a
 * file of the repository, and every `#anchor` (in the same document or another) names a heading of
 * it, by GitHub's rule for heading anchors.
 */
import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { expect, test } from 'vitest';
import { DOCUMENTS, anchorsOf, headingAnchor, linksOf, readme, root } from './support/readme.js';

test('heading anchors are made as GitHub makes them', () => {
  expect(headingAnchor('`POST /v2/login`: a JWT')).toBe('post-v2login-a-jwt');
  expect(headingAnchor('Browsers on other origins (CORS)')).toBe('browsers-on-other-origins-cors');
  expect(headingAnchor('3. Secure login')).toBe('3-secure-login');
  expect([...anchorsOf('# A\n\n```sh\n# not a heading\n```\n## Errors\n### Errors\n')]).toEqual(['a', 'errors', 'errors-1']);
});

test.each(DOCUMENTS)('every relative link and anchor of %s resolves', (file) => {
  const broken: string[] = [];
  const links = linksOf(readme(file));
  for (const { target, line } of links) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // another site
    const [path, anchor] = target.split('#') as [string, string | undefined];
    const linked = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
    if (linked.startsWith('..') || !existsSync(join(root, linked))) {
      broken.push(`${file}:${line}: ${target} (no file ${linked})`);
      continue;
    }
    if (anchor !== undefined && !(linked.endsWith('.md') && anchorsOf(readme(linked)).has(anchor))) broken.push(`${file}:${line}: ${target} (no heading #${anchor} in ${linked})`);
  }
  expect(broken).toEqual([]);
});

/**
 * Files the prose names without linking them (`docs/stores.md`, "PROTOCOL.md 6.2", `examples/cluster/server.mjs`):
 * each must be a file of the repository, by its path from the root or from the guide's folder
 * (PROTOCOL.md is not: the guides cite docs/protocol.md and the guides themselves). A
 * section number after `protocol.md` must be a numbered heading of docs/protocol.md.
 */
test.each(DOCUMENTS)('every file %s names in its text exists, and every protocol.md section it cites', (file) => {
  const missing: string[] = [];
  const text = readme(file);
  const sections = new Set([...readme('docs/protocol.md').matchAll(/^#{2,3} (\d+(?:\.\d+)*)\. /gm)].map((match) => match[1]));
  text.split('\n').forEach((line, i) => {
    // link targets are the link test's; a name in prose is checked here
    const prose = line.replace(/\]\([^)]*\)/g, ']');
    // a guide (`stores.md`, `PROTOCOL.md`), or a file of the repository's own folders (`examples/cluster/server.mjs`)
    for (const match of prose.matchAll(/(?<![\w/.-])((?:[\w.-]+\/)*[\w-]+\.md|(?:examples|test|scripts|bench|adapters|stores)\/(?:[\w.-]+\/)*[\w-]+\.(?:mjs|ts|json))\b(?: (\d+(?:\.\d+)*))?/g)) {
      const [, name, section] = match as unknown as [string, string, string | undefined];
      const found = [name, join(dirname(file), name)].some((path) => existsSync(join(root, path)));
      if (!found) missing.push(`${file}:${i + 1}: ${name} (no such file in the repository)`);
      else if (section !== undefined && /(^|\/)protocol\.md$/.test(name) && !sections.has(section)) missing.push(`${file}:${i + 1}: ${name} ${section} (no such section)`);
    }
  });
  expect(missing).toEqual([]);
});

test('the README links every guide, and the guides index links every guide', () => {
  const guides = DOCUMENTS.filter((file) => file.startsWith('docs/') && file !== 'docs/README.md');
  expect(guides.length).toBeGreaterThanOrEqual(15);
  const linked = (file: string) => new Set(linksOf(readme(file)).map(({ target }) => normalize(join(dirname(file), target.split('#')[0]!))));
  const fromReadme = linked('README.md');
  const fromIndex = linked('docs/README.md');
  for (const guide of guides) {
    expect(fromReadme.has(guide), `README.md links ${guide}`).toBe(true);
    expect(fromIndex.has(guide), `docs/README.md links ${guide}`).toBe(true);
  }
});

test('the README stays short: under 300 lines', () => {
  expect(readme().split('\n').length).toBeLessThan(300);
});
