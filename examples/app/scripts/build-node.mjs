// build:node — writes the backend into dist/node, runnable with `node server.mjs`.
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';

const out = 'dist/node';
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
cpSync('src/server', out, { recursive: true });
writeFileSync(`${out}/package.json`, JSON.stringify({
  name: 'lowcode-example-backend',
  private: true,
  type: 'module',
  main: 'server.mjs',
  scripts: { start: 'node server.mjs' },
}, null, 2) + '\n');
console.log(`built ${out}: server.mjs`);
