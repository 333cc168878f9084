// The cost of making a service without a `kv` (issue 11): time and memory of `createService()`, each
// service kept alive while the next is made, so memory that is allocated up front would add up.
// Reference: a plain `new Map()` made the same way (the floor of "allocates nothing").
import { createService } from '../dist/index.js';
import { median } from './common.mjs';

const SERVICES = 40;

async function settle() {
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return process.memoryUsage();
}

export default async function bench() {
  if (!globalThis.gc) throw new Error('run with --expose-gc (npm run bench does)');
  createService(); // load and warm every module before measuring
  const kept = [];
  const before = await settle();
  const times = [];
  for (let i = 0; i < SERVICES; i++) {
    const started = performance.now();
    kept.push(createService());
    times.push(performance.now() - started);
  }
  const after = await settle();
  const perService = (name) => (after[name] - before[name]) / SERVICES / 2 ** 20;
  const mapTimes = [];
  for (let i = 0; i < SERVICES; i++) {
    const started = performance.now();
    kept.push(new Map());
    mapTimes.push(performance.now() - started);
  }
  return [
    { name: 'createService() without a kv, median', value: median(times), unit: 'ms', reference: median(mapTimes), target: '< 20 ms' },
    { name: 'createService() without a kv, heap per service', value: perService('heapUsed'), unit: 'MiB', target: '< 2 MiB' },
    { name: 'createService() without a kv, RSS per service', value: perService('rss'), unit: 'MiB', target: '< 2 MiB' },
    { name: 'services kept alive while measuring', value: kept.length - SERVICES, unit: 'services' },
  ];
}
