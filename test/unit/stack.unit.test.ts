// The stack's pure helpers: the dev server's dynamic config as the stack passes it (Tandem's values,
// the user's on top) and the log lines a failed start quotes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lastLines, TEMPORAL_DYNAMIC_CONFIG, temporalDynamicConfigArgs } from '../../infra/stack.js';

const values = (args: string[]) => {
  assert.ok(args.every((a, i) => (i % 2 === 0) === (a === '--dynamic-config-value')), args.join(' '));
  return Object.fromEntries(args.filter((_, i) => i % 2 === 1).map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]));
};

test("the dev server reads its transfer queue without Temporal's 20 reads a second", () => {
  assert.deepEqual(values(temporalDynamicConfigArgs()), { 'history.transferProcessorMaxPollRPS': '1000' });
  assert.deepEqual(values(temporalDynamicConfigArgs('')), TEMPORAL_DYNAMIC_CONFIG);
});

test("TANDEM_TEMPORAL_DYNAMIC_CONFIG adds values and overrides Tandem's for the same key", () => {
  const args = temporalDynamicConfigArgs('limit.historyCount.suggestContinueAsNew=20, history.transferProcessorMaxPollRPS=20');
  assert.deepEqual(values(args), { 'history.transferProcessorMaxPollRPS': '20', 'limit.historyCount.suggestContinueAsNew': '20' });
  // A value may itself hold '=' (JSON): only the first one splits.
  assert.deepEqual(values(temporalDynamicConfigArgs('a.b={"x":"y=z"}'))['a.b'], '{"x":"y=z"}');
});

test('an entry that is not key=value is refused, naming it', () => {
  for (const bad of ['history.transferProcessorMaxPollRPS', '=5', 'a.b=']) {
    assert.throws(() => temporalDynamicConfigArgs(`x.y=1,${bad}`), new RegExp(`TANDEM_TEMPORAL_DYNAMIC_CONFIG: "${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}" is not key=value`));
  }
});

test("a service's start failure quotes its log's last lines", () => {
  const log = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n');
  assert.equal(lastLines(log, 3), 'line 28\nline 29\nline 30');
  assert.equal(lastLines(`${log}\n\n`, 1), 'line 30');
  assert.equal(lastLines('only one\n'), 'only one');
  assert.equal(lastLines(''), '(nothing)');
});
