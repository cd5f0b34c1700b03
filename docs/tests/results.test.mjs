// The recorded runs in results/ (written by lab/results.sh) as the "Measured results" page reads
// them (results.data.mjs): every file parses, every row has the page's columns, the fault matrix
// and memcheck runs say when, how and where they ran, and lab/results.sh writes files the page can
// read (a whole run; rows replaced by key).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import loader, { numberMachines, parseResults, survived } from '../results.data.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const results = path.join(repo, 'results');

test('every results file parses, with rows whose cells match its columns', () => {
  const data = loader.load();
  for (const key of ['timings', 'faults', 'valgrind', 'fuzz']) {
    assert.ok(data[key].rows.length > 0, `${key}: no rows`);
  }
  assert.deepEqual(data.faults.columns, ['program', 'fault', 'expected', 'observed', 'result']);
  assert.equal(data.valgrind.columns.length, 9);
  for (const table of [data.faults, data.valgrind, data.fuzz]) {
    for (const row of table.rows) assert.match(row.result, /^(ok|FAIL|FAILED.*)$/, `${table.file}: ${JSON.stringify(row)}`);
  }
});

test('whole runs say their date, command and machine', () => {
  const data = loader.load();
  for (const table of [data.faults, data.valgrind]) {
    assert.match(table.meta.date ?? '', /^\d{4}-\d{2}-\d{2}$/, `${table.file}: date`);
    assert.ok(table.meta.command?.startsWith('./rdmalab '), `${table.file}: command`);
    assert.ok(table.meta.machine, `${table.file}: machine`);
  }
  for (const table of [data.fuzz, data.timings]) {
    for (const row of table.rows) assert.match(row.date, /\d{4}-\d{2}-\d{2}/, `${table.file}: ${JSON.stringify(row)}`);
  }
});

test('every fuzz row names a target that exists', () => {
  const targets = readdirSync(path.join(repo, 'tests/fuzz'))
    .filter((name) => name.endsWith('.cpp') && name !== 'make_corpus.cpp')
    .map((name) => name.replace(/\.cpp$/, ''));
  for (const row of loader.load().fuzz.rows) assert.ok(targets.includes(row.target), `results/fuzz.tsv: no target ${row.target}`);
});

test('a row with a missing cell fails the build, naming the file and row', () => {
  assert.throws(() => parseResults('# x\na\tb\n1\t2\n3\n', 'x.tsv'), /results\/x\.tsv row 2 has 1 cells, not 2/);
  assert.deepEqual(survived([{ fault: 'rogue: a', result: 'ok' }, { fault: 'rogue: b', result: 'FAIL' }]),
    [{ kind: 'rogue', ok: 1, total: 2 }]);
  const numbered = numberMachines({ rows: [{ machine: 'a' }, { machine: 'b' }, { machine: 'a' }] });
  assert.deepEqual(numbered.machines, ['a', 'b']);
  assert.deepEqual(numbered.rows.map((row) => row.machineNumber), [1, 2, 1]);
});

test('lab/results.sh writes a whole run, and replaces rows by key', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rdmalab-results-'));
  try {
    const env = { ...process.env, RDMALAB_RESULTS_DIR: dir };
    const script = path.join(repo, 'lab/results.sh');
    writeFileSync(path.join(dir, 'run.tsv'), 'srq\tclient-killed\tserves the others\tserved 2\tok\n');
    execFileSync('bash', [script, 'run', 'faults', path.join(dir, 'run.tsv'), './rdmalab faults'], { env, stdio: 'pipe' });
    const faults = parseResults(readFileSync(path.join(dir, 'faults.tsv'), 'utf8'), 'faults.tsv');
    assert.equal(faults.meta.command, './rdmalab faults');
    assert.match(faults.meta.date, /^\d{4}-\d{2}-\d{2}$/);
    assert.deepEqual(faults.rows, [{ program: 'srq', fault: 'client-killed', expected: 'serves the others', observed: 'served 2', result: 'ok' }]);

    copyFileSync(path.join(results, 'fuzz.tsv'), path.join(dir, 'fuzz.tsv'));
    const before = parseResults(readFileSync(path.join(dir, 'fuzz.tsv'), 'utf8'), 'fuzz.tsv');
    writeFileSync(path.join(dir, 'rows.tsv'), 'codec\t20\t1000\t3\t4\tok\t2030-01-01\tm\t\n');
    execFileSync('bash', [script, 'rows', 'fuzz', path.join(dir, 'rows.tsv')], { env, stdio: 'pipe' });
    const after = parseResults(readFileSync(path.join(dir, 'fuzz.tsv'), 'utf8'), 'fuzz.tsv');
    assert.equal(after.rows.length, before.rows.length);
    assert.deepEqual(after.rows.map((row) => row.target), before.rows.map((row) => row.target));
    assert.equal(after.rows.find((row) => row.target === 'codec').date, '2030-01-01');

    writeFileSync(path.join(dir, 'bad.tsv'), 'one\ttwo\n');
    assert.throws(() => execFileSync('bash', [script, 'run', 'valgrind', path.join(dir, 'bad.tsv'), 'x'], { env, stdio: 'pipe' }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
