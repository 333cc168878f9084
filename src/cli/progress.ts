import type { TransferProgress } from './transfer.js';

/** Where progress goes: a terminal (redrawn in place) or anything else (whole lines). */
export interface ProgressOutput {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

const number = (n: number) => Math.round(n).toLocaleString('en-US');
function size(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) (value /= 1000), unit++;
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}
function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.ceil(seconds);
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

/**
 * Reports an export's or import's progress: on a terminal a bar redrawn at most ten times a second
 * (objects, bytes, rate, time left); elsewhere (a log, a pipe) one line at each tenth of the objects.
 * `done()` ends it (the bar's line is finished).
 */
export function progressReporter(verb: string, output: ProgressOutput, now: () => number = () => performance.now()): { update(progress: TransferProgress): void; done(): void } {
  const started = now();
  let lastDraw = -Infinity;
  let lastTenth = 0;
  let drawn = false;
  let latest: TransferProgress | undefined;
  const describe = ({ objects, bytes, totalObjects }: TransferProgress) => {
    const seconds = (now() - started) / 1000;
    const rate = seconds > 0 ? objects / seconds : 0;
    const left = rate > 0 ? (totalObjects - objects) / rate : Infinity;
    return `${number(objects)}/${number(totalObjects)} objects, ${size(bytes)}, ${number(rate)} objects/s, ${objects >= totalObjects ? 'done' : `${duration(left)} left`}`;
  };
  const draw = (progress: TransferProgress) => {
    const fraction = progress.totalObjects > 0 ? Math.min(1, progress.objects / progress.totalObjects) : 1;
    const width = 20;
    const filled = Math.round(fraction * width);
    const line = `${verb} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}% ${describe(progress)}`;
    output.write(`\r${line.slice(0, Math.max(20, (output.columns || 120) - 1))}\x1b[K`);
    drawn = true;
  };
  return {
    update(progress) {
      latest = progress;
      if (output.isTTY) {
        const at = now();
        if (at - lastDraw >= 100 || progress.objects === progress.totalObjects) (lastDraw = at), draw(progress);
        return;
      }
      const tenth = progress.totalObjects > 0 ? Math.floor((progress.objects / progress.totalObjects) * 10) : 10;
      if (tenth > lastTenth) {
        lastTenth = tenth;
        output.write(`${verb}: ${tenth * 10}% (${describe(progress)})\n`);
      }
    },
    done() {
      if (output.isTTY && latest) draw(latest);
      if (drawn) output.write('\n');
    },
  };
}
