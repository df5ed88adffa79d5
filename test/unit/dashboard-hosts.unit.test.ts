// The Host header values the dashboard answers (services/dashboard/server.ts hostsServed); the
// e2e test (test/e2e/dashboard.e2e.test.ts) sends requests with other ones.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostsServed } from '../../services/dashboard/server.js';

test('the dashboard answers its port under the loopback names, its bound address and the names allowed', () => {
  assert.deepEqual([...hostsServed('127.0.0.1', 8765)].sort(), ['127.0.0.1:8765', '[::1]:8765', 'localhost:8765']);
  assert.deepEqual([...hostsServed('::1', 9000, ['Tunnel.Example'])].sort(), ['127.0.0.1:9000', '[::1]:9000', 'localhost:9000', 'tunnel.example:9000']);
  assert.ok(hostsServed('0.0.0.0', 8765, ['box']).has('0.0.0.0:8765'));
  // port 80: a browser leaves the port out of Host
  assert.ok(hostsServed('127.0.0.1', 80).has('localhost') && hostsServed('127.0.0.1', 80).has('localhost:80'));
  assert.ok(!hostsServed('127.0.0.1', 8765).has('evil.example.com:8765'));
});
