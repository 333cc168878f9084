/**
 * The documentation's shell blocks and how the readme tests run them: the documentation is README.md
 * and the guides, docs/*.md (`DOCUMENTS`); every ```sh / ```bash block in them is listed here, each
 * belongs to exactly one runner (`RUNNERS`, checked by test/readme.test.ts), and each runs as printed
 * in a fresh copy of the repository, never in the repository itself.
 *
 * The fresh copy: the files git tracks (as they are in the working tree, times kept), a copy of the
 * built dist/ and of the studio's generated module, and node_modules as hard links (`cp -al`: half a second for the whole tree; npm's own
 * `node_modules/.package-lock.json`, which `npm install` rewrites in place, is a real copy so the
 * repository's stays as it is).
 *
 * Ports: a block's printed ports (8080, 8081, 8082, 3000) are replaced, throughout the block and the
 * code that goes with it, by free ports chosen at run time, so the tests run beside each other and
 * beside whatever holds 8080 on the machine; `npm start` gets its port as `PORT`.
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { transform } from 'esbuild';
import { freePort, spawnLines, type LineProcess } from './processes.js';

export const root = new URL('../..', import.meta.url).pathname;
/** The studio built into a module (scripts/build-studio.mjs): a build output beside dist/. */
const STUDIO_MODULE = 'src/studio/assets.generated.js';

export interface Block {
  /** The document it is in, relative to the repository: `README.md`, `docs/security.md`, ... */
  file: string;
  /** The fence's language: `sh`, `bash`, `json`, `text`, ... */
  language: string;
  code: string;
  /** 1-based line of the opening fence in its document. */
  line: number;
  /** The text of the nearest heading above it. */
  section: string;
  /**
   * What the README says the block prints: the fenced block that follows with only blank lines
   * between (a json or text answer), or the inline code of a sentence right after it that starts
   * "prints `...`".
   */
  answer?: Block;
}

/** The documentation, in the order its blocks are listed: README.md, then the guides (docs/*.md) by name. */
export const DOCUMENTS: readonly string[] = ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];

/** The text of one document (`README.md` unless named). */
export const readme = (file = 'README.md'): string => readFileSync(join(root, file), 'utf8');

/** The heading lines of a text, outside fenced blocks: level, text and offset. */
export function headings(text: string): Array<{ level: number; title: string; index: number }> {
  const found: Array<{ level: number; title: string; index: number }> = [];
  let fenced = false;
  let index = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^(#{1,6}) (.*)$/.exec(line);
    if (heading) found.push({ level: heading[1]!.length, title: heading[2]!, index });
    index += line.length + 1;
  }
  return found;
}

/**
 * The text of the section headed `title` (at any level, its heading included, up to the next heading
 * of the same or a higher level): in `text` when given, else in the one document that has it.
 */
export function readmeSection(title: string, text?: string): string {
  const texts = text === undefined ? DOCUMENTS.map((file) => readme(file)) : [text];
  const sections = texts.flatMap((body) => {
    const all = headings(body);
    return all.flatMap((heading, i) => {
      if (heading.title !== title) return [];
      const next = all.slice(i + 1).find((other) => other.level <= heading.level);
      return [body.slice(heading.index, next?.index)];
    });
  });
  if (sections.length !== 1) throw new Error(`the documentation has ${sections.length} sections "${title}" (README.md, docs/*.md); expected one`);
  return sections[0]!;
}

/** The fenced code blocks of a text in one language, in order. */
export const codeBlocks = (text: string, language: string): string[] =>
  [...text.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1]!);

/** What a block says it prints: the trailing `// ...` (or other `comment`) of each `console.log` or `print` line. */
export const printedComments = (code: string, comment = '//'): string[] =>
  [...code.matchAll(new RegExp(`(?:console\\.log|print)\\(.*${comment} (.+)$`, 'gm'))].map((match) => match[1]!.trim());

