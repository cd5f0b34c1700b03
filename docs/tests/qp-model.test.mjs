// Unit tests for the QP state-machine model behind <QpExplorer>
// (docs/.vitepress/theme/qp-model.js). Run: node --test docs/tests/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  STATES, TRANSPORTS, STATE_INFO, ATTRIBUTE_INFO, explain, isLegal, legalTargets, modifyTransition,
  deviceTransitions, sendErrorTransition, checkMask, maskExpression, isReachable,
} from '../.vitepress/theme/qp-model.js';

test('the seven IB QP states and three modelled transports', () => {
  assert.deepEqual(STATES, ['RESET', 'INIT', 'RTR', 'RTS', 'SQD', 'SQE', 'ERR']);
  assert.deepEqual(TRANSPORTS, ['RC', 'UC', 'UD']);
  for (const state of STATES) assert.ok(STATE_INFO[state]?.summary, `summary for ${state}`);
});

test('the bring-up path is legal for every transport, one step at a time', () => {
  for (const transport of TRANSPORTS) {
    assert.ok(isLegal('RESET', 'INIT', transport));
    assert.ok(isLegal('INIT', 'RTR', transport));
    assert.ok(isLegal('RTR', 'RTS', transport));
  }
});

test('skipping a bring-up step is illegal', () => {
  for (const transport of TRANSPORTS) {
    for (const [from, to] of [['RESET', 'RTR'], ['RESET', 'RTS'], ['INIT', 'RTS'], ['RESET', 'SQD'], ['INIT', 'SQD'], ['RTR', 'SQD']]) {
      assert.equal(isLegal(from, to, transport), false, `${from}->${to} ${transport}`);
    }
  }
});

test('going backwards is illegal except through RESET', () => {
  for (const transport of TRANSPORTS) {
    for (const [from, to] of [['INIT', 'RESET'], ['RTR', 'RESET'], ['RTS', 'RESET'], ['SQD', 'RESET'], ['ERR', 'RESET']]) {
      assert.ok(isLegal(from, to, transport), `${from}->${to} ${transport}`);
    }
    for (const [from, to] of [['RTR', 'INIT'], ['RTS', 'INIT'], ['RTS', 'RTR'], ['SQD', 'INIT'], ['SQD', 'RTR']]) {
      assert.equal(isLegal(from, to, transport), false, `${from}->${to} ${transport}`);
    }
  }
});

test('every state but RESET can be moved to ERR; ERR only leads to RESET', () => {
  for (const transport of TRANSPORTS) {
    for (const from of ['INIT', 'RTR', 'RTS', 'SQD']) assert.ok(isLegal(from, 'ERR', transport));
    assert.equal(isLegal('RESET', 'ERR', transport), false, 'Linux has no RESET->ERR entry');
    assert.deepEqual(legalTargets('ERR', transport), ['RESET', 'ERR']);
  }
});

test('RTS <-> SQD both ways, SQE -> RTS only for UC and UD', () => {
  for (const transport of TRANSPORTS) {
    assert.ok(isLegal('RTS', 'SQD', transport));
    assert.ok(isLegal('SQD', 'RTS', transport));
  }
  assert.ok(isLegal('SQE', 'RTS', 'UC'));
  assert.ok(isLegal('SQE', 'RTS', 'UD'));
  assert.equal(isLegal('SQE', 'RTS', 'RC'), false);
  assert.equal(isReachable('SQE', 'RC'), false);
  assert.equal(isReachable('SQE', 'UD'), true);
});

test('SQE can never be requested with ibv_modify_qp', () => {
  for (const transport of TRANSPORTS) {
    for (const from of STATES) assert.equal(isLegal(from, 'SQE', transport), false, `${from}->SQE ${transport}`);
  }
});

test('legal targets from each state (RC)', () => {
  assert.deepEqual(legalTargets('RESET', 'RC'), ['RESET', 'INIT']);
  assert.deepEqual(legalTargets('INIT', 'RC'), ['RESET', 'INIT', 'RTR', 'ERR']);
  assert.deepEqual(legalTargets('RTR', 'RC'), ['RESET', 'RTS', 'ERR']);
  assert.deepEqual(legalTargets('RTS', 'RC'), ['RESET', 'RTS', 'SQD', 'ERR']);
  assert.deepEqual(legalTargets('SQD', 'RC'), ['RESET', 'RTS', 'SQD', 'ERR']);
  assert.deepEqual(legalTargets('SQE', 'RC'), []);
  assert.deepEqual(legalTargets('SQE', 'UD'), ['RESET', 'RTS', 'ERR']);
});

const sorted = (list) => [...list].sort();

