// The InfiniBand queue-pair state machine as data: states, the transitions
// ibv_modify_qp() accepts, the attribute mask each one requires or allows per
// transport, the transitions only the device makes, and plain-language
// explanations of why a transition works or fails.
//
// Sources: ibv_modify_qp(3) (required attributes for RESET->INIT->RTR->RTS)
// and the transition table the Linux RDMA core checks every modify against
// (ib_modify_qp_is_ok() in drivers/infiniband/core/verbs.c), which follows the
// IB specification's QP state table. Plain ES module, no Vue: it is shared by
// the <QpExplorer> component and the unit tests in docs/tests/.

export const STATES = ['RESET', 'INIT', 'RTR', 'RTS', 'SQD', 'SQE', 'ERR'];

export const TRANSPORTS = ['RC', 'UC', 'UD'];

export const TRANSPORT_NAMES = {
  RC: 'Reliable Connected (IBV_QPT_RC)',
  UC: 'Unreliable Connected (IBV_QPT_UC)',
  UD: 'Unreliable Datagram (IBV_QPT_UD)',
};

export const STATE_INFO = {
  RESET: {
    name: 'Reset',
    summary: 'Just created (or reset): no attributes, posting sends is refused, nothing is processed.',
  },
  INIT: {
    name: 'Initialized',
    summary: 'Port, P_Key index and access rights (or Q_Key) set. Receives may be posted; nothing is processed yet.',
  },
  RTR: {
    name: 'Ready To Receive',
    summary: 'The QP knows its peer (RC/UC) and processes incoming packets. Sends are still refused.',
  },
  RTS: {
    name: 'Ready To Send',
    summary: 'Fully operational: both queues process work requests.',
  },
  SQD: {
    name: 'Send Queue Drain',
    summary: 'Send WRs already started finish, new ones wait; IBV_EVENT_SQ_DRAINED says when it is idle. Some attributes may be changed here.',
  },
  SQE: {
    name: 'Send Queue Error',
    summary: 'UC/UD only, entered by the device: a send WR completed in error; the send queue is stopped, receives still work.',
  },
  ERR: {
    name: 'Error',
    summary: 'Every outstanding and later WR completes with IBV_WC_WR_FLUSH_ERR. Only RESET (or ERR again) from here.',
  },
};

// What each ibv_qp_attr_mask bit makes ibv_modify_qp() read (ibv_modify_qp(3)).
export const ATTRIBUTE_INFO = {
  IBV_QP_STATE: 'qp_state: the state to move to',
  IBV_QP_CUR_STATE: 'cur_qp_state: the state you believe the QP is in',
  IBV_QP_EN_SQD_ASYNC_NOTIFY: 'en_sqd_async_notify: raise IBV_EVENT_SQ_DRAINED when drained',
  IBV_QP_ACCESS_FLAGS: 'qp_access_flags: which remote operations (WRITE, READ, ATOMIC) the peer may perform',
  IBV_QP_PKEY_INDEX: 'pkey_index: index into the port\'s P_Key table',
  IBV_QP_PORT: 'port_num: the physical port',
  IBV_QP_QKEY: 'qkey: the Q_Key datagrams must carry',
  IBV_QP_AV: 'ah_attr: the path to the peer (LID, or on RoCE a GRH with the peer\'s GID)',
  IBV_QP_PATH_MTU: 'path_mtu: the MTU of the path',
  IBV_QP_TIMEOUT: 'timeout: local ACK timeout, 4.096 us * 2^timeout',
  IBV_QP_RETRY_CNT: 'retry_cnt: transport retries before IBV_WC_RETRY_EXC_ERR',
  IBV_QP_RNR_RETRY: 'rnr_retry: receiver-not-ready retries (7 = forever)',
  IBV_QP_RQ_PSN: 'rq_psn: the first PSN expected from the peer',
  IBV_QP_MAX_QP_RD_ATOMIC: 'max_rd_atomic: READs/atomics this QP may have outstanding',
  IBV_QP_ALT_PATH: 'alt_ah_attr & co.: the alternate path for automatic path migration',
  IBV_QP_MIN_RNR_TIMER: 'min_rnr_timer: how long a peer waits after this QP sends an RNR NAK',
  IBV_QP_SQ_PSN: 'sq_psn: the first PSN this QP sends',
  IBV_QP_DEST_QPN: 'dest_qp_num: the peer QP\'s number',
  IBV_QP_MAX_DEST_RD_ATOMIC: 'max_dest_rd_atomic: incoming READs/atomics this QP serves at once (responder resources)',
  IBV_QP_PATH_MIG_STATE: 'path_mig_state: automatic path migration state',
};