/** Swaps the README examples' `'odbrest/client'` for the built package (`runCodeBlock`'s `replace`), for blocks run outside a copy. */
export const CLIENT_IMPORT: Record<string, string> = { "'odbrest/client'": JSON.stringify(new URL('../../dist/client.js', import.meta.url).href) };

/**
 * Runs a README `ts`/`js` block as an ES module of its own in `dir` (types stripped by esbuild), each
 * `replace` key swapped for its value; answers the lines it printed.
 */
export async function runCodeBlock(code: string, { dir = mkdtempSync(join(tmpdir(), 'odbrest-readme-')), replace = {} }: { dir?: string; replace?: Record<string, string> } = {}): Promise<string[]> {
  let script = code;
  for (const [from, to] of Object.entries(replace)) script = script.replaceAll(from, to);
  const { code: js } = await transform(script, { loader: 'ts', format: 'esm', target: 'node20' });
  const file = join(dir, `readme-example-${process.pid}-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, js);
  const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: dir });
  return stdout.trim().split('\n');
}

/** Every fenced block of the documentation (or of one document's `text`), in order. */
export function readmeBlocks(text?: string, file = 'README.md'): Block[] {
  if (text === undefined) return DOCUMENTS.flatMap((name) => readmeBlocks(readme(name), name));
  const blocks: Block[] = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```[ \t]*$/gm;
  let previousEnd = -1;
  for (let m = fence.exec(text); m; m = fence.exec(text)) {
    const before = text.slice(0, m.index);
    const titles = [...before.matchAll(/^#+ (.*)$/gm)];
    const block: Block = { file, language: m[1]!, code: m[2]!, line: before.split('\n').length, section: titles.at(-1)?.[1] ?? '' };
    const last = blocks.at(-1);
    if (last && previousEnd >= 0 && /^\s*$/.test(text.slice(previousEnd, m.index))) last.answer = block;
    blocks.push(block);
    previousEnd = m.index + m[0].length;
    const printed = /^\n\nprints `([^`]+)`/.exec(text.slice(previousEnd));
    if (printed) block.answer = { file, language: 'text', code: `${printed[1]}\n`, line: block.line, section: block.section };
  }
  return blocks;
}

export const isShell = (block: Block): boolean => block.language === 'sh' || block.language === 'bash';

export const shellBlocks = (text?: string): Block[] => readmeBlocks(text).filter(isShell);

/** A block that starts a process in the background (`... &`). */
const background = (block: Block) => /&\s*(#.*)?$/m.test(block.code.replace(/&&/g, ''));

/**
 * Who runs which shell block. A block nobody claims, or that two claim, fails
 * test/readme.test.ts, so a new block can't slip through.
 */
export const RUNNERS: ReadonlyArray<{ name: string; file: string; claims: (block: Block) => boolean }> = [
  // curl examples against the demo, each compared with the json or text answer printed right after it
  // (or the "prints `...`" right after it)
  {
    name: 'demo curl examples',
    file: 'test/readme.test.ts',
    claims: (block) => block.answer !== undefined && ['json', 'text'].includes(block.answer.language) && block.code.includes('http://localhost:8080') && !background(block),
  },
  { name: 'hybrid login walkthrough', file: 'test/readme.test.ts', claims: (block) => block.section === 'Walkthrough with curl' },
  // `npm test` (the block's second line) is the suite itself: test/readme-walkthroughs.test.ts checks the line is there and runs the first
  { name: 'quick start', file: 'test/readme-walkthroughs.test.ts', claims: (block) => block.section === 'Quick start' },
  { name: 'keygen', file: 'test/readme-walkthroughs.test.ts', claims: (block) => block.section === 'The server key' },
  { name: 'pinning', file: 'test/readme-walkthroughs.test.ts', claims: (block) => block.section === 'Pinning the server key' },
  { name: 'mounting', file: 'test/readme-walkthroughs.test.ts', claims: (block) => block.section === 'Mounting in an app' },
  // the README's two ways in: `npm install odbrest` is what test/pack.test.ts does with the packed tarball; `npx odbrest serve` runs in a fresh copy
  { name: 'install', file: 'test/pack.test.ts', claims: (block) => block.section === 'Two ways in' && block.code.startsWith('npm install') },
  { name: 'serve', file: 'test/readme-walkthroughs.test.ts', claims: (block) => block.section === 'Two ways in' && block.code.startsWith('npx odbrest serve') },
  { name: 'external login', file: 'test/readme-cluster-oauth.test.ts', claims: (block) => block.section === 'Trying it with curl against a local provider' },
  { name: 'several instances', file: 'test/readme-cluster-oauth.test.ts', claims: (block) => block.section === 'Running several instances' },
  { name: 'realtime', file: 'test/events/readme-events.test.ts', claims: (block) => block.section === 'Realtime' },
  { name: 'soak', file: 'test/soak.test.ts', claims: (block) => block.section === 'Soak under faults' },
];

/** The shell blocks a runner claims, in the documentation's order. */
export function claimedBy(name: string): Block[] {
  const runner = RUNNERS.find((r) => r.name === name);
  if (!runner) throw new Error(`no readme runner named ${name}`);
  return shellBlocks().filter(runner.claims);
}

/** The one shell block a runner claims; a second one would be claimed and never run, so it is an error. */
export function onlyBlock(name: string): Block {
  const blocks = claimedBy(name);
  if (blocks.length !== 1) throw new Error(`the readme runner "${name}" runs one block; the documentation has ${blocks.length}: ${blocks.map((b) => `${b.file} line ${b.line}`).join(', ')}`);
  return blocks[0]!;
}

/** A fresh copy of the repository (see the top of this file); `remove()` deletes it. */
export function freshCopy(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-readme-copy-'));
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0');
  for (const file of tracked) {
    if (file && existsSync(join(root, file))) cpSync(join(root, file), join(dir, file), { preserveTimestamps: true, recursive: true });
  }
  cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true, preserveTimestamps: true });
  // the studio's module, made by the same build (npm run build) and, like dist/, never committed
  cpSync(join(root, STUDIO_MODULE), join(dir, STUDIO_MODULE), { preserveTimestamps: true });
  // the folder itself where node_modules is a link to another checkout's (a git worktree's): `cp -al`
  // of the link would copy the link, and the copy's npm state below would be the other checkout's
  execFileSync('cp', ['-al', realpathSync(join(root, 'node_modules')), join(dir, 'node_modules')]);
  const npmState = join(dir, 'node_modules/.package-lock.json');
  if (existsSync(npmState)) {
    const text = readFileSync(npmState);
    rmSync(npmState);
    cpSync(join(root, 'node_modules/.package-lock.json'), npmState, { preserveTimestamps: true });
    if (!readFileSync(npmState).equals(text)) throw new Error('copying node_modules/.package-lock.json failed');
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** What `git status` says about the repository (compared before and after a readme test file). */
export const gitStatus = (): string => execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: root, encoding: 'utf8' });

export const PRINTED_PORTS = [8080, 8081, 8082, 3000] as const;

/** A free port for each printed port, and a function that rewrites text to use them. */
export async function portMap(): Promise<{ ports: Record<number, number>; apply(text: string): string }> {
  const ports: Record<number, number> = {};
  for (const printed of PRINTED_PORTS) ports[printed] = await freePort();
  return { ports, apply: (text) => text.replace(/\b(8080|8081|8082|3000)\b/g, (port) => String(ports[Number(port)])) };
}

/**
 * The environment a block runs in: this process's, without what the test runner or an outer npm set
 * (ODBREST_*, PORT, the variables an `npm test` gives its script naming the repository and its
 * package), with npm's network extras off; npm's own configuration (registry, cache) stays.
 */
export function blockEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(ODBREST_|npm_(package_|lifecycle_|command$|config_local_prefix$)|INIT_CWD$|VITEST|PORT$|HOST$|NODE_ENV$|REDIS_URL$|DATABASE_URL$)/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', ...extra };
}

/** A block started with bash in its own process group; `end()` ends the whole group. */
export interface BlockProcess extends LineProcess {
  /** Resolves with bash's exit code, or rejects after `ms`. */
  finished(ms: number): Promise<number | null>;
  end(): Promise<void>;
  stderr(): string;
}

export function startBlock(code: string, cwd: string, env: Record<string, string | undefined>): BlockProcess {
  const process_ = spawnLines('bash', ['-o', 'pipefail', '-c', code], env, { cwd, detached: true });
  let stderr = '';
  process_.child.stderr!.on('data', (chunk: string) => void (stderr = (stderr + chunk).slice(-8000)));
  const group = process_.child.pid!;
  const alive = () => {
    try {
      process.kill(-group, 0);
      return true;
    } catch {
      return false;
    }
  };
  return {
    ...process_,
    stderr: () => stderr,
    finished: (ms) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the block did not finish in ${ms} ms; output:\n${process_.lines.join('\n')}\nstderr: ${stderr}`)), ms);
        void process_.exited.then((code) => (clearTimeout(timer), resolve(code)));
      }),
    async end() {
      for (const [signal, wait] of [['SIGTERM', 5000], ['SIGKILL', 2000]] as const) {
        try {
          process.kill(-group, signal);
        } catch {
          return; // the group is gone
        }
        for (let waited = 0; waited < wait && alive(); waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
        if (!alive()) return;
      }
    },
  };
}

