// Runs every bench/*.bench.mjs against the built package (dist/) and prints its rows.
// A bench module exports `default async function ({ opsPerSecond, rates, medianMs }) -> Array<{ name, value, unit, reference?, ratio?, target? }>`.
// Ratios compare against a reference measured in the same run; no bench asserts timing.
// `npm run bench -- --node 24 [name]` runs the same rows under Node 24 (scripts/node24.mjs fetches it on
// first use); the servers a bench starts run under the Node that runs it.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { alternatingMedians } from './common.mjs';

const args = process.argv.slice(2);
const nodeFlag = args.indexOf('--node');
if (nodeFlag >= 0) {
  const major = args[nodeFlag + 1];
  args.splice(nodeFlag, 2);
  if (process.versions.node.split('.')[0] !== major) {
    const { nodeBinary } = await import('../scripts/node24.mjs');
    const run = spawnSync(nodeBinary(Number(major)), ['--expose-gc', new URL(import.meta.url).pathname, ...args], { stdio: 'inherit' });
    process.exit(run.status ?? 1);
  }
}
console.log(`# Node ${process.version}`);
const only = args[0];
const dir = new URL('./', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.bench.mjs') && (!only || f.includes(only))).sort();

/**
 * Runs `fn` from `concurrency` loops for about `ms` milliseconds after a warm-up; returns operations
 * per wall-clock second and per second of this process's CPU time (steadier on a shared machine).
 */
export async function rates(fn, { ms = 2000, concurrency = 1, warmup = 300 } = {}) {
  const loop = async (until) => {
    let n = 0;
    while (performance.now() < until) {
      await fn();
      n++;
    }
    return n;
  };
  await Promise.all(Array.from({ length: concurrency }, () => loop(performance.now() + warmup)));
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const counts = await Promise.all(Array.from({ length: concurrency }, () => loop(start + ms)));
  const wallMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  const ops = counts.reduce((a, b) => a + b, 0);
  return { wall: (ops * 1000) / wallMs, cpu: (ops * 1e6) / (cpu.user + cpu.system) };
}

/** Operations per wall-clock second (see `rates`). */
export async function opsPerSecond(fn, options) {
  return (await rates(fn, options)).wall;
}

/** Median of `runs` timed calls, in milliseconds. */
export async function medianMs(fn, runs = 50) {
  return (await alternatingMedians([fn], runs))[0];
}

const fmt = (x) => (typeof x === 'number' ? (Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3)) : String(x ?? ''));
for (const file of files) {
  const { default: bench } = await import(new URL(file, dir));
  console.log(`\n## ${file.replace('.bench.mjs', '')}`);
  for (const row of await bench({ opsPerSecond, rates, medianMs })) {
    const parts = [`${row.name}: ${fmt(row.value)} ${row.unit}`];
    if (row.reference !== undefined) parts.push(`reference ${fmt(row.reference)} ${row.unit}`);
    if (row.ratio !== undefined) parts.push(`ratio ${fmt(row.ratio)}`);
    if (row.target !== undefined) parts.push(`target ${row.target}`);
    console.log(`- ${parts.join(' | ')}`);
  }
}