const STATE_ONLY = ['IBV_QP_STATE'];
const each = (list) => ({ RC: list, UC: list, UD: list });

// Every transition ibv_modify_qp() accepts, keyed "FROM>TO". `required` and
// `optional` list mask bits per transport; IBV_QP_STATE is always required.
// A transport missing from `transports` cannot make the transition.
const MODIFY_TRANSITIONS = {
  'RESET>RESET': { required: each(STATE_ONLY), optional: each([]) },
  'RESET>INIT': {
    required: {
      RC: ['IBV_QP_STATE', 'IBV_QP_PKEY_INDEX', 'IBV_QP_PORT', 'IBV_QP_ACCESS_FLAGS'],
      UC: ['IBV_QP_STATE', 'IBV_QP_PKEY_INDEX', 'IBV_QP_PORT', 'IBV_QP_ACCESS_FLAGS'],
      UD: ['IBV_QP_STATE', 'IBV_QP_PKEY_INDEX', 'IBV_QP_PORT', 'IBV_QP_QKEY'],
    },
    optional: each([]),
    does: {
      RC: 'The QP is bound to a port and P_Key and told which remote operations its peer may perform on this side\'s memory.',
      UC: 'The QP is bound to a port and P_Key and told which remote operations its peer may perform (UC allows WRITE, never READ or atomics).',
      UD: 'The QP is bound to a port and P_Key and given the Q_Key every datagram it accepts must carry.',
    },
  },
  'INIT>INIT': {
    required: each(STATE_ONLY),
    optional: {
      RC: ['IBV_QP_PKEY_INDEX', 'IBV_QP_PORT', 'IBV_QP_ACCESS_FLAGS'],
      UC: ['IBV_QP_PKEY_INDEX', 'IBV_QP_PORT', 'IBV_QP_ACCESS_FLAGS'],
      UD: ['IBV_QP_PKEY_INDEX', 'IBV_QP_PORT', 'IBV_QP_QKEY'],
    },
  },
  'INIT>RTR': {
    required: {
      RC: ['IBV_QP_STATE', 'IBV_QP_AV', 'IBV_QP_PATH_MTU', 'IBV_QP_DEST_QPN', 'IBV_QP_RQ_PSN',
        'IBV_QP_MAX_DEST_RD_ATOMIC', 'IBV_QP_MIN_RNR_TIMER'],
      UC: ['IBV_QP_STATE', 'IBV_QP_AV', 'IBV_QP_PATH_MTU', 'IBV_QP_DEST_QPN', 'IBV_QP_RQ_PSN'],
      UD: ['IBV_QP_STATE'],
    },
    optional: {
      RC: ['IBV_QP_ALT_PATH', 'IBV_QP_ACCESS_FLAGS', 'IBV_QP_PKEY_INDEX'],
      UC: ['IBV_QP_ALT_PATH', 'IBV_QP_ACCESS_FLAGS', 'IBV_QP_PKEY_INDEX'],
      UD: ['IBV_QP_PKEY_INDEX', 'IBV_QP_QKEY'],
    },
    does: {
      RC: 'The QP learns its one peer: the path (on RoCE a GRH with the peer\'s GID), the path MTU, the peer\'s QP number and the first PSN to expect; it also gets responder resources for incoming READs/atomics and the RNR NAK timer. Incoming packets are processed from now on.',
      UC: 'The QP learns its one peer: the path, the path MTU, the peer\'s QP number and the first PSN to expect. Incoming packets are processed from now on.',
      UD: 'Nothing to learn: a UD QP names its destination in every send WR (address handle, remote QPN, Q_Key). Only the state changes.',
    },
  },
  'RTR>RTS': {
    required: {
      RC: ['IBV_QP_STATE', 'IBV_QP_SQ_PSN', 'IBV_QP_TIMEOUT', 'IBV_QP_RETRY_CNT', 'IBV_QP_RNR_RETRY',
        'IBV_QP_MAX_QP_RD_ATOMIC'],
      UC: ['IBV_QP_STATE', 'IBV_QP_SQ_PSN'],
      UD: ['IBV_QP_STATE', 'IBV_QP_SQ_PSN'],
    },
    optional: {
      RC: ['IBV_QP_CUR_STATE', 'IBV_QP_ALT_PATH', 'IBV_QP_ACCESS_FLAGS', 'IBV_QP_MIN_RNR_TIMER',
        'IBV_QP_PATH_MIG_STATE'],
      UC: ['IBV_QP_CUR_STATE', 'IBV_QP_ALT_PATH', 'IBV_QP_ACCESS_FLAGS', 'IBV_QP_PATH_MIG_STATE'],
      UD: ['IBV_QP_CUR_STATE', 'IBV_QP_QKEY'],
    },
    does: {
      RC: 'The send side is configured: the first PSN to send, the ACK timeout, transport and RNR retry counts, and how many READs/atomics may be outstanding. Send WRs may be posted now.',
      UC: 'The send side gets its first PSN. Send WRs may be posted now.',
      UD: 'The send side gets its first PSN. Send WRs may be posted now.',
    },
  },
  'RTS>RTS': {
    required: each(STATE_ONLY),
    optional: {
      RC: ['IBV_QP_CUR_STATE', 'IBV_QP_ACCESS_FLAGS', 'IBV_QP_ALT_PATH', 'IBV_QP_PATH_MIG_STATE',
        'IBV_QP_MIN_RNR_TIMER'],
      UC: ['IBV_QP_CUR_STATE', 'IBV_QP_ACCESS_FLAGS', 'IBV_QP_ALT_PATH', 'IBV_QP_PATH_MIG_STATE'],
      UD: ['IBV_QP_CUR_STATE', 'IBV_QP_QKEY'],
    },
  },
  'RTS>SQD': {
    required: each(STATE_ONLY),
    optional: each(['IBV_QP_EN_SQD_ASYNC_NOTIFY']),
    does: each('The send queue drains: WRs already started complete, newly posted ones wait. With en_sqd_async_notify the device raises IBV_EVENT_SQ_DRAINED once it is idle; only then is it safe to change path attributes.'),
  },
  'SQD>RTS': {
    required: each(STATE_ONLY),
    optional: {
      RC: ['IBV_QP_CUR_STATE', 'IBV_QP_ALT_PATH', 'IBV_QP_ACCESS_FLAGS', 'IBV_QP_MIN_RNR_TIMER',
        'IBV_QP_PATH_MIG_STATE'],
      UC: ['IBV_QP_CUR_STATE', 'IBV_QP_ALT_PATH', 'IBV_QP_ACCESS_FLAGS', 'IBV_QP_PATH_MIG_STATE'],
      UD: ['IBV_QP_CUR_STATE', 'IBV_QP_QKEY'],
    },
    does: each('Sending resumes; WRs posted while draining start now.'),
  },
  'SQD>SQD': {
    required: each(STATE_ONLY),
    optional: {
      RC: ['IBV_QP_PORT', 'IBV_QP_AV', 'IBV_QP_TIMEOUT', 'IBV_QP_RETRY_CNT', 'IBV_QP_RNR_RETRY',
        'IBV_QP_MAX_QP_RD_ATOMIC', 'IBV_QP_MAX_DEST_RD_ATOMIC', 'IBV_QP_ALT_PATH', 'IBV_QP_ACCESS_FLAGS',
        'IBV_QP_PKEY_INDEX', 'IBV_QP_MIN_RNR_TIMER', 'IBV_QP_PATH_MIG_STATE'],
      UC: ['IBV_QP_AV', 'IBV_QP_ALT_PATH', 'IBV_QP_ACCESS_FLAGS', 'IBV_QP_PKEY_INDEX',
        'IBV_QP_PATH_MIG_STATE'],
      UD: ['IBV_QP_PKEY_INDEX', 'IBV_QP_QKEY'],
    },
  },
  'SQE>RTS': {
    transports: ['UC', 'UD'],
    required: { UC: STATE_ONLY, UD: STATE_ONLY },
    optional: {
      UC: ['IBV_QP_CUR_STATE', 'IBV_QP_ACCESS_FLAGS'],
      UD: ['IBV_QP_CUR_STATE', 'IBV_QP_QKEY'],
    },
    does: each('Sending resumes after the error: the failed WR completed with an error status and the WRs behind it were flushed; the receive side kept working throughout.'),
  },
  'ERR>ERR': { required: each(STATE_ONLY), optional: each([]) },
};

