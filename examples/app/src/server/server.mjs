// The example backend: a Node.js HTTP service with a health endpoint.
import { createServer } from 'node:http';

const port = Number(process.env.PORT ?? 3000);
const startedAt = new Date().toISOString();

export const server = createServer((req, res) => {
  const send = (status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method === 'GET' && (req.url === '/health' || req.url === '/api/health')) {
    return send(200, { status: 'ok', startedAt });
  }
  if (req.method === 'GET' && req.url === '/api/orders') {
    return send(200, [{ id: 1, state: 'open' }]);
  }
  return send(404, { error: 'not found' });
});

server.listen(port, () => console.log(`backend listening on ${port}`));
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
