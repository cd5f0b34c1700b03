// The course's structure in .vitepress/chapters.mjs: the sidebar's groups in their reading order,
// what the GPU era holds, the troubleshooting chapters right after the errors and the wire, the
// core path (with exercises 1-4, and every chapter those exercises practise), and each deep
// dive's `needs`, which name earlier chapters only.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CHAPTERS } from '../.vitepress/chapters.mjs';

const DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const links = CHAPTERS.map((c) => c.link);
const byLink = new Map(CHAPTERS.map((c) => [c.link, c]));
const inGroup = (group) => CHAPTERS.filter((c) => c.group === group).map((c) => c.link);
// The chapters a reader works through (no home page, exercises or reference pages).
const course = CHAPTERS.filter((c) => c.link !== '/' && !['Exercises', 'Reference'].includes(c.group));

test('every chapter has its page, and no link is listed twice', () => {
  for (const chapter of CHAPTERS) assert.ok(existsSync(path.join(DOCS_DIR, chapter.file)), `${chapter.file} is missing`);
  assert.equal(new Set(links).size, links.length);
});

test('the groups, in reading order, each one run of chapters', () => {
  const order = [];
  for (const chapter of CHAPTERS) {
    if (order.at(-1) === chapter.group) continue;
    assert.ok(!order.includes(chapter.group), `group "${chapter.group}" is split: ${chapter.link} comes after another group`);
    order.push(chapter.group);
  }
  assert.deepEqual(order, [
    'Introduction', 'Verbs: the objects and the connection', 'Verbs: moving data', 'Performance',
    'When it goes wrong: errors and the wire', 'Tools and troubleshooting', 'The GPU era',
    'Exercises', 'Reference',
  ]);
});

test('the GPU era holds the GPU-era subjects only; performance and the tools have their own groups', () => {
  assert.deepEqual(inGroup('The GPU era'), [
    '/gpudirect', '/gpudirect-measured', '/gpu-proxy', '/uccl', '/efa', '/collectives',
    '/allreduce-algorithms', '/nccl', '/congestion', '/dcqcn', '/many-paths', '/kv-cache',
  ]);
  assert.deepEqual(inGroup('Performance'), ['/performance', '/performance-measured']);
  assert.deepEqual(inGroup('Tools and troubleshooting'), ['/when-it-fails', '/doctor-pair', '/reproduce', '/check-your-cluster']);
});

test("rdma-doctor's chapters come right after the errors and the wire", () => {
  const wrong = inGroup('When it goes wrong: errors and the wire');
  assert.deepEqual(wrong.slice(0, 2), ['/errors', '/wire']);
  const after = links.indexOf(wrong.at(-1)) + 1;
  assert.deepEqual(links.slice(after, after + 2), ['/when-it-fails', '/doctor-pair']);
});

test('the core path: about ten chapters in reading order, and exercises 1-4', () => {
  const core = CHAPTERS.filter((c) => c.core);
  const chapters = core.filter((c) => c.group !== 'Exercises');
  assert.ok(chapters.length >= 10 && chapters.length <= 14, `${chapters.length} core chapters`);
  for (const link of ['/why-rdma', '/getting-started', '/hello-rdma', '/operations', '/completions', '/errors']) {
    assert.ok(byLink.get(link).core, `${link} is not on the core path`);
  }
  assert.ok(chapters.every((c) => !['Reference', 'The GPU era'].includes(c.group) && c.link !== '/'));
  const exercises = CHAPTERS.filter((c) => c.group === 'Exercises');
  assert.deepEqual(exercises.filter((c) => c.core).map((c) => c.link), [
    '/exercises', '/exercises/01-write', '/exercises/02-read', '/exercises/03-receives', '/exercises/04-write-imm',
  ]);
  assert.ok(core.every((c) => c.core === true), 'core is true or absent');
});

test('every chapter a core exercise practises is on the core path', () => {
  // exercises.md's table: one row per exercise, its link and the sections it practises.
  const table = readFileSync(path.join(DOCS_DIR, 'exercises.md'), 'utf8').split('\n').filter((line) => line.startsWith('|'));
  const linksIn = (line) => [...line.matchAll(/\]\((\/[a-z0-9/-]+?)\/?(?:#[^)]*)?\)/g)].map((m) => m[1]);
  const coreExercises = CHAPTERS.filter((c) => c.core && c.group === 'Exercises' && c.link !== '/exercises');
  for (const exercise of coreExercises) {
    const row = table.find((line) => linksIn(line).includes(exercise.link));
    assert.ok(row, `exercises.md has no row for ${exercise.link}`);
    const practised = linksIn(row).filter((link) => link !== exercise.link);
    assert.ok(practised.length, `${exercise.link}: its row names no section it practises`);
    for (const link of practised) assert.ok(byLink.get(link)?.core, `${exercise.link} practises ${link}, which is not core`);
  }
});

test('each deep dive names the earlier chapters it needs; core chapters need none', () => {
  for (const chapter of course) {
    if (chapter.core) {
      assert.equal(chapter.needs, undefined, `${chapter.link} is core and has needs`);
      continue;
    }
    assert.ok(Array.isArray(chapter.needs) && chapter.needs.length > 0 && chapter.needs.length <= 3, `${chapter.link}: needs 1-3 chapters`);
    assert.equal(new Set(chapter.needs).size, chapter.needs.length, `${chapter.link}: a need named twice`);
    const at = links.indexOf(chapter.link);
    for (const need of chapter.needs) {
      assert.ok(byLink.has(need), `${chapter.link} needs ${need}, which is no chapter`);
      assert.ok(links.indexOf(need) < at, `${chapter.link} needs ${need}, which comes after it`);
      assert.ok(!['Exercises', 'Reference'].includes(byLink.get(need).group), `${chapter.link} needs ${need}, not a chapter of the course`);
    }
  }
  for (const chapter of CHAPTERS.filter((c) => !course.includes(c))) {
    assert.equal(chapter.needs, undefined, `${chapter.link} is not a course chapter and has needs`);
  }
});