// Every state but RESET may be moved to RESET or ERR with just IBV_QP_STATE.
for (const from of STATES) {
  if (from === 'RESET') continue;
  MODIFY_TRANSITIONS[`${from}>RESET`] = {
    required: each(STATE_ONLY),
    optional: each([]),
    does: each('Back to the start: posted WRs are discarded without completions (drain them first), all attributes are forgotten. The QP can be brought up again from RESET→INIT, with new PSNs.'),
  };
  if (from !== 'ERR') {
    MODIFY_TRANSITIONS[`${from}>ERR`] = {
      required: each(STATE_ONLY),
      optional: each([]),
      does: each('Every outstanding and every later WR completes with IBV_WC_WR_FLUSH_ERR, so the application gets all its buffers back; the usual first step of tearing a connection down.'),
    };
  }
}

// Transitions the device makes by itself; ibv_modify_qp() cannot request them.
const DEVICE_TRANSITIONS = [
  {
    from: 'RTS', to: 'SQE', transports: ['UC', 'UD'],
    cause: 'a send WR completed in error (for example a local length or protection error)',
    effect: 'Only the send queue stops: later send WRs complete with IBV_WC_WR_FLUSH_ERR, receives keep working. Move the QP back to RTS to resume.',
  },
  {
    from: 'RTS', to: 'ERR', transports: ['RC'],
    cause: 'a WR completed in error (retries exhausted, remote access error, RNR retries exceeded, ...)',
    effect: 'RC has no SQE state: the whole QP goes to ERR and every outstanding WR on both queues is flushed with IBV_WC_WR_FLUSH_ERR. Recover with ERR→RESET→INIT→RTR→RTS.',
  },
  {
    from: 'SQD', to: 'ERR', transports: ['RC'],
    cause: 'a WR still draining completed in error',
    effect: 'The whole QP goes to ERR and every outstanding WR is flushed with IBV_WC_WR_FLUSH_ERR.',
  },
  {
    from: 'SQD', to: 'SQE', transports: ['UC', 'UD'],
    cause: 'a send WR still draining completed in error',
    effect: 'Only the send queue stops; move the QP back to RTS to resume.',
  },
];

