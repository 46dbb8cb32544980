import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { fullCollection } from '../../engine/idle-collection.js';
import { mallocTrim } from '../../engine/malloc-trim.js';

const MB = 1024 * 1024;

function anonResident(): number {
  const line = readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith('RssAnon:'))!;
  return Number(line.split(/\s+/)[1]) * 1024;
}

describe.runIf(process.platform === 'linux')('mallocTrim', () => {
  it('gives back the free pages between live allocations, which free() keeps', async () => {
    const gc = fullCollection();
    // 64 KB buffers are malloc'ed from the heap (below the mmap threshold);
    // one in 16 stays alive, so the freed ones lie between live ones.
    const buffers = Array.from({ length: 3072 }, () => Buffer.allocUnsafeSlow(64 * 1024).fill(1));
    const kept = buffers.filter((_, i) => i % 16 === 0);
    buffers.length = 0;
    for (let i = 0; i < 3; i++) {
      gc();
      await sleep(20);
    }
    const before = anonResident();
    expect(mallocTrim()).toBe(true);
    const after = anonResident();
    expect(kept).toHaveLength(192);
    expect(before - after).toBeGreaterThan(100 * MB);
  });
});
