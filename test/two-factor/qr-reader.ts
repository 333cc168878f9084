/** Reads the QR codes the service draws (SVG data URLs), with jsQR, a QR reader independent of the \`qr\` package that draws them. */
import jsQR from 'jsqr';
import { expect } from 'vitest';

/** Pixels per QR module in the raster the reader sees. */
const SCALE = 4;

/** Decodes the QR code in an SVG data URL: rasterizes the SVG's path, then reads it with jsQR. */
export function readQr(dataUrl: string): string | undefined {
  const prefix = 'data:image/svg+xml;base64,';
  expect(dataUrl.startsWith(prefix)).toBe(true);
  const svg = Buffer.from(dataUrl.slice(prefix.length), 'base64').toString('utf8');
  const { size, dark } = modules(svg);
  const width = size * SCALE;
  const pixels = new Uint8ClampedArray(width * width * 4).fill(255);
  for (let y = 0; y < width; y++) {
    for (let x = 0; x < width; x++) {
      if (!dark[Math.floor(y / SCALE)]![Math.floor(x / SCALE)]) continue;
      pixels.fill(0, (y * width + x) * 4, (y * width + x) * 4 + 3);
    }
  }
  return jsQR(pixels, width, width)?.data;
}

/**
 * Which modules of the SVG are dark: its path's outlines (M, H, V, h, v, Z, as the qr package
 * draws them) filled even-odd, sampled at each module's centre.
 */
function modules(svg: string): { size: number; dark: boolean[][] } {
  const viewBox = /viewBox="0 0 (\d+) (\d+)"/.exec(svg);
  expect(viewBox?.[1]).toBe(viewBox?.[2]);
  const size = Number(viewBox![1]);
  const paths = [...svg.matchAll(/<path[^>]* d="([^"]+)"/g)].map((match) => match[1]!);
  expect(paths.length).toBeGreaterThan(0);
  /** Vertical edges of every outline: x and the y range they span. */
  const edges: Array<{ x: number; y1: number; y2: number }> = [];
  for (const d of paths) {
    let x = 0;
    let y = 0;
    let startX = 0;
    let startY = 0;
    for (const [, command, args] of d.matchAll(/([MmHhVvZz])([^MmHhVvZz]*)/g)) {
      const numbers = args!.trim().split(/[\s,]+/).filter(Boolean).map(Number);
      const lineTo = (nx: number, ny: number) => {
        if (nx === x && ny !== y) edges.push({ x, y1: Math.min(y, ny), y2: Math.max(y, ny) });
        x = nx;
        y = ny;
      };
      switch (command) {
        case 'M':
        case 'm':
          x = (command === 'm' ? x : 0) + numbers[0]!;
          y = (command === 'm' ? y : 0) + numbers[1]!;
          [startX, startY] = [x, y];
          break;
        case 'H':
        case 'h':
          for (const n of numbers) lineTo(command === 'h' ? x + n : n, y);
          break;
        case 'V':
        case 'v':
          for (const n of numbers) lineTo(x, command === 'v' ? y + n : n);
          break;
        default:
          lineTo(startX, startY);
      }
    }
  }
  const dark = Array.from({ length: size }, (_, row) => {
    const centre = row + 0.5;
    const crossings = edges.filter((edge) => edge.y1 < centre && centre < edge.y2).map((edge) => edge.x);
    return Array.from({ length: size }, (_, column) => crossings.filter((x) => x > column + 0.5).length % 2 === 1);
  });
  return { size, dark };
}
