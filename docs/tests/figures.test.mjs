// The benchmark's figures as the site shows them (bench/results/**/*.svg,
// drawn by `rdma-bench plot`): where the records behind a figure hold
// repeated runs, the figure draws their spread; on every plot the x-axis label
// and the provenance caption have rows of their own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const RESULTS = fileURLToPath(new URL('../../bench/results', import.meta.url));

function files(dir, ending) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return files(full, ending);
    return name.endsWith(ending) ? [full] : [];
  });
}

const plots = existsSync(RESULTS)
  ? files(RESULTS, '.svg').filter((file) => readFileSync(file, 'utf8').includes('>message size (bytes)<'))
  : [];

function textY(svg, predicate) {
  for (const match of svg.matchAll(/<text x="([\d.]+)" y="([\d.]+)"([^>]*)>([^<]*)<\/text>/g)) {
    if (predicate({ x: Number(match[1]), attributes: match[3], text: match[4] })) return Number(match[2]);
  }
  return null;
}

// Records with the same configuration more than once: repeated runs.
function hasRepeats(jsonFiles) {
  const seen = new Set();
  for (const file of jsonFiles) {
    const data = JSON.parse(readFileSync(file, 'utf8'));
    for (const record of Array.isArray(data) ? data : data.records ?? []) {
      const key = JSON.stringify(record.config);
      if (seen.has(key)) return true;
      seen.add(key);
    }
  }
  return false;
}

test('there are plots to check', () => {
  assert.ok(plots.length >= 10, `${plots.length} plots under bench/results`);
});

test('on every plot the x-axis label sits clear of the caption', () => {
  for (const file of plots) {
    const svg = readFileSync(file, 'utf8');
    const axis = textY(svg, ({ text }) => text === 'message size (bytes)');
    const caption = textY(svg, ({ x, attributes }) => x === 10 && /font-size="11"/.test(attributes));
    assert.ok(axis && caption, `${path.relative(RESULTS, file)}: axis label and caption found`);
    assert.ok(caption - 11 - axis >= 12, `${path.relative(RESULTS, file)}: axis label at y ${axis}, caption at ${caption}`);
  }
});

test('figures drawn from repeated runs show their spread', () => {
  let checked = 0;
  for (const file of plots) {
    const recordsDir = file.replace(/\.svg$/, '');
    const repeated = path.basename(path.dirname(file)) === 'both-runs'
      || (existsSync(recordsDir) && hasRepeats(files(recordsDir, '.json')));
    if (!repeated) continue;
    checked += 1;
    assert.match(readFileSync(file, 'utf8'), /<polygon class="spread"/, `${path.relative(RESULTS, file)} draws no band`);
  }
  assert.ok(checked >= 5, `${checked} figures from repeated runs`);
});
