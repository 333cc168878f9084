import { describe, expect, it } from 'vitest';
import { createService, MemoryBlobStore } from '../../src/index.js';

describe('files options', () => {
  it('close() closes the blob store', async () => {
    let closed = 0;
    const blobs = Object.assign(new MemoryBlobStore(), { close: async () => void closed++ });
    const service = createService({ files: { blobs } });
    await service.close();
    expect(closed).toBe(1);
  });

  it('refuses a bad upload limit or class name', () => {
    expect(() => createService({ files: { maxUploadBytes: -1 } })).toThrow(/maxUploadBytes/);
    expect(() => createService({ files: { className: '1Doc' } })).toThrow(/className/);
  });
});
