import { describe, expect, it } from 'vitest';
import { FAILPOINTS, FAILPOINTS_ARMED, parseFailpoints, type FailpointTrigger } from '../../engine/failpoints.js';

describe('GNOCCHI_FAILPOINT', () => {
  it('is unset in the tests: no point is armed', () => {
    expect(FAILPOINTS_ARMED).toBe(false);
  });

  it.each<[string, [string, FailpointTrigger][]]>([
    ['push.appended:kill', [['push.appended', { action: { kind: 'kill' }, nth: undefined }]]],
    ['process.computed:kill@3', [['process.computed', { action: { kind: 'kill' }, nth: 3 }]]],
    ['process.computed:stall:2500', [['process.computed', { action: { kind: 'stall', ms: 2500 }, nth: undefined }]]],
    [
      'process.committed:stall:0@1, index.committed:kill',
      [
        ['process.committed', { action: { kind: 'stall', ms: 0 }, nth: 1 }],
        ['index.committed', { action: { kind: 'kill' }, nth: undefined }],
      ],
    ],
  ])('%s', (spec, triggers) => {
    expect([...parseFailpoints(spec)]).toEqual(triggers);
  });

  it.each([
    ['an unknown point', 'push.acked:kill', /"push.acked:kill" is not/],
    ['an unknown action', 'push.appended:crash', /"push.appended:crash" is not/],
    ['a stall without its duration', 'push.appended:stall', /is not/],
    ['a zeroth hit', 'push.appended:kill@0', /is not/],
    ['an empty entry', 'push.appended:kill,', /"" is not/],
    ['a point armed twice', 'push.appended:kill,push.appended:stall:10', /push.appended is armed twice/],
  ])('refuses %s', (_name, spec, message) => {
    expect(() => parseFailpoints(spec)).toThrow(message);
  });

  it('names the known points when an entry does not parse', () => {
    expect(() => parseFailpoints('push.acked:kill')).toThrow(`(${Object.keys(FAILPOINTS).join(', ')})`);
  });
});