export function isState(state) {
  return STATES.includes(state);
}

export function isTransport(transport) {
  return TRANSPORTS.includes(transport);
}

function checkArguments(from, to, transport) {
  if (!isState(from)) throw new RangeError(`unknown QP state: ${from}`);
  if (to !== undefined && !isState(to)) throw new RangeError(`unknown QP state: ${to}`);
  if (!isTransport(transport)) throw new RangeError(`unknown transport: ${transport}`);
}

function modifyEntry(from, to, transport) {
  const entry = MODIFY_TRANSITIONS[`${from}>${to}`];
  if (!entry) return null;
  if (entry.transports && !entry.transports.includes(transport)) return null;
  return entry;
}

// Whether a QP of this transport can ever be in the state.
export function isReachable(state, transport) {
  checkArguments(state, undefined, transport);
  return !(state === 'SQE' && transport === 'RC');
}

// The transition ibv_modify_qp() accepts from `from` to `to`, or null.
export function modifyTransition(from, to, transport) {
  checkArguments(from, to, transport);
  if (!isReachable(from, transport)) return null;
  const entry = modifyEntry(from, to, transport);
  if (!entry) return null;
  return {
    from,
    to,
    transport,
    required: [...entry.required[transport]],
    optional: [...entry.optional[transport]],
    does: entry.does ? entry.does[transport] : sameStateText(to),
  };
}

function sameStateText(state) {
  return `The QP stays in ${state}; only the attributes listed as optional may be changed.`;
}

