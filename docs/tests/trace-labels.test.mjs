// Unit tests for the trace viewer's labels and jumps (docs/.vitepress/theme/trace-labels.js):
// rdma_cm packets named by their message, on made-up exchanges and on every recorded trace.
// Run: node --test docs/tests/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cmMessages, isCmPacket, jumpTarget, JUMPS, packetLabel } from '../.vitepress/theme/trace-labels.js';

const TRACES_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'public', 'traces');

// A made-up exchange: [from, to, lost?] per CM packet, sent 1 µs apart, each arriving 0.5 µs later.
function exchange(sends, events = []) {
  const packets = sends.map(([from, to, lost = false], i) => ({
    transport: 'UD', qpn: '0x000001', opcode_name: 'SEND Only', psn: i, from, to, lost,
    sent_again: false, tx_ns: i * 1000, rx_ns: lost ? null : i * 1000 + 500,
  }));
  return { packets, events };
}
const named = (trace) => trace.packets.map((p, i) => cmMessages(trace).get(i));

test('a connection set up and torn down: REQ, REP, RTU, DREQ, DREP', () => {
  const trace = exchange([['c', 's'], ['s', 'c'], ['c', 's'], ['s', 'c'], ['c', 's']]);
  assert.deepEqual(named(trace), ['REQ', 'REP', 'RTU', 'DREQ', 'DREP']);
});

test('whoever disconnects first sends the DREQ', () => {
  const trace = exchange([['c', 's'], ['s', 'c'], ['c', 's'], ['c', 's'], ['s', 'c']]);
  assert.deepEqual(named(trace), ['REQ', 'REP', 'RTU', 'DREQ', 'DREP']);
});

test('a MAD sent again before the answer repeats its message', () => {
  const trace = exchange([['c', 's', true], ['c', 's'], ['s', 'c'], ['c', 's'], ['s', 'c'], ['s', 'c'], ['c', 's']]);
  assert.deepEqual(named(trace), ['REQ', 'REQ', 'REP', 'RTU', 'DREQ', 'DREQ', 'DREP']);
});

test('a reply the requester gets REJECTED for is a REJ; a new REQ may follow', () => {
  const rejected = { event: 'cm_event', host: 'c', name: 'RDMA_CM_EVENT_REJECTED', t_ns: 1600 };
  const trace = exchange([['c', 's'], ['s', 'c'], ['c', 's'], ['s', 'c']], [rejected]);
  assert.deepEqual(named(trace), ['REQ', 'REJ', 'REQ', 'REP']);
});

test('a DREP lost: the DREQ comes again; after a DREP received, a new connection starts with a REQ', () => {
  const lostDrep = exchange([['c', 's'], ['s', 'c'], ['c', 's'], ['c', 's'], ['s', 'c', true], ['c', 's'], ['s', 'c']]);
  assert.deepEqual(named(lostDrep), ['REQ', 'REP', 'RTU', 'DREQ', 'DREP', 'DREQ', 'DREP']);
  const again = exchange([['c', 's'], ['s', 'c'], ['c', 's'], ['c', 's'], ['s', 'c'], ['s', 'c'], ['c', 's']]);
  assert.deepEqual(named(again), ['REQ', 'REP', 'RTU', 'DREQ', 'DREP', 'REQ', 'REP']);
});

test('each pair of hosts has its own exchange; data packets are not CM packets', () => {
  const trace = exchange([['a', 'b'], ['a', 'c'], ['b', 'a'], ['c', 'a']]);
  trace.packets.push({ transport: 'RC', qpn: '0x000011', opcode_name: 'SEND Only', psn: 7, from: 'a', to: 'b', tx_ns: 9000, rx_ns: 9500 });
  assert.deepEqual(named(trace), ['REQ', 'REQ', 'REP', 'REP', undefined]);
  assert.equal(isCmPacket(trace.packets[4]), false);
});

test('a CM packet\'s label names its message, not SEND Only and a PSN', () => {
  const [p] = exchange([['c', 's']]).packets;
  assert.equal(packetLabel(p, 'REQ'), 'CM REQ · connect request');
  assert.equal(packetLabel({ ...p, qpn: '0x000011', transport: 'RC' }), 'SEND Only · PSN 0');
});

test('every recorded trace with rdma_cm packets: REQ from the client, REP, RTU, then DREQ and DREP', () => {
  let checked = 0;
  for (const file of readdirSync(TRACES_DIR).filter((f) => f.endsWith('.json'))) {
    const trace = JSON.parse(readFileSync(path.join(TRACES_DIR, file), 'utf8'));
    const cm = trace.packets.filter(isCmPacket);
    if (!cm.length) continue;
    const names = cmMessages(trace);
    const order = [...names.keys()].sort((a, b) => trace.packets[a].tx_ns - trace.packets[b].tx_ns);
    assert.deepEqual(order.map((i) => names.get(i)), ['REQ', 'REP', 'RTU', 'DREQ', 'DREP'], file);
    assert.equal(trace.packets[order[0]].from, trace.meta.client, `${file}: the REQ comes from the client`);
    assert.notEqual(trace.packets[order[3]].from, trace.packets[order[4]].from, `${file}: the DREP answers the DREQ`);
    checked += 1;
  }
  assert.ok(checked >= 5, `only ${checked} recorded traces have rdma_cm packets`);
});

test('jumps land on the next or previous matching step, or nowhere', () => {
  const events = [{ event: 'post_send', opcode: 'RDMA_WRITE' }, { event: 'completion', ok: true }, { event: 'post_send', opcode: 'RDMA_READ' }, { event: 'post_send', opcode: 'RDMA_WRITE_WITH_IMM' }];
  const steps = [{ kind: 'event', index: 0 }, { kind: 'send', index: 0 }, { kind: 'event', index: 1 }, { kind: 'event', index: 2 }, { kind: 'event', index: 3 }];
  const write = JUMPS.find((j) => j.kind === 'write').matches;
  const read = JUMPS.find((j) => j.kind === 'read').matches;
  assert.equal(jumpTarget(steps, events, 0, write, 1), 1);
  assert.equal(jumpTarget(steps, events, 1, write, 1), 5);
  assert.equal(jumpTarget(steps, events, 5, write, 1), null);
  assert.equal(jumpTarget(steps, events, 5, write, -1), 1);
  assert.equal(jumpTarget(steps, events, 1, write, -1), null);
  assert.equal(jumpTarget(steps, events, 0, read, 1), 4);
  assert.equal(jumpTarget(steps, events, 0, JUMPS.find((j) => j.kind === 'completion').matches, 1), 3);
});
