// Unit tests of the per-call reference pages' data (docs/.vitepress/verbs.mjs): every entry is a
// call the installed headers declare, with the signature's name; every call a lesson makes has an
// entry; and the generated page names the lessons that call it.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { VERBS } from '../.vitepress/verbs.mjs';
import { lessonsCalling, verbPageMarkdown } from '../.vitepress/verb-pages.mjs';
import { REPOSITORY_ROOT, sourceFiles } from '../.vitepress/sources.mjs';

const HEADERS = ['infiniband/verbs.h', 'rdma/rdma_cma.h', 'rdma/rdma_verbs.h']
  .map((h) => path.join('/usr/include', h))
  .filter(existsSync)
  .map((file) => readFileSync(file, 'utf8'))
  .join('\n');
const declared = (name) => new RegExp(`(?<![A-Za-z0-9_])${name}\\s*\\(`).test(HEADERS);

test('every entry is a call the installed headers declare, named in its own signature', { skip: !HEADERS && 'no RDMA headers installed' }, () => {
  const names = new Set();
  for (const verb of VERBS) {
    assert.ok(!names.has(verb.name), `${verb.name} twice`);
    names.add(verb.name);
    assert.ok(declared(verb.name), `${verb.name} is not declared in verbs.h, rdma_cma.h or rdma_verbs.h`);
    assert.match(verb.signature, new RegExp(`\\b${verb.name}\\s*\\(`), `${verb.name}: signature`);
    assert.ok(verb.summary && verb.returns, `${verb.name}: summary and returns`);
    assert.ok(['libibverbs', 'librdmacm'].includes(verb.library), `${verb.name}: library`);
  }
});

test('every verbs or rdma_cm call a lesson makes has a page', { skip: !HEADERS && 'no RDMA headers installed' }, () => {
  const names = new Set(VERBS.map((verb) => verb.name));
  const missing = new Set();
  for (const entry of readdirSync(path.join(REPOSITORY_ROOT, 'lessons'), { withFileTypes: true })) {
    const file = path.join(REPOSITORY_ROOT, 'lessons', entry.name, `${entry.name}.cpp`);
    if (!entry.isDirectory() || !existsSync(file)) continue;
    const code = readFileSync(file, 'utf8').split('\n').filter((line) => !/^\s*\/\//.test(line)).join('\n');
    for (const [, name] of code.matchAll(/(?<![A-Za-z0-9_"])((?:ibv|rdma)_[a-z0-9_]+)\s*\(/g)) {
      if (!names.has(name) && declared(name)) missing.add(`${name} (${entry.name})`);
    }
  }
  assert.deepEqual([...missing], []);
});

test('a page names the lessons that call its verb, with links to their programs', () => {
  const markdown = verbPageMarkdown(VERBS.find((verb) => verb.name === 'ibv_reg_mr'));
  assert.match(markdown, /^## Where the course shows it/m);
  assert.ok(lessonsCalling('ibv_reg_mr').some((c) => c.lesson === 'hello-rdma'));
  assert.match(markdown, /\[`hello-rdma`\]\(\/source\/hello-rdma\)/);
});

test('every page links only to pages that exist: its chapter, the index, the lessons\' programs', () => {
  const slugs = new Set(sourceFiles().map((source) => source.slug));
  for (const verb of VERBS) {
    const markdown = verbPageMarkdown(verb);
    for (const [, link] of markdown.matchAll(/\]\((\/[^)#\s]*)(#[^)]*)?\)/g)) {
      if (link === '/verbs/') continue;
      const source = /^\/source\/(.+)$/.exec(link);
      if (source) assert.ok(slugs.has(source[1]), `${verb.name}: ${link} has no program page`);
      else assert.ok(existsSync(path.join(REPOSITORY_ROOT, 'docs', `${link.replace(/^\//, '') || 'index'}.md`)), `${verb.name}: ${link} is no page`);
    }
  }
});
