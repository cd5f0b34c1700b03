// The exercises' hints: one file per exercise (exercises/NN-name/hints.md), read by two readers.
// `./rdmalab exercise hint N` (exercises/exercise.sh) prints the next numbered item ("1. " …
// "3. " at a line's start); the exercise's page (docs/exercises/NN-name.md) shows each item in a
// `::: details` block of its own, included by VitePress as the region "<!-- #region hint-N -->" …
// "<!-- #endregion hint-N -->". Three hints, in order: the idea (no calls), the calls (no finished
// code), the code (its lines the reference solution's).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPOSITORY_ROOT = path.resolve(DOCS_DIR, '..');
const EXERCISES_DIR = path.join(REPOSITORY_ROOT, 'exercises');
export const HINT_NAMES = ['the idea', 'the calls', 'the code'];

function exercises() {
  return readdirSync(EXERCISES_DIR).filter((name) => /^\d\d-/.test(name)).sort();
}

// exercise.sh's contract: the items are the lines that start "N. ".
export function hintItems(markdown) {
  return markdown.split('\n').filter((line) => /^[0-9]\. /.test(line)).map((line) => Number(line[0]));
}

// The lines of region NAME as VitePress 1.6 includes them (`<!--@include: FILE#NAME-->`): the
// lines between the marker lines, which must stand alone on their line. null when absent.
export function markdownRegion(markdown, name) {
  const lines = markdown.split(/\r?\n/);
  const marker = /^<!-- #?((?:end)?region) ([\w*-]+) -->$/;
  let start = -1;
  for (const [index, line] of lines.entries()) {
    const match = marker.exec(line.trim());
    if (!match || match[2] !== name) continue;
    if (start < 0 && match[1] === 'region') start = index + 1;
    else if (start >= 0 && match[1] === 'endregion') return lines.slice(start, index).join('\n');
  }
  return null;
}

function codeBlocks(markdown) {
  return [...markdown.matchAll(/^ *```\w*\n([\s\S]*?)^ *```/gm)].map((match) => match[1]);
}

test('the region reader finds a region, and nothing for a missing or unclosed one', () => {
  const text = 'x\n<!-- #region a -->\n1. one\n<!-- #endregion a -->\n<!-- #region b -->\n2. two\n';
  assert.equal(markdownRegion(text, 'a'), '1. one');
  assert.equal(markdownRegion(text, 'b'), null);
  assert.equal(markdownRegion(text, 'c'), null);
  assert.deepEqual(hintItems(text), [1, 2]);
});

