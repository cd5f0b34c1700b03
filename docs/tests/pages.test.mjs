// Every page of the site opens with its title: nothing but a comment or front matter may come
// before the first "# " heading (a stray line there renders as text above the title, as an edit
// that prepended a table cell to DEVELOPING.md once did).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function pages() {
  const top = readdirSync(DOCS_DIR).filter((name) => name.endsWith('.md'));
  const exercises = readdirSync(path.join(DOCS_DIR, 'exercises'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join('exercises', name));
  return [...top, ...exercises];
}

// The text before the title, with a leading front matter block and HTML comments taken out.
export function textBeforeTitle(markdown) {
  let rest = markdown.replace(/^---\n[\s\S]*?\n---\n/, '');
  const title = rest.search(/^# /m);
  if (title < 0) return null;
  return rest.slice(0, title).replace(/<!--[\s\S]*?-->/g, '').trim();
}

test('the check finds text before a title, and none in a page that opens well', () => {
  assert.equal(textBeforeTitle('<!-- what it is -->\n# Title\n'), '');
  assert.equal(textBeforeTitle('---\nlayout: doc\n---\n# Title\n'), '');
  assert.equal(textBeforeTitle('stray |<!-- what it is -->\n# Title\n'), 'stray |');
  assert.equal(textBeforeTitle('no title here\n'), null);
});

test('every page opens with its title', () => {
  const list = pages();
  assert.ok(list.length >= 50, `only ${list.length} pages`);
  for (const page of list) {
    const before = textBeforeTitle(readFileSync(path.join(DOCS_DIR, page), 'utf8'));
    assert.notEqual(before, null, `${page}: no "# " title`);
    assert.equal(before, '', `${page}: text before its title`);
  }
});
