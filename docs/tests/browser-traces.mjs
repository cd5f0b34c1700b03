// Browser checks of the trace viewer for any screen (issue 42 item 7), for docs/tests/browser.mjs
// to call on a viewer it has loaded (a Playwright locator of one .trace-viewer, the file's trace):
//   checkCmLabels     rdma_cm's packets read REQ, REP, RTU, DREQ, DREP, not "SEND Only · PSN n"
//   checkJumps        "← WRITE →", "← READ →", "← completion →" land on the file's next and
//                     previous such step, and are absent when the trace has none
//   checkLanesInView  stepped to the middle of a long trace: the lane names still on top of the
//                     frame, uncovered, and the current step inside the part of the frame on screen
//   checkTwoLanesOnPhone  at 390 px: two lanes side by side, no sideways scrolling, and the reader
//                     can switch which (the lanes menu)
// Each throws an Error saying what is wrong, or returns a line for pass().

// The rdma_cm packets: UD SENDs to QP 1, in sending order.
function cmPacketsInOrder(trace) {
  const sentAt = (p) => p.tx_ns ?? p.rx_ns ?? 0;
  return trace.packets.map((p, index) => ({ p, index }))
    .filter(({ p }) => p.transport === 'UD' && parseInt(p.qpn, 16) === 1)
    .sort((a, b) => sentAt(a.p) - sentAt(b.p) || a.index - b.index);
}

// With the ladder at its end. One connection set up and torn down: the client's REQ, the server's
// REP, the client's RTU; a DREQ from either side and the other side's DREP.
export async function checkCmLabels(viewer, trace, src) {
  const cm = cmPacketsInOrder(trace);
  if (!cm.length) return null;
  const labels = await viewer.evaluate((root) => Object.fromEntries([...root.querySelectorAll('.tv-packet')]
    .map((g) => [g.dataset.packet, { cm: g.dataset.cm ?? null, text: g.querySelector('.tv-plabel')?.textContent ?? '' }])));
  const names = cm.length === 5 ? ['REQ', 'REP', 'RTU', 'DREQ', 'DREP'] : ['REQ', 'REP', 'RTU'];
  names.forEach((name, i) => {
    const { p, index } = cm[i];
    const shown = labels[index];
    if (!shown) throw new Error(`${src}: rdma_cm packet ${index} is not drawn`);
    if (shown.cm !== name || !shown.text.startsWith(`CM ${name} `)) throw new Error(`${src}: rdma_cm packet ${index} (${p.from} → ${p.to}) reads "${shown.text}", not CM ${name}`);
  });
  const [req, rep, rtu] = cm.map(({ p }) => p);
  const client = trace.meta?.client ?? req.from;
  if (req.from !== client || rep.to !== client || rtu.from !== client) throw new Error(`${src}: the REQ, REP and RTU do not go client, server, client`);
  if (cm.length === 5 && cm[3].p.from === cm[4].p.from) throw new Error(`${src}: the DREP comes from the side that sent the DREQ`);
  const asData = cm.find(({ index }) => /SEND Only|PSN/.test(labels[index]?.text ?? ''));
  if (asData) throw new Error(`${src}: rdma_cm packet ${asData.index} is still labelled as data: "${labels[asData.index].text}"`);
  const key = await viewer.locator('[data-cm-key]').textContent().catch(() => '');
  if (!/REQ/.test(key)) throw new Error(`${src}: the key does not explain the CM labels`);
  return `rdma_cm's ${cm.length} packets read ${names.join(', ')}${cm.length > names.length ? ', …' : ''} in order, from the right side each`;
}

export const JUMP_KINDS = {
  write: { what: 'WRITE', matches: (e) => e.event === 'post_send' && /^RDMA_WRITE/.test(e.opcode ?? ''), words: /post RDMA_WRITE/ },
  read: { what: 'READ', matches: (e) => e.event === 'post_send' && /^RDMA_READ/.test(e.opcode ?? ''), words: /post RDMA_READ/ },
  completion: { what: 'completion', matches: (e) => e.event === 'completion', words: /CQE/ },
};

