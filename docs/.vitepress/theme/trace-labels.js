// What the trace viewer (components/TraceViewer.vue) writes beside each step, and which steps its
// jump buttons land on: plain functions of a trace file's records, apart from the component so that
// node --test checks them (docs/tests/trace-labels.test.mjs).

export function shortOpcode(name) { return name.replace(/^RDMA /, ''); }
export function clip(text, n = 31) { return text.length > n ? `${text.slice(0, n - 1)}…` : text; }
export function isNak(p) { return Boolean(p.aeth && p.aeth.syndrome >= 32); }
// A NAK's label says which (the AETH's meaning: "NAK PSN sequence error", "RNR NAK (timer 24)").
export function nakText(p) { return p.aeth.meaning || `NAK (syndrome ${p.aeth.syndrome})`; }
export const isUnsignaled = (e) => e.event === 'post_send' && e.signaled === false;
export const isErrorCqe = (e) => e.event === 'completion' && !e.ok;

export function eventLabel(e) {
  switch (e.event) {
    case 'post_send': return `post ${e.opcode} wr ${e.wr_id}${e.signaled === false ? ' (no CQE)' : ''} · ${e.length} B`;
    case 'post_recv': return `post receive wr ${e.wr_id} · ${e.length} B`;
    case 'completion': return e.ok ? `CQE ${e.opcode} wr ${e.wr_id}${e.opcode.startsWith('RECV') ? ` · ${e.byte_len} B` : ''}` : `CQE ✗ ${String(e.status).replace(/^IBV_WC_/, '')} wr ${e.wr_id}`;
    case 'cm_event': return `rdma_cm ${e.name.replace('RDMA_CM_EVENT_', '')}`;
    case 'modify_qp': return `modify QP ${e.from} → ${e.to}`;
    case 'step': return e.text;
    default: return e.event;
  }
}

// rdma_cm's connection messages: CM MADs (IBA chapter 12), sent as UD SENDs to QP 1.
export const CM_MESSAGES = {
  REQ: 'connect request',
  MRA: 'message received: wait for the reply',
  REJ: 'connection refused',
  REP: 'connect reply',
  RTU: 'ready to use',
  DREQ: 'disconnect request',
  DREP: 'disconnect reply',
};
export function isCmPacket(p) { return p.transport === 'UD' && parseInt(p.qpn, 16) === 1; }

// Each rdma_cm packet's message, packet index → "REQ" … A packet record holds no MAD header (the
// MAD's attribute ID, which says REQ or REP, is not among the fields asked of tshark), so the
// messages are named by their place in each pair of hosts' exchange, in sending order:
//   the first is a REQ; the other side's answer a REP, or a REJ when the requester's next rdma_cm
//   event is REJECTED; the requester's next an RTU; connected, the first a DREQ, the answer a DREP.
// A side sending again before the other answers repeats its message (a MAD sent again). One
// connection at a time per pair of hosts (the lessons' case); an MRA would be taken for a REP.
export function cmMessages(trace) {
  const byPair = new Map();
  trace.packets.forEach((p, index) => {
    if (!isCmPacket(p)) return;
    const pair = [p.from, p.to].sort().join('|');
    if (!byPair.has(pair)) byPair.set(pair, []);
    byPair.get(pair).push(index);
  });
  const sentAt = (p) => p.tx_ns ?? p.rx_ns ?? 0;
  const refused = (p) => {
    if (p.rx_ns === null || p.rx_ns === undefined) return false;
    const next = (trace.events ?? []).filter((e) => e.event === 'cm_event' && e.host === p.to && e.t_ns >= p.rx_ns)
      .sort((a, b) => a.t_ns - b.t_ns)[0];
    return next?.name === 'RDMA_CM_EVENT_REJECTED';
  };
  const names = new Map();
  for (const indices of byPair.values()) {
    indices.sort((a, b) => sentAt(trace.packets[a]) - sentAt(trace.packets[b]) || a - b);
    let phase = 'idle';
    let opener = null;  // who sent the REQ, then who sent the DREQ
    indices.forEach((index, k) => {
      const p = trace.packets[index];
      const fromOpener = p.from === opener;
      const previousLost = k > 0 && Boolean(trace.packets[indices[k - 1]].lost);
      let name;
      switch (phase) {
        case 'requested': name = fromOpener ? 'REQ' : refused(p) ? 'REJ' : 'REP'; break;
        case 'replied': name = fromOpener ? 'RTU' : 'REP'; break;
        case 'connected': name = 'DREQ'; break;
        case 'closing': name = fromOpener ? 'DREQ' : 'DREP'; break;
        // After a DREP: its DREQ again when the DREP was lost, else a new connection's REQ.
        case 'closed': name = fromOpener && previousLost ? 'DREQ' : 'REQ'; break;
        default: name = 'REQ';
      }
      if ((name === 'REQ' && phase !== 'requested') || (name === 'DREQ' && phase === 'connected')) opener = p.from;
      phase = { REQ: 'requested', REJ: 'idle', REP: 'replied', RTU: 'connected', DREQ: 'closing', DREP: 'closed' }[name];
      names.set(index, name);
    });
  }
  return names;
}

// The ladder's label of a packet: its opcode and PSN, or its rdma_cm message (cm: from cmMessages).
export function packetLabel(p, cm) {
  const marks = [p.sent_again ? 'sent again' : '', p.lost ? 'lost' : ''].filter(Boolean).join(', ');
  const what = cm ? `CM ${cm} · ${CM_MESSAGES[cm]}` : `${isNak(p) ? nakText(p) : shortOpcode(p.opcode_name)} · PSN ${p.psn}`;
  return `${p.sent_again ? '↻ ' : ''}${what}${marks ? ` (${marks})` : ''}`;
}

// The jump buttons: the kinds of step they land on, each an event of the trace.
export const JUMPS = [
  { kind: 'write', name: 'WRITE', what: 'RDMA WRITE posted', matches: (e) => e.event === 'post_send' && /^RDMA_WRITE/.test(e.opcode ?? '') },
  { kind: 'read', name: 'READ', what: 'RDMA READ posted', matches: (e) => e.event === 'post_send' && /^RDMA_READ/.test(e.opcode ?? '') },
  { kind: 'completion', name: 'completion', what: 'completion (CQE)', matches: (e) => e.event === 'completion' },
];

// Where a jump lands: the position (steps shown, 1-based) of the next (direction 1) or previous
// (-1) step after or before the current one (position - 1) whose event matches; null when none.
export function jumpTarget(steps, events, position, matches, direction) {
  const hit = (i) => steps[i].kind === 'event' && matches(events[steps[i].index]);
  if (direction > 0) {
    for (let i = position; i < steps.length; i += 1) if (hit(i)) return i + 1;
  } else {
    for (let i = Math.min(position, steps.length) - 2; i >= 0; i -= 1) if (hit(i)) return i + 1;
  }
  return null;
}
