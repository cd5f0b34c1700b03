// Unit tests for docs/.vitepress/sources.mjs (the complete-program pages and
// the labels on imported code) and limits.mjs (the limits each lesson reads).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chapterImports, importAnchor, parseRegions, sourceFiles, sourcePageMarkdown, sourceSlug,
} from '../.vitepress/sources.mjs';
import { lessonLimits } from '../.vitepress/limits.mjs';

test('slugs: a lesson by its name, other files by their path', () => {
  assert.equal(sourceSlug('lessons/rdma-write/rdma-write.cpp'), 'rdma-write');
  assert.equal(sourceSlug('common/src/connection.cpp'), 'common-src-connection');
  assert.equal(importAnchor('lessons/srq/srq.cpp', 'attach-qp'), 'src-srq-attach-qp');
  assert.equal(importAnchor('lessons/srq/srq.cpp', 'attach-qp', 1), 'src-srq-attach-qp-2');
});

test('regions: parsed with their marker lines; unclosed, nested or mismatched ones refused', () => {
  const text = 'a\n  // #region one\nb\n  // #endregion one\n// #region two\n// #endregion\n';
  assert.deepEqual(parseRegions(text), [{ name: 'one', start: 2, end: 4 }, { name: 'two', start: 5, end: 6 }]);
  assert.throws(() => parseRegions('// #region x\n'), /never closed/);
  assert.throws(() => parseRegions('// #region x\n// #region y\n'), /inside region "x"/);
  assert.throws(() => parseRegions('// #region x\n// #endregion y\n'), /closes region "x"/);
  assert.throws(() => parseRegions('// #endregion\n'), /without a #region/);
});

test('a complete-program page holds every line of its file once, in order', () => {
  const source = {
    file: 'lessons/x/x.cpp',
    text: 'int a;\n// #region r\nint b;\n// #endregion r\nint c;\n',
    regions: [{ name: 'r', start: 2, end: 4, importedBy: [{ link: '/operations', text: 'Operations', anchor: 'src-x-r' }] }],
  };
  const markdown = sourcePageMarkdown(source);
  const code = [...markdown.matchAll(/```cpp\n([\s\S]*?)\n```/g)].map((m) => m[1]).join('\n');
  assert.equal(code, source.text.replace(/\n$/, ''));
  assert.match(markdown, /id="region-r">region <code>r<\/code>, lines 2–4: shown in <a href="\/operations#src-x-r">Operations<\/a>/);
});

test('every lesson has a page, and every imported region exists and links back', () => {
  const sources = sourceFiles();
  const lessons = sources.filter((source) => source.lesson);
  assert.ok(lessons.length >= 20, `${lessons.length} lessons`);
  const imports = chapterImports();
  assert.ok(imports.length >= 60, `${imports.length} imports`);
  for (const entry of imports) {
    const source = sources.find((s) => s.file === entry.file);
    assert.ok(source, `${entry.file} has a page`);
    const region = source.regions.find((r) => r.name === entry.region);
    assert.ok(region, `${entry.file}#${entry.region} exists`);
    assert.ok(region.importedBy.some((c) => c.link === entry.chapter.link), `${entry.file}#${entry.region} links back to ${entry.chapter.link}`);
  }
});

test('the limits each lesson reads: reads counted, assignments not', () => {
  const limits = Object.fromEntries(lessonLimits().map((entry) => [entry.lesson, entry]));
  assert.ok(limits.devices.own.includes('max_qp_wr'));
  assert.ok(limits.atomics.own.includes('atomic_cap'));
  assert.ok(limits['selective-signaling'].own.includes('max_cqe'));
  assert.ok(!limits.srq.own.includes('max_sge'), 'srq assigns init.attr.max_sge; it does not read the device limit');
  assert.ok(limits['rdma-write'].library.some((entry) => entry.field === 'max_qp_rd_atom' && entry.files.includes('common/src/connection.cpp')));
});