// With every step kept (the QP filter on "all"): from the start, next lands on the file's first
// such step, next again on the second, previous back on the first; the step named in the words.
export async function checkJumps(viewer, trace, src) {
  const done = [];
  for (const [kind, { what, matches, words }] of Object.entries(JUMP_KINDS)) {
    const targets = trace.timeline.flatMap((s, i) => (s.kind === 'event' && matches(trace.events[s.index]) ? [i + 1] : []));
    const next = viewer.locator(`[data-action="next-${kind}"]`);
    const previous = viewer.locator(`[data-action="previous-${kind}"]`);
    if (!targets.length) {
      if (await next.count()) throw new Error(`${src}: a "next ${what}" button, and the trace has no ${what}`);
      continue;
    }
    if (!await next.count() || !await previous.count()) throw new Error(`${src}: no buttons to the next and previous ${what}, and the trace has ${targets.length}`);
    await viewer.locator('[data-action="start"]').click();
    const landed = async (want, how) => {
      const [position, stepKind, now] = await viewer.evaluate((root) => [Number(root.dataset.position), root.dataset.stepKind, root.querySelector('[data-now]')?.textContent ?? '']);
      if (position !== want || stepKind !== 'event' || !words.test(now)) throw new Error(`${src}: ${how} ${what} lands on step ${position} ("${now}"), not step ${want}`);
    };
    await next.click();
    await landed(targets[0], 'from the start, the next');
    if (targets.length > 1) {
      await next.click();
      await landed(targets[1], 'the next');
      await previous.click();
      await landed(targets[0], 'the previous');
    }
    if (!await previous.isDisabled()) throw new Error(`${src}: on the first ${what}, "previous ${what}" is not disabled`);
    done.push(`${targets.length} ${what}${targets.length > 1 ? 's' : ''}`);
  }
  return `the jump buttons land on the next and previous of ${done.join(', ')}`;
}

// Runs in the page: where the viewer's frame, lane names and current step are on the screen.
export function laneViewInPage(root) {
  const frame = root.querySelector('.tv-frame');
  const box = frame.getBoundingClientRect();
  const inner = { top: box.top + frame.clientTop, left: box.left + frame.clientLeft };
  inner.bottom = inner.top + frame.clientHeight;
  inner.right = inner.left + frame.clientWidth;
  const plain = (r) => ({ top: r.top, bottom: r.bottom, left: r.left, right: r.right });
  const lanes = [...root.querySelectorAll('[data-lane]')].map((text) => {
    const r = text.getBoundingClientRect();
    const x = (r.left + r.right) / 2;
    const y = (r.top + r.bottom) / 2;
    const onScreen = x >= 0 && y >= 0 && x < innerWidth && y < innerHeight;
    const top = onScreen ? document.elementFromPoint(x, y) : null;
    // What a tap there would hit: the row of lane names, not the ladder or a bar of the page.
    return { name: text.textContent, host: text.dataset.column ?? null, ...plain(r), uncovered: Boolean(top?.closest('[data-lane-names]')) };
  });
  const index = root.dataset.stepIndex;
  const item = root.querySelector(root.dataset.stepKind === 'event' ? `[data-event="${index}"]` : `[data-packet="${index}"]`);
  const current = root.querySelector('[data-current]');
  return {
    frame: inner, scrollTop: frame.scrollTop, scrollWidth: frame.scrollWidth, clientWidth: frame.clientWidth,
    names: plain(root.querySelector('[data-lane-names]').getBoundingClientRect()), lanes,
    current: current ? plain(current.getBoundingClientRect()) : null, item: item ? plain(item.getBoundingClientRect()) : null,
    lanesDrawn: Number(root.dataset.lanes), position: Number(root.dataset.position), steps: Number(root.dataset.steps),
    viewport: { width: innerWidth, height: innerHeight },
  };
}

// Steps to the middle of the trace as a reader would: jumps from completion to completion, then
// a step forward. Returns the position reached.
async function stepToMiddle(viewer) {
  // The page as a reader has it: the viewer's top just under the site's bar, its buttons in reach.
  await viewer.evaluate((root) => { root.scrollIntoView({ block: 'start' }); window.scrollBy(0, -100); });
  await viewer.locator('[data-action="start"]').click();
  const next = viewer.locator('[data-action="next-completion"]');
  for (let i = 0; i < 400; i += 1) {
    const { position, steps } = await viewer.evaluate((root) => ({ position: Number(root.dataset.position), steps: Number(root.dataset.steps) }));
    if (position >= steps / 2 || !await next.count() || await next.isDisabled()) break;
    await next.click();
  }
  await viewer.locator('[data-action="forward"]').click();
  return Number(await viewer.getAttribute('data-position'));
}

// The current step inside the frame's part on the screen, under the lane names (a row's slack).
function currentStepProblem(view) {
  const { frame, names, current, item, viewport } = view;
  if (!current || !item) return `no current step drawn at step ${view.position}`;
  const bandTop = Math.max(names.bottom, 0);
  const bandBottom = Math.min(frame.bottom, viewport.height);
  if (current.top < bandTop - 1 || current.bottom > bandBottom + 1) {
    return `the current step (row ${Math.round(current.top)}..${Math.round(current.bottom)} px) is outside the frame's part on the screen under the lane names (${Math.round(bandTop)}..${Math.round(bandBottom)} px)`;
  }
  if (item.right <= frame.left || item.left >= frame.right) return `the current step's mark (${Math.round(item.left)}..${Math.round(item.right)} px) is outside the frame sideways (${Math.round(frame.left)}..${Math.round(frame.right)} px)`;
  return '';
}
function laneNamesProblem(view) {
  const { frame, names, lanes } = view;
  if (Math.abs(names.top - frame.top) > 1) return `the lane names are ${Math.round(names.top - frame.top)} px from the top of the frame (scrolled away)`;
  const hidden = lanes.filter((l) => l.top < frame.top - 1 || l.bottom > frame.bottom + 1 || l.right <= frame.left || l.left >= frame.right || !l.uncovered);
  if (hidden.length) return `lane name(s) not in sight: ${hidden.map((l) => `"${l.name}"${l.uncovered ? '' : ' (covered)'}`).join(', ')}`;
  return '';
}