test('RESET->INIT required masks per transport (ibv_modify_qp(3))', () => {
  const rcUc = ['IBV_QP_STATE', 'IBV_QP_PKEY_INDEX', 'IBV_QP_PORT', 'IBV_QP_ACCESS_FLAGS'];
  assert.deepEqual(sorted(modifyTransition('RESET', 'INIT', 'RC').required), sorted(rcUc));
  assert.deepEqual(sorted(modifyTransition('RESET', 'INIT', 'UC').required), sorted(rcUc));
  assert.deepEqual(sorted(modifyTransition('RESET', 'INIT', 'UD').required),
    sorted(['IBV_QP_STATE', 'IBV_QP_PKEY_INDEX', 'IBV_QP_PORT', 'IBV_QP_QKEY']));
});

test('INIT->RTR required masks per transport', () => {
  assert.deepEqual(sorted(modifyTransition('INIT', 'RTR', 'RC').required), sorted([
    'IBV_QP_STATE', 'IBV_QP_AV', 'IBV_QP_PATH_MTU', 'IBV_QP_DEST_QPN', 'IBV_QP_RQ_PSN',
    'IBV_QP_MAX_DEST_RD_ATOMIC', 'IBV_QP_MIN_RNR_TIMER']));
  assert.deepEqual(sorted(modifyTransition('INIT', 'RTR', 'UC').required), sorted([
    'IBV_QP_STATE', 'IBV_QP_AV', 'IBV_QP_PATH_MTU', 'IBV_QP_DEST_QPN', 'IBV_QP_RQ_PSN']));
  assert.deepEqual(modifyTransition('INIT', 'RTR', 'UD').required, ['IBV_QP_STATE']);
});

test('RTR->RTS required masks per transport', () => {
  assert.deepEqual(sorted(modifyTransition('RTR', 'RTS', 'RC').required), sorted([
    'IBV_QP_STATE', 'IBV_QP_SQ_PSN', 'IBV_QP_TIMEOUT', 'IBV_QP_RETRY_CNT', 'IBV_QP_RNR_RETRY',
    'IBV_QP_MAX_QP_RD_ATOMIC']));
  assert.deepEqual(sorted(modifyTransition('RTR', 'RTS', 'UC').required), sorted(['IBV_QP_STATE', 'IBV_QP_SQ_PSN']));
  assert.deepEqual(sorted(modifyTransition('RTR', 'RTS', 'UD').required), sorted(['IBV_QP_STATE', 'IBV_QP_SQ_PSN']));
});

test('RC-only attributes never appear for UD, UD-only Q_Key never for RC', () => {
  const rcOnly = ['IBV_QP_MAX_DEST_RD_ATOMIC', 'IBV_QP_MAX_QP_RD_ATOMIC', 'IBV_QP_RETRY_CNT', 'IBV_QP_RNR_RETRY', 'IBV_QP_TIMEOUT', 'IBV_QP_MIN_RNR_TIMER'];
  for (const from of STATES) {
    for (const to of STATES) {
      const ud = modifyTransition(from, to, 'UD');
      if (ud) for (const bit of rcOnly) assert.ok(![...ud.required, ...ud.optional].includes(bit), `${bit} in UD ${from}->${to}`);
      const rc = modifyTransition(from, to, 'RC');
      if (rc) assert.ok(![...rc.required, ...rc.optional].includes('IBV_QP_QKEY'), `QKEY in RC ${from}->${to}`);
    }
  }
});

test('moves to RESET and ERR need only IBV_QP_STATE', () => {
  for (const transport of TRANSPORTS) {
    assert.deepEqual(modifyTransition('RTS', 'ERR', transport).required, ['IBV_QP_STATE']);
    assert.deepEqual(modifyTransition('RTR', 'RESET', transport).required, ['IBV_QP_STATE']);
  }
});

test('every mask bit used is a documented ibv_qp_attr_mask flag', () => {
  for (const transport of TRANSPORTS) {
    for (const from of STATES) {
      for (const to of STATES) {
        const transition = modifyTransition(from, to, transport);
        if (!transition) continue;
        assert.ok(transition.required.includes('IBV_QP_STATE'), `${from}->${to} requires IBV_QP_STATE`);
        for (const bit of [...transition.required, ...transition.optional]) {
          assert.ok(ATTRIBUTE_INFO[bit], `${bit} documented (${from}->${to} ${transport})`);
        }
      }
    }
  }
});

test('checkMask finds missing and unexpected bits', () => {
  const full = modifyTransition('INIT', 'RTR', 'RC').required;
  assert.equal(checkMask('INIT', 'RTR', 'RC', full).ok, true);
  const withoutMinRnr = full.filter((bit) => bit !== 'IBV_QP_MIN_RNR_TIMER');
  assert.deepEqual(checkMask('INIT', 'RTR', 'RC', withoutMinRnr).missing, ['IBV_QP_MIN_RNR_TIMER']);
  const result = checkMask('INIT', 'RTR', 'UC', [...modifyTransition('INIT', 'RTR', 'UC').required, 'IBV_QP_MAX_DEST_RD_ATOMIC']);
  assert.equal(result.ok, false);
  assert.deepEqual(result.notAllowed, ['IBV_QP_MAX_DEST_RD_ATOMIC']);
  assert.equal(checkMask('RESET', 'RTR', 'RC', ['IBV_QP_STATE']).illegalTransition, true);
});

