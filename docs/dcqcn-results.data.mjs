// Build-time data for the DCQCN chapter's figures: every sender's timeline that
// bench/dcqcn.sh recorded (bench/results/congestion/dcqcn-RUN-FLOW.timeline.tsv, written by the
// dcqcn lesson's --timeline), grouped by run. A timeline is "# NAME<TAB>VALUE" header lines, a
// line of column names, then one row per 50 ms. Each flow's offset (its start after the first
// flow's) comes from the receiver's capture, the one clock all three share.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const folder = fileURLToPath(new URL('../bench/results/congestion', import.meta.url));
const NAME = /^dcqcn-(none|dcqcn)-(\d+)\.timeline\.tsv$/;

export function parseTimeline(text, file) {
  const header = {};
  let columns = null;
  const rows = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const fields = line.split('\t');
    if (line.startsWith('#')) {
      if (fields.length === 2) header[fields[0].slice(2)] = fields[1];
    } else if (!columns) {
      columns = fields;
    } else {
      if (fields.length !== columns.length) throw new Error(`${file}: a row of ${fields.length} fields under ${columns.length} columns`);
      const row = {};
      columns.forEach((name, i) => { row[name] = fields[i] === '-' ? null : Number(fields[i]); });
      rows.push(row);
    }
  }
  for (const needed of ['time_s', 'rate_mbit', 'sent_mbit', 'completion_ms', 'cnps']) {
    if (!columns || !columns.includes(needed)) throw new Error(`${file}: no column ${needed}`);
  }
  return { header, rows };
}

// rdma-wire --flows' table (dcqcn-RUN.flows.tsv): each data stream's first packet on the
// receiver's link, in the capture's clock, row by row (flow N is row N).
export function parseFlowStarts(text, file) {
  const lines = text.split('\n').filter((line) => line && !line.startsWith('#'));
  const columns = (lines.shift() ?? '').split('\t');
  const first = columns.indexOf('first_s');
  if (first < 0) throw new Error(`${file}: no column first_s`);
  return lines.map((line) => {
    const value = Number(line.split('\t')[first]);
    if (!Number.isFinite(value)) throw new Error(`${file}: a first_s that is not a number`);
    return value;
  });
}

export default {
  watchFiles: ['../bench/results/congestion/dcqcn-*.tsv'],
  load() {
    const runs = { none: [], dcqcn: [] };
    for (const name of fs.readdirSync(folder).sort()) {
      const match = NAME.exec(name);
      if (!match) continue;
      const { header, rows } = parseTimeline(fs.readFileSync(path.join(folder, name), 'utf8'), name);
      runs[match[1]].push({ flow: Number(match[2]), qp: header.remote_qp, model: header.model ?? '', rows });
    }
    for (const [run, flows] of Object.entries(runs)) {
      flows.sort((a, b) => a.flow - b.flow);
      // Each timeline counts from its own sender's start; the capture puts them on one clock.
      const starts = parseFlowStarts(fs.readFileSync(path.join(folder, `dcqcn-${run}.flows.tsv`), 'utf8'), run);
      if (starts.length !== flows.length) throw new Error(`dcqcn-${run}: ${starts.length} streams, ${flows.length} timelines`);
      const earliest = Math.min(...starts);
      flows.forEach((flow, i) => { flow.offset = starts[i] - earliest; });
    }
    return runs;
  },
};