export function isLegal(from, to, transport) {
  return modifyTransition(from, to, transport) !== null;
}

// States ibv_modify_qp() can move a QP to from `from`, in STATES order.
// The QP's own state is included when a modify in place is allowed.
export function legalTargets(from, transport) {
  return STATES.filter((to) => isLegal(from, to, transport));
}

// Transitions the device may make by itself from `from` on this transport.
export function deviceTransitions(from, transport) {
  checkArguments(from, undefined, transport);
  return DEVICE_TRANSITIONS.filter((t) => t.from === from && t.transports.includes(transport))
    .map((t) => ({ ...t, transports: [...t.transports] }));
}

// The device transition that a failed send WR causes in `from`, or null.
export function sendErrorTransition(from, transport) {
  return deviceTransitions(from, transport)[0] ?? null;
}

// "IBV_QP_STATE | IBV_QP_PKEY_INDEX | ..." for a list of mask bits.
export function maskExpression(bits) {
  return bits.length ? bits.join(' | ') : '0';
}

// Would ibv_modify_qp(qp, &attr, mask) accept this mask for the transition?
// Returns { ok, missing, notAllowed } (both lists of mask bit names).
export function checkMask(from, to, transport, mask) {
  const transition = modifyTransition(from, to, transport);
  if (!transition) return { ok: false, missing: [], notAllowed: [...mask], illegalTransition: true };
  const allowed = new Set([...transition.required, ...transition.optional]);
  const missing = transition.required.filter((bit) => !mask.includes(bit));
  const notAllowed = mask.filter((bit) => !allowed.has(bit));
  return { ok: missing.length === 0 && notAllowed.length === 0, missing, notAllowed, illegalTransition: false };
}

const ORDER_OF_BRING_UP = ['RESET', 'INIT', 'RTR', 'RTS'];

// Why ibv_modify_qp() refuses `from` -> `to` (assumes the pair is illegal).
function whyIllegal(from, to, transport) {
  if (!isReachable(from, transport)) {
    return `An RC QP is never in SQE: when an RC send fails the device moves the whole QP to ERR instead.`;
  }
  if (to === 'SQE') {
    if (transport === 'RC') {
      return 'RC has no SQE state: a failed RC work request moves the QP to ERR. No ibv_modify_qp call can request SQE; it returns EINVAL.';
    }
    return 'SQE cannot be requested: the device enters it by itself when a send WR completes in error (try "Simulate a failed send" in RTS). ibv_modify_qp returns EINVAL.';
  }
  if (from === 'RESET' && to === 'ERR') {
    return 'RESET→ERR: the IB state table draws "any state → Error", but Linux (ib_modify_qp_is_ok) has no RESET→ERR entry: a QP in RESET has no work requests to flush. ibv_modify_qp returns EINVAL.';
  }
  if (from === 'ERR') {
    return `ERR→${to}: a QP in ERR can only go to RESET (and be brought up again from there). ibv_modify_qp returns EINVAL.`;
  }
  if (from === to) {
    return `${from}→${from} is not a modify in place the table allows. ibv_modify_qp returns EINVAL.`;
  }
  const fromStep = ORDER_OF_BRING_UP.indexOf(from);
  const toStep = ORDER_OF_BRING_UP.indexOf(to);
  if (fromStep >= 0 && toStep > fromStep + 1) {
    const skipped = ORDER_OF_BRING_UP.slice(fromStep + 1, toStep);
    const through = skipped.length === 1 ? skipped[0] : `${skipped.slice(0, -1).join(', ')} and ${skipped.at(-1)}`;
    return `${from}→${to}: a QP must pass through ${through} first, one transition per call. ibv_modify_qp returns EINVAL.`;
  }
  if (to === 'SQD') {
    return `${from}→SQD: only a QP in RTS can be drained; the send queue must be running first. ibv_modify_qp returns EINVAL.`;
  }
  if (from === 'SQE') {
    return `SQE→${to}: from SQE the only ways on are back to RTS (resume sending), RESET or ERR. ibv_modify_qp returns EINVAL.`;
  }
  if (from === 'SQD') {
    return `SQD→${to}: a draining QP can go back to RTS, stay in SQD to change attributes, or go to RESET or ERR. ibv_modify_qp returns EINVAL.`;
  }
  if (toStep >= 0 && fromStep > toStep) {
    return `${from}→${to}: states never go backwards except through RESET: modify to RESET, then bring the QP up again (RESET→INIT→...). ibv_modify_qp returns EINVAL.`;
  }
  if (from === 'RESET' || from === 'INIT' || from === 'RTR') {
    return `${from}→${to}: not in the QP state table. ibv_modify_qp returns EINVAL.`;
  }
  return `${from}→${to} is not a legal transition. ibv_modify_qp returns EINVAL.`;
}

