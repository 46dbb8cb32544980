// Engine errors thrown in a worker thread reach the main thread with their
// class, through structured cloning as a worker's error goes.
import { describe, expect, it } from 'vitest';
import { BadRequest, crossing, EngineUnavailable, FencedCommit, revived } from '../../engine/errors.js';

describe('errors crossing threads', () => {
  it.each([
    ['EngineUnavailable', new EngineUnavailable('Redis', 'Connection is closed', 2)],
    ['FencedCommit', new FencedCommit(3, 17, 'the lease is no longer held')],
  ])('%s comes back as itself', (_name, err) => {
    const back = revived(structuredClone(crossing(err)));
    expect(back).toBeInstanceOf(err.constructor);
    expect(back).toMatchObject({ message: err.message, status: err.status });
  });

  it('leaves any other error as it is', () => {
    const err = new BadRequest('no');
    expect(crossing(err)).toBe(err);
    expect(revived(err)).toBe(err);
  });
});
