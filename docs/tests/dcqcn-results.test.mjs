// The dcqcn lesson's timelines as the congestion chapter's figure reads them
// (dcqcn-results.data.mjs): the recorded ones parse, with three flows per run, the reaction's
// rates changing and the unreacting run's fixed at the line rate; a malformed file is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import loader, { parseFlowStarts, parseTimeline } from '../dcqcn-results.data.mjs';

test('the recorded runs: three flows each, rows every 50 ms, R_C moving only with the reaction', () => {
  const runs = loader.load();
  for (const run of ['none', 'dcqcn']) {
    assert.equal(runs[run].length, 3, `${run}: ${runs[run].length} flows`);
    for (const flow of runs[run]) {
      assert.match(flow.qp, /^0x[0-9a-f]+$/, `${run} flow ${flow.flow}: remote_qp`);
      assert.ok(flow.rows.length >= 40, `${run} flow ${flow.flow}: ${flow.rows.length} rows`);
      const rates = new Set(flow.rows.map((row) => row.rate_mbit));
      if (run === 'none') assert.equal(rates.size, 1, `none flow ${flow.flow}: R_C changed`);
      else assert.ok(rates.size > 10, `dcqcn flow ${flow.flow}: R_C took ${rates.size} values`);
    }
  }
  assert.match(runs.dcqcn[0].model, /^rate 40 Mbit\/s/);
  for (const run of ['none', 'dcqcn']) {
    assert.equal(Math.min(...runs[run].map((flow) => flow.offset)), 0, `${run}: no flow starts at 0`);
    assert.ok(runs[run].every((flow) => flow.offset < 5), `${run}: a flow starts 5 s after the first`);
  }
});

test('a timeline is header lines, columns, then rows of as many fields; "-" is no value', () => {
  const text = '# dcqcn timeline: one row per 50 ms\n# reaction\tdcqcn\n# remote_qp\t0x11\n' +
    'time_s\trate_mbit\ttarget_mbit\talpha\tsent_mbit\tcompletion_ms\tcnps\n' +
    '0.050\t40.000\t40.000\t0.9654\t13.763\t-\t0\n0.100\t20.000\t40.000\t1.0000\t12.000\t12.5\t1\n';
  const { header, rows } = parseTimeline(text, 't.tsv');
  assert.equal(header.remote_qp, '0x11');
  assert.equal(rows.length, 2);
  assert.equal(rows[0].completion_ms, null);
  assert.equal(rows[1].rate_mbit, 20);
  assert.throws(() => parseTimeline(text + '0.150\t1\n', 't.tsv'), /a row of 2 fields under 7 columns/);
  assert.throws(() => parseTimeline('time_s\trate_mbit\n0\t1\n', 't.tsv'), /no column sent_mbit/);
  assert.deepEqual(parseFlowStarts('src\tfirst_s\n198.51.100.1\t8.5\n# jain_fairness\t0.9\n', 'f.tsv'), [8.5]);
  assert.throws(() => parseFlowStarts('src\tlast_s\n', 'f.tsv'), /no column first_s/);
});