// A long trace at any width: stepped to its middle, the ladder has scrolled under the lane names,
// which stay on top, each uncovered; the current step is where the reader can see it.
export async function checkLanesInView(viewer, src, width) {
  const position = await stepToMiddle(viewer);
  const afterStep = await viewer.evaluate(laneViewInPage);  // the page as the last click left it
  const stepProblem = currentStepProblem(afterStep);
  if (stepProblem) throw new Error(`${src} at ${width} px, step ${position}: ${stepProblem}`);
  if (afterStep.scrollTop <= 0) throw new Error(`${src} at ${width} px: at step ${position} of ${afterStep.steps} the ladder has not scrolled (nothing checked)`);
  // The reader looks at the frame: the lane names must be there, on top of the ladder.
  await viewer.locator('.tv-frame').evaluate((frame) => { frame.scrollIntoView({ block: 'start' }); window.scrollBy(0, -120); });
  const view = await viewer.evaluate(laneViewInPage);
  const namesProblem = laneNamesProblem(view);
  if (namesProblem) throw new Error(`${src} at ${width} px, step ${position}: ${namesProblem}`);
  if (view.lanes.length < 2) throw new Error(`${src} at ${width} px: ${view.lanes.length} lane name(s)`);
  return `at ${width} px, stepped to ${position} of ${view.steps}: the ${view.lanes.length} lane names stay on top of the scrolled ladder (${Math.round(view.scrollTop)} px down) and the current step is in sight`;
}

// At 390 px (the caller has set the viewport and opened the page). twoHosts: a viewer of a
// two-host trace; manyHosts: one of three hosts or more, a long one. Each: two lanes, a line per
// host, no sideways scrolling; the lanes menu switches them (another pair; all of them).
export async function checkTwoLanesOnPhone(viewer, trace, src) {
  const lanes = async () => viewer.evaluate((root) => ({
    drawn: Number(root.dataset.lanes),
    hosts: [...root.querySelectorAll('[data-column]')].map((t) => t.dataset.column),
    scrollWidth: root.querySelector('.tv-frame').scrollWidth,
    clientWidth: root.querySelector('.tv-frame').clientWidth,
  }));
  const two = await lanes();
  const names = trace.hosts.map((h) => h.name);
  if (two.drawn !== 2 || two.hosts.length !== 2 || two.hosts.some((h) => !names.includes(h))) {
    throw new Error(`${src}: ${two.drawn} lanes drawn (${two.hosts.join(', ')}), not two of ${names.join(', ')}`);
  }
  if (two.scrollWidth > two.clientWidth + 1) throw new Error(`${src}: the two lanes are ${two.scrollWidth} px wide in a ${two.clientWidth} px frame`);
  const notes = [];
  if (names.length > 2) {
    // Stepping through: names on top, the current step in sight, as on a laptop.
    notes.push((await checkLanesInView(viewer, src, 390)).replace(/^at 390 px, /, ''));
    const menu = viewer.locator('[data-control="link"]');
    const choices = await menu.evaluate((select) => [...select.options].map((o) => o.value));
    const other = choices.find((v) => v.startsWith('link:') && v !== `link:${two.hosts.join('|')}`);
    if (!other) throw new Error(`${src}: the lanes menu offers no other pair of hosts (${choices.join(', ')})`);
    await menu.selectOption(other);
    for (const host of other.slice(5).split('|')) await viewer.locator(`[data-column="${host}"]`).waitFor();
    const switched = await lanes();
    if (switched.drawn !== 2) throw new Error(`${src}: ${switched.drawn} lanes after picking ${other}`);
    const problem = currentStepProblem(await viewer.evaluate(laneViewInPage));
    if (problem && Number(await viewer.getAttribute('data-position')) > 0) throw new Error(`${src}: after picking ${other}: ${problem}`);
    notes.push(`the lanes menu switches to ${switched.hosts.join(' ↔ ')}`);
    await menu.selectOption('all');
  } else {
    await viewer.locator('[data-control="lanes"]').selectOption({ index: 1 });
  }
  const all = await lanes();
  const wanted = names.length > 2 ? names.length : 4;
  if (all.drawn !== wanted || all.scrollWidth <= all.clientWidth) throw new Error(`${src}: "all" in the lanes menu draws ${all.drawn} lanes, ${all.scrollWidth} px in a ${all.clientWidth} px frame (want ${wanted}, scrolled sideways)`);
  notes.push(`"all" gives ${wanted} lanes, scrolled sideways`);
  return `${src}: two lanes side by side (${two.hosts.join(' ↔ ')}), no sideways scrolling; ${notes.join('; ')}`;
}