test('every exercise has three hints, each alone in its region, in the order idea, calls, code', () => {
  const list = exercises();
  assert.ok(list.length >= 12, `only ${list.length} exercises`);
  for (const name of list) {
    const markdown = readFileSync(path.join(EXERCISES_DIR, name, 'hints.md'), 'utf8');
    assert.deepEqual(hintItems(markdown), [1, 2, 3], `${name}: the numbered items`);
    const hints = [1, 2, 3].map((n) => markdownRegion(markdown, `hint-${n}`));
    hints.forEach((hint, i) => {
      assert.notEqual(hint, null, `${name}: no region hint-${i + 1}`);
      assert.deepEqual(hintItems(hint), [i + 1], `${name}: region hint-${i + 1} holds item ${i + 1} and no other`);
      assert.doesNotMatch(hint, /<!-- #/, `${name}: region hint-${i + 1} holds another region's marker`);
    });
    // The idea names no call; neither it nor the calls gives code away.
    assert.doesNotMatch(hints[0], /\b(ibv_|IBV_|rdma_[a-z]+\(|exercise::)/, `${name}: hint 1 (the idea) names a call`);
    assert.equal(codeBlocks(hints[0]).length + codeBlocks(hints[1]).length, 0, `${name}: a code block before hint 3`);
    // The code: lines of the reference solution (a trailing comment aside).
    const blocks = codeBlocks(hints[2]);
    assert.equal(blocks.length, 1, `${name}: hint 3 (the code) has ${blocks.length} code blocks, not 1`);
    const solution = new Set(readFileSync(path.join(EXERCISES_DIR, name, 'solution.cpp'), 'utf8').split('\n').map((line) => line.trim()));
    for (const line of blocks[0].split('\n').map((l) => l.trim()).filter(Boolean)) {
      const bare = line.replace(/\s*\/\/.*$/, '');
      assert.ok(solution.has(line) || solution.has(bare), `${name}: hint 3's line is not in solution.cpp: ${line}`);
    }
  }
});

test('every exercise page shows the three hints in blocks of their own, each included from hints.md', () => {
  for (const name of exercises()) {
    const page = readFileSync(path.join(DOCS_DIR, 'exercises', `${name}.md`), 'utf8');
    const hints = page.slice(page.indexOf('## Hints'));
    assert.ok(page.includes('## Hints'), `${name}: no "## Hints" section`);
    assert.doesNotMatch(page, /hints\.md-->/, `${name}: includes the whole hints.md`);
    const blocks = [...hints.matchAll(/^::: details (.*)\n([\s\S]*?)^:::$/gm)];
    assert.equal(blocks.length, 3, `${name}: ${blocks.length} details blocks under "## Hints"`);
    blocks.forEach(([, summary, body], i) => {
      const n = i + 1;
      assert.ok(summary.startsWith(`Hint ${n}: ${HINT_NAMES[i]}`), `${name}: block ${n} is "${summary}"`);
      if (n > 1) assert.match(summary, new RegExp(`try hint ${n - 1} first`), `${name}: block ${n} does not send the reader to hint ${n - 1} first`);
      assert.equal(body.trim(), `<!--@include: ../../exercises/${name}/hints.md#hint-${n}-->`, `${name}: block ${n} holds more or less than hint ${n}`);
    });
  }
});

test('./rdmalab exercise hint N prints one hint at a time, without the markers the site uses', () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'rdmalab-hints-'));
  try {
    mkdirSync(path.join(scratch, 'exercises'));
    cpSync(path.join(EXERCISES_DIR, 'exercise.sh'), path.join(scratch, 'exercises', 'exercise.sh'));
    for (const name of exercises()) {
      mkdirSync(path.join(scratch, 'exercises', name));
      for (const file of ['hints.md', 'solution.cpp']) cpSync(path.join(EXERCISES_DIR, name, file), path.join(scratch, 'exercises', name, file));
    }
    for (const name of exercises()) {
      const markdown = readFileSync(path.join(EXERCISES_DIR, name, 'hints.md'), 'utf8');
      for (let n = 1; n <= 4; n += 1) {
        const shown = Math.min(n, 3);
        const out = execFileSync('bash', [path.join(scratch, 'exercises', 'exercise.sh'), 'hint', name.slice(0, 2)], { encoding: 'utf8' });
        const [heading, first, ...rest] = out.split('\n');
        assert.equal(heading, `Hint ${shown} of 3 (${HINT_NAMES[shown - 1]}) for exercise ${name}:`);
        const item = markdown.split('\n').find((line) => line.startsWith(`${shown}. `));
        assert.equal(first, `   ${item.slice(3)}`, `${name}: hint ${shown} starts with its item's first line`);
        assert.doesNotMatch(out, /<!--|```/, `${name}: hint ${shown} prints a marker or a fence`);
        for (const other of [1, 2, 3].filter((k) => k !== shown)) {
          const otherFirst = markdown.split('\n').find((line) => line.startsWith(`${other}. `)).slice(3);
          assert.ok(!rest.includes(`   ${otherFirst}`), `${name}: hint ${shown} also prints hint ${other}`);
        }
        assert.ok(!out.endsWith('\n\n'), `${name}: hint ${shown} ends with a blank line`);
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
