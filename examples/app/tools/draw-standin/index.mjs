// STAND-IN for the platform's design-tool package: it "compiles" a screen
// description into markup, and reports its version like the real one would.
import { readFileSync } from 'node:fs';

export const version = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).version;

export function renderScreen(screen) {
  const items = screen.widgets.map((w) => `<li class="widget widget-${w.kind}">${escape(w.label)}</li>`).join('');
  return `<section class="screen" data-draw-version="${version}"><h1>${escape(screen.title)}</h1><ul>${items}</ul></section>`;
}

function escape(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}
