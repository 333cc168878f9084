// Runs every bench/*.bench.mjs against the built package (dist/) and prints its rows.
// A bench module exports `default async function (helpers) -> Array<{ name, value, unit, reference?, ratio?, target? }>`.
// Ratios compare against a reference measured in the same run; no bench asserts timing.
import { readdirSync } from 'node:fs';

const only = process.argv[2];
const dir = new URL('./', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.bench.mjs') && (!only || f.includes(only))).sort();

/** Runs `fn` repeatedly for about `ms` milliseconds (after a warm-up); returns operations per second. */
export async function opsPerSecond(fn, { ms = 2000, concurrency = 1, warmup = 300 } = {}) {
  const loop = async (until) => {
    let n = 0;
    while (performance.now() < until) {
      await fn();
      n++;
    }
    return n;
  };
  await Promise.all(Array.from({ length: concurrency }, () => loop(performance.now() + warmup)));
  const start = performance.now();
  const counts = await Promise.all(Array.from({ length: concurrency }, () => loop(start + ms)));
  return (counts.reduce((a, b) => a + b, 0) * 1000) / (performance.now() - start);
}

/** Median of `runs` timed calls, in milliseconds. */
export async function medianMs(fn, runs = 50) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const fmt = (x) => (typeof x === 'number' ? (Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3)) : String(x ?? ''));
for (const file of files) {
  const { default: bench } = await import(new URL(file, dir));
  console.log(`\n## ${file.replace('.bench.mjs', '')}`);
  for (const row of await bench({ opsPerSecond, medianMs })) {
    const parts = [`${row.name}: ${fmt(row.value)} ${row.unit}`];
    if (row.reference !== undefined) parts.push(`reference ${fmt(row.reference)} ${row.unit}`);
    if (row.ratio !== undefined) parts.push(`ratio ${fmt(row.ratio)}`);
    if (row.target !== undefined) parts.push(`target ${row.target}`);
    console.log(`- ${parts.join(' | ')}`);
  }
}