test('explain() for a legal transition names the mask', () => {
  const result = explain('RESET', 'INIT', 'UD');
  assert.equal(result.legal, true);
  assert.equal(result.kind, 'modify');
  assert.equal(result.errno, null);
  assert.match(result.message, /IBV_QP_QKEY/);
  assert.equal(maskExpression(result.required), 'IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY');
  assert.equal(explain('RTS', 'RTS', 'RC').kind, 'modify-in-place');
});

test('explain() says why illegal transitions fail', () => {
  const skip = explain('RESET', 'RTR', 'RC');
  assert.equal(skip.legal, false);
  assert.equal(skip.errno, 'EINVAL');
  assert.match(skip.message, /RESET→RTR: a QP must pass through INIT first/);
  assert.match(skip.message, /EINVAL/);
  assert.match(explain('RESET', 'RTS', 'UC').message, /through INIT and RTR first/);
  assert.match(explain('RTS', 'INIT', 'RC').message, /backwards/);
  assert.match(explain('ERR', 'RTS', 'RC').message, /only go to RESET/);
  assert.match(explain('RTS', 'SQE', 'RC').message, /RC has no SQE/);
  assert.match(explain('RTS', 'SQE', 'UD').message, /device enters it by itself/);
  assert.match(explain('INIT', 'SQD', 'RC').message, /only a QP in RTS can be drained/);
  assert.match(explain('RESET', 'ERR', 'RC').message, /RESET→ERR/);
  assert.match(explain('SQE', 'RTS', 'RC').message, /never in SQE/);
});

test('the device moves RTS to SQE on UC/UD and to ERR on RC after a failed send', () => {
  assert.equal(sendErrorTransition('RTS', 'RC').to, 'ERR');
  assert.equal(sendErrorTransition('RTS', 'UC').to, 'SQE');
  assert.equal(sendErrorTransition('RTS', 'UD').to, 'SQE');
  assert.equal(sendErrorTransition('INIT', 'RC'), null);
  assert.deepEqual(deviceTransitions('RESET', 'UD'), []);
});

test('unknown states and transports are rejected', () => {
  assert.throws(() => explain('READY', 'RTS', 'RC'), RangeError);
  assert.throws(() => explain('INIT', 'RTR', 'XRC'), RangeError);
});

test('the ibv_qp_attr reference table agrees with checkMask, cell by cell', async () => {
  const { attributeTable, TABLE_TRANSITIONS } = await import('../.vitepress/theme/qp-model.js');
  for (const transport of TRANSPORTS) {
    const table = attributeTable(transport);
    assert.equal(table.transitions.length, TABLE_TRANSITIONS.length);
    assert.ok(table.rows.length >= (transport === 'UD' ? 6 : 10), `${transport}: ${table.rows.length} rows`);
    table.transitions.forEach(({ from, to, legal }, column) => {
      assert.equal(legal, isLegal(from, to, transport) && isReachable(from, transport), `${from}>${to} ${transport}`);
      if (!legal) {
        for (const row of table.rows) assert.equal(row.cells[column], 'n/a');
        return;
      }
      const required = table.rows.filter((row) => row.cells[column] === 'required').map((row) => row.bit);
      assert.ok(checkMask(from, to, transport, required).ok, `${from}>${to} ${transport}: the required bits alone pass`);
      for (const bit of required) {
        const without = required.filter((b) => b !== bit);
        assert.deepEqual(checkMask(from, to, transport, without).missing, [bit], `${from}>${to} ${transport} without ${bit}`);
      }
      for (const row of table.rows) {
        const result = checkMask(from, to, transport, [...new Set([...required, row.bit])]);
        if (row.cells[column] === '') assert.deepEqual(result.notAllowed, [row.bit], `${row.bit} refused on ${from}>${to} ${transport}`);
        else assert.ok(result.ok, `${row.bit} accepted on ${from}>${to} ${transport}`);
      }
    });
  }
  // Spot checks against ibv_modify_qp(3).
  const rc = attributeTable('RC');
  const cell = (table, bit, from, to) => table.rows.find((r) => r.bit === bit)
    .cells[table.transitions.findIndex((t) => t.from === from && t.to === to)];
  assert.equal(cell(rc, 'IBV_QP_MAX_DEST_RD_ATOMIC', 'INIT', 'RTR'), 'required');
  assert.equal(cell(rc, 'IBV_QP_TIMEOUT', 'RTR', 'RTS'), 'required');
  assert.equal(cell(rc, 'IBV_QP_TIMEOUT', 'INIT', 'RTR'), '');
  assert.equal(cell(attributeTable('UD'), 'IBV_QP_QKEY', 'RESET', 'INIT'), 'required');
  assert.equal(cell(rc, 'IBV_QP_STATE', 'SQE', 'RTS'), 'n/a');
});
