// The /metrics HTTP endpoint of a worker, for Prometheus to scrape.
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

/** Serves `registry` at http://127.0.0.1:<port>/metrics; resolves once listening. */
export function serveMetrics(port: number, registry: Registry, host = '127.0.0.1'): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', (err) => reject(new Error(`metrics endpoint on ${host}:${port}: ${err.message}`)));
    server.listen(port, host, () => resolve(server));
  });
}
