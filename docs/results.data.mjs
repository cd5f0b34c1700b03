// Build-time data for the "Measured results" page (results.md): the TSV files in results/,
// written by the runs themselves (lab/results.sh, through ./rdmalab faults, test --sanitize,
// fuzz and timings with --record). Each file: `# ` lines (`# key: value` for a whole run's
// date, command, machine), one row of column names, then the rows.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const folder = fileURLToPath(new URL('../results', import.meta.url));

export function parseResults(text, name) {
  const meta = {};
  const comments = [];
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const body = [];
  for (const line of lines) {
    if (line.startsWith('#')) {
      const comment = line.replace(/^#\s?/, '');
      const field = /^([a-z]+): (.*)$/.exec(comment);
      if (field) meta[field[1]] = field[2];
      else comments.push(comment);
    } else body.push(line);
  }
  if (!body.length) throw new Error(`docs: results/${name} has no row of column names`);
  const columns = body[0].split('\t');
  const rows = body.slice(1).map((line, index) => {
    const cells = line.split('\t');
    if (cells.length !== columns.length) {
      throw new Error(`docs: results/${name} row ${index + 1} has ${cells.length} cells, not ${columns.length}`);
    }
    return Object.fromEntries(columns.map((column, i) => [column, cells[i]]));
  });
  return { file: `results/${name}`, meta, comments, columns, rows };
}

// The fault matrix's cells counted by kind (the fault's text before a colon), in first-seen order.
export function survived(rows) {
  const kinds = new Map();
  for (const row of rows) {
    const kind = row.fault.replace(/:.*/, '');
    const count = kinds.get(kind) ?? { kind, ok: 0, total: 0 };
    count.total += 1;
    if (row.result === 'ok') count.ok += 1;
    kinds.set(kind, count);
  }
  return [...kinds.values()];
}

// The distinct machines of a table whose rows each name one (fuzz, timings), numbered from 1 in
// first-seen order, and each row's number: the page lists each machine once, under its table.
export function numberMachines(table) {
  const machines = [];
  const rows = table.rows.map((row) => {
    let index = machines.indexOf(row.machine);
    if (index < 0) index = machines.push(row.machine) - 1;
    return { ...row, machineNumber: index + 1 };
  });
  return { ...table, rows, machines };
}

function read(name) {
  return parseResults(fs.readFileSync(`${folder}/${name}`, 'utf8'), name);
}

export default {
  watchFiles: ['../results/*.tsv'],
  load() {
    const faults = read('faults.tsv');
    const valgrind = read('valgrind.tsv');
    const fuzz = read('fuzz.tsv');
    const timings = read('timings.tsv');
    const spreads = read('spreads.tsv');
    return {
      spreads,
      timings: numberMachines(timings),
      faults: { ...faults, survived: survived(faults.rows) },
      valgrind: { ...valgrind, clean: valgrind.rows.filter((row) => row.result === 'ok').length },
      fuzz: numberMachines(fuzz),
    };
  },
};