/** Every JSON envelope (`{"status":...}`) in a process's output, as printed, in order. */
export function envelopes(output: string): string[] {
  const found: string[] = [];
  let from = 0;
  for (let start = output.indexOf('{"status":', from); start >= 0; start = output.indexOf('{"status":', from)) {
    let depth = 0;
    let inString = false;
    let end = -1;
    for (let i = start; i < output.length && end < 0; i++) {
      const c = output[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth++;
      else if ((c === '}' || c === ']') && --depth === 0) end = i + 1;
    }
    if (end < 0) break;
    found.push(output.slice(start, end));
    from = end;
  }
  return found;
}

/**
 * The answers a block promises in its comments: a line `# {...}` (continued by lines `#  ...`), where
 * `...` stands for anything and a UUID for any UUID.
 */
export function promisedEnvelopes(code: string): RegExp[] {
  const answers: string[] = [];
  for (const line of code.split('\n')) {
    if (line.startsWith('# {')) answers.push(line.slice(2));
    else if (line.startsWith('#  ') && answers.length > 0) answers[answers.length - 1] += line.slice(1).trim();
  }
  return answers.map((answer) => {
    const pattern = answer
      .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\\\.\\\.\\\./g, '.*')
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}');
    return new RegExp(`^${pattern}$`);
  });
}

/** The anchor GitHub gives a heading: lower case, without punctuation or code marks, spaces as `-` (links keep their text). */
export const headingAnchor = (title: string): string =>
  title
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replaceAll(' ', '-');

/** Every anchor of a document's headings; a repeated heading gets `-1`, `-2`, ... as on GitHub. */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { title } of headings(text)) {
    const anchor = headingAnchor(title);
    const n = seen.get(anchor) ?? 0;
    seen.set(anchor, n + 1);
    anchors.add(n === 0 ? anchor : `${anchor}-${n}`);
  }
  return anchors;
}

/** The targets of a document's Markdown links and images, outside fenced blocks and code spans, with their lines. */
export function linksOf(text: string): Array<{ target: string; line: number }> {
  const links: Array<{ target: string; line: number }> = [];
  let fenced = false;
  text.split('\n').forEach((line, i) => {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced || line.startsWith('```')) return;
    for (const match of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) links.push({ target: match[1]!, line: i + 1 });
  });
  return links;
}
