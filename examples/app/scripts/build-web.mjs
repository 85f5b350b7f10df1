// build:draw — renders the screens with the design tool and writes a static
// web application into dist/web: index.html loading content-hashed JS and CSS.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { renderScreen, version } from 'draw-standin';

const out = 'dist/web';
rmSync(out, { recursive: true, force: true });
mkdirSync(`${out}/assets`, { recursive: true });

function emit(name, ext) {
  const content = readFileSync(`src/web/${name}.${ext}`);
  const hash = createHash('sha256').update(content).digest('hex').slice(0, 10);
  const file = `assets/${name}.${hash}.${ext}`;
  writeFileSync(`${out}/${file}`, content);
  return file;
}

const js = emit('app', 'js');
const css = emit('style', 'css');
const screen = renderScreen(JSON.parse(readFileSync('src/web/screen.json', 'utf8')));
const html = readFileSync('src/web/index.html', 'utf8')
  .replace('{{js}}', js).replace('{{css}}', css).replace('{{screen}}', screen);
writeFileSync(`${out}/index.html`, html);
writeFileSync(`${out}/draw-version.txt`, `${version}\n`);
console.log(`built ${out}: index.html, ${js}, ${css} (design tool ${version})`);
