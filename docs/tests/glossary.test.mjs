// Unit tests of the glossary (docs/.vitepress/glossary.mjs) and of the links to it
// (docs/.vitepress/glossary-links.mjs): the data is well formed, and each term is linked at its
// first use in prose on a page, and nowhere else.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createMarkdownRenderer } from 'vitepress';
import { GLOSSARY } from '../.vitepress/glossary.mjs';
import { glossaryLinks, glossaryMarkdown, glossaryPatternSource } from '../.vitepress/glossary-links.mjs';

const DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

test('every glossary entry has an id, a term, forms, a definition and pages that exist', () => {
  assert.ok(GLOSSARY.length >= 40, `only ${GLOSSARY.length} entries`);
  const ids = new Set();
  const forms = new Map();
  for (const entry of GLOSSARY) {
    assert.match(entry.id, /^[a-z0-9-]+$/, `id of ${entry.term}`);
    assert.ok(!ids.has(entry.id), `id ${entry.id} twice`);
    ids.add(entry.id);
    assert.ok(entry.term && entry.definition && entry.definition.length > 20, `${entry.id}: term and definition`);
    assert.ok(Array.isArray(entry.forms) && entry.forms.length > 0, `${entry.id}: forms`);
    for (const form of entry.forms) {
      assert.ok(!forms.has(form), `form "${form}" in ${entry.id} and ${forms.get(form)}`);
      forms.set(form, entry.id);
    }
    for (const see of entry.see ?? []) {
      const page = see.link.replace(/#.*$/, '').replace(/^\//, '') || 'index';
      assert.ok(existsSync(path.join(DOCS_DIR, `${page}.md`)), `${entry.id}: ${see.link} is no page`);
    }
  }
});

const SAMPLE = [
  { id: 'wqe', term: 'WQE', forms: ['WQE', 'WQEs', 'work queue element'], definition: 'A work queue element, one entry in a queue.' },
  { id: 'rkey', term: 'rkey', forms: ['rkey'], definition: 'The key a remote peer presents to reach memory.' },
  { id: 'rdma-write', term: 'RDMA WRITE', forms: ['RDMA WRITE'], definition: 'A one-sided write into remote memory.' },
];

// VitePress hands out one renderer per process: the rule is added to it once.
let renderer;
async function render(markdown, relativePath = 'page.md') {
  if (!renderer) {
    renderer = await createMarkdownRenderer(DOCS_DIR);
    glossaryLinks(renderer, SAMPLE);
  }
  const md = renderer;
  // The site builds with clean URLs; this renderer adds ".html" to links: drop it.
  return md.render(markdown, { relativePath }).replaceAll('.html#', '#');
}

test('a term is linked at its first use in prose, once', async () => {
  const html = await render('A WQE is posted. Another WQE follows; the rkey is sent.\n\nThe rkey again.\n');
  assert.equal((html.match(/href="\/glossary#wqe"/g) ?? []).length, 1);
  assert.equal((html.match(/href="\/glossary#rkey"/g) ?? []).length, 1);
  assert.match(html, /A <a href="\/glossary#wqe" class="glossary-term">WQE<\/a> is posted\. Another WQE follows; the <a href="\/glossary#rkey"/);
});

test('headings, code, links and longer words are not uses', async () => {
  const html = await render('# The WQE\n\n`rkey` and [the rkey](/x) and rkeys and wc.rkey and WQE-based.\n\nNow the WQE and the rkey.\n');
  assert.doesNotMatch(html, /<h1[^>]*>[^<]*<a href="\/glossary/);
  assert.match(html, /Now the <a href="\/glossary#wqe" class="glossary-term">WQE<\/a> and the <a href="\/glossary#rkey"/);
});

test('the longest form wins, and a form ending a sentence is a use', async () => {
  const html = await render('Post an RDMA WRITE. It names an rkey.\n');
  assert.match(html, /<a href="\/glossary#rdma-write" class="glossary-term">RDMA WRITE<\/a>\./);
  assert.match(html, /<a href="\/glossary#rkey" class="glossary-term">rkey<\/a>\./);
});

test('the glossary page itself links nothing', async () => {
  const html = await render('A WQE.\n', 'glossary.md');
  assert.doesNotMatch(html, /glossary-term/);
});

test('the pattern and the page agree: each entry gets a heading with its id', () => {
  const markdown = glossaryMarkdown(SAMPLE);
  for (const entry of SAMPLE) assert.match(markdown, new RegExp(`^### .* \\{#${entry.id}\\}$`, 'm'));
  const pattern = new RegExp(glossaryPatternSource(SAMPLE), 'g');
  assert.deepEqual([...'WQEs, a WQE. xWQE WQE_x rkey.'.matchAll(pattern)].map((m) => m[1]), ['WQEs', 'WQE', 'rkey']);
});

test('a term broken across source lines is still its first use', async () => {
  const html = await render('Some memory, a work\nqueue element and then a WQE.\n');
  assert.doesNotMatch(html, /WQE<\/a>/);
  assert.match(html, /<a href="\/glossary#wqe" class="glossary-term">work queue element<\/a>/);
});