// Everything the explorer shows about trying `from` -> `to` with
// ibv_modify_qp(): { legal, kind, message, required, optional, errno, ... }.
export function explain(from, to, transport) {
  checkArguments(from, to, transport);
  const transition = modifyTransition(from, to, transport);
  if (transition) {
    const kind = from === to ? 'modify-in-place' : 'modify';
    const mask = maskExpression(transition.required);
    const message = from === to
      ? `${from}→${from} (${transport}): allowed as a modify in place with mask ${mask}. ${transition.does}`
      : `${from}→${to} (${transport}): ibv_modify_qp succeeds with mask ${mask}. ${transition.does}`;
    return {
      legal: true,
      kind,
      from,
      to,
      transport,
      required: transition.required,
      optional: transition.optional,
      errno: null,
      does: transition.does,
      message,
    };
  }
  return {
    legal: false,
    kind: 'illegal',
    from,
    to,
    transport,
    required: [],
    optional: [],
    errno: 'EINVAL',
    does: null,
    message: whyIllegal(from, to, transport),
  };
}

// Notes for the transports the explorer does not model transition by transition.
export const OTHER_TRANSPORT_NOTES = {
  XRC: 'XRC (IBV_QPT_XRC_SEND / IBV_QPT_XRC_RECV) follows the RC table with one side left out each: the send QP has no receive side, so INIT→RTR needs neither max_dest_rd_atomic nor min_rnr_timer; the receive (target) QP sends only ACKs, so RTR→RTS needs just sq_psn and timeout. Receives come from a shared receive queue named by each message.',
  DC: 'Dynamically Connected (NVIDIA mlx5 only, through mlx5dv_create_qp): a DCI initiator goes RESET→INIT→RTR→RTS without a fixed peer and names the target DCT per work request; a DCT target only goes to RTR. The mask rules are the provider\'s, not in ibv_modify_qp(3).',
};

// The transitions the reference table shows, in the order a QP meets them:
// bring-up, changes in place, draining, and recovery from SQE.
export const TABLE_TRANSITIONS = [
  ['RESET', 'INIT'], ['INIT', 'RTR'], ['RTR', 'RTS'], ['RTS', 'RTS'],
  ['RTS', 'SQD'], ['SQD', 'SQD'], ['SQD', 'RTS'], ['SQE', 'RTS'],
];

// The ibv_qp_attr x transition table for one transport, derived from the same
// MODIFY_TRANSITIONS the explorer uses: { transitions: [{ from, to, legal }],
// rows: [{ bit, field, cells: ['required' | 'optional' | '' | 'n/a'] }] } with
// one row per mask bit that some shown transition reads, in ATTRIBUTE_INFO
// order. 'n/a' marks a transition this transport cannot make.
export function attributeTable(transport) {
  const transitions = TABLE_TRANSITIONS.map(([from, to]) => ({
    from, to, transition: isReachable(from, transport) ? modifyTransition(from, to, transport) : null,
  }));
  const rows = [];
  for (const bit of Object.keys(ATTRIBUTE_INFO)) {
    const cells = transitions.map(({ transition }) => {
      if (!transition) return 'n/a';
      if (transition.required.includes(bit)) return 'required';
      if (transition.optional.includes(bit)) return 'optional';
      return '';
    });
    if (cells.some((cell) => cell === 'required' || cell === 'optional')) {
      rows.push({ bit, field: ATTRIBUTE_INFO[bit].split(':')[0], cells });
    }
  }
  return { transitions: transitions.map(({ from, to, transition }) => ({ from, to, legal: !!transition })), rows };
}
