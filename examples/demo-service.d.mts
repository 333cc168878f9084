import type { Service } from 'odbrest';

/** Types for demo-service.mjs (the examples are plain JavaScript so Node, Bun and Deno run them as is). */
export function createDemoService(env: Record<string, string | undefined>, mount?: { basePath?: string }): Service;
export function listeningLine(kind: string, url: string): string;
