// What the compiled test files get when they import 'node:test' (scripts/compile-tests.mjs).
// Outside a batch every call goes straight to node:test. A batch (scripts/test-batches.mjs)
// loads several test files into one process: while it loads a file it records that file's
// top-level calls, then replays them inside a `describe` named after the file, so each file's
// top-level `before` and `after` hooks run around that file's own tests, as they would in a
// process of its own. Calls made while tests run (inside a describe, a hook or a test) always
// go straight to node:test.
import * as nodeTest from 'node:test';

let recording = null;

/** Records the top-level calls that follow into `calls` (an array), or stops recording (null). */
export function recordInto(calls) {
  recording = calls;
}

/** Makes each recorded call, in order, on node:test. */
export function replay(calls) {
  for (const [kind, args] of calls) nodeTest[kind](...args);
}

function forwarding(kind) {
  return (...args) => {
    if (recording) recording.push([kind, args]);
    else return nodeTest[kind](...args);
  };
}

export const test = forwarding('test');
export const it = forwarding('it');
export const describe = forwarding('describe');
export const suite = forwarding('suite');
export const before = forwarding('before');
export const after = forwarding('after');
export const beforeEach = forwarding('beforeEach');
export const afterEach = forwarding('afterEach');
export const mock = nodeTest.mock;
export const run = nodeTest.run;
export default test;
