// Every text colour of both themes meets WCAG AA (4.5:1) on the backgrounds text sits on: the
// panel (figures, cards' tables), the page and the card background. Canvas text takes its colours
// from the same variables (draw/canvas-kit.js theme()), so chart axes are covered too.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const css = readFileSync(new URL('../../web/style.css', import.meta.url), 'utf8');

function vars(block) {
  const out = {};
  for (const m of block.matchAll(/--([\w-]+):\s*(#[0-9a-fA-F]{6})/g)) out[m[1]] = m[2];
  return out;
}
const light = vars(css.match(/:root \{([^}]*)\}/)[1]);
const dark = { ...light, ...vars(css.match(/:root\[data-theme="dark"\] \{([^}]*)\}/)[1]) };

function luminance(hex) {
  const c = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
    .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}
const ratio = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };

const TEXT = ['ink', 'muted', 'accent', 'alt', 'good', 'bad'];
const GROUNDS = ['panel', 'bg'];

for (const [name, theme] of [['light', light], ['dark', dark]]) {
  test(`${name} theme: every text colour is AA on its backgrounds`, () => {
    for (const fg of TEXT) {
      for (const bg of GROUNDS) {
        assert.ok(theme[fg] && theme[bg], `--${fg} / --${bg} declared`);
        const r = ratio(theme[fg], theme[bg]);
        assert.ok(r >= 4.5, `${name}: --${fg} ${theme[fg]} on --${bg} ${theme[bg]} is ${r.toFixed(2)}:1`);
      }
    }
  });
}
