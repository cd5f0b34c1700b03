// Which device and port limits each lesson reads: the fields of
// ibv_device_attr(_ex) and ibv_port_attr that appear as `.field` or `->field`
// (read, not assigned) in the lesson's source, and in the common library files it includes
// (followed through "rdmalab/x.hpp" includes to common/src/x.cpp). Derived from
// the sources at build time for the reference chapter, so it cannot drift.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPOSITORY_ROOT, sourceFiles } from './sources.mjs';

// The limits, in the order a program meets them, with what each bounds.
export const LIMIT_FIELDS = {
  phys_port_cnt: ['device', 'ports on the device (ports are numbered from 1)'],
  gid_tbl_len: ['port', 'entries in the port\'s GID table (RoCE v1/v2 GIDs per IP address)'],
  active_mtu: ['port', 'the MTU the port runs now: the most a QP\'s path_mtu may be'],
  max_mtu: ['port', 'the largest MTU the port supports'],
  max_msg_sz: ['port', 'the largest message one WR may carry'],
  max_mr_size: ['device', 'the largest memory region, in bytes'],
  max_mr: ['device', 'memory regions per device'],
  max_pd: ['device', 'protection domains'],
  max_qp: ['device', 'queue pairs'],
  max_qp_wr: ['device', 'WRs per send or receive queue: bounds qp_init_attr.cap.max_send_wr / max_recv_wr'],
  max_sge: ['device', 'SGEs per WR: bounds cap.max_send_sge / max_recv_sge'],
  max_cqe: ['device', 'entries per CQ: bounds ibv_create_cq\'s cqe'],
  max_qp_rd_atom: ['device', 'READs/atomics a QP serves at once as responder: bounds qp_attr.max_dest_rd_atomic'],
  max_qp_init_rd_atom: ['device', 'READs/atomics a QP may have outstanding as requester: bounds qp_attr.max_rd_atomic'],
  max_srq: ['device', 'shared receive queues'],
  max_srq_wr: ['device', 'WRs per SRQ'],
  max_mw: ['device', 'memory windows (0: none)'],
  device_cap_flags: ['device', 'capability bits, e.g. IBV_DEVICE_MEM_WINDOW_TYPE_2B'],
  atomic_cap: ['device', 'whether atomics work: IBV_ATOMIC_NONE, _HCA or _GLOB'],
  odp_caps: ['device (ex)', 'on-demand paging support per transport and operation'],
};

function fieldsIn(text) {
  return Object.keys(LIMIT_FIELDS).filter((field) => new RegExp(`(\\.|->)${field}\\b(?!\\s*=[^=])`).test(text));
}

function includedLibraryFiles(text, root) {
  const found = new Set();
  const queue = [...text.matchAll(/#include\s+"rdmalab\/([\w/]+)\.hpp"/g)].map((m) => m[1]);
  while (queue.length) {
    const name = queue.shift();
    for (const file of [`common/src/${name}.cpp`, `common/include/rdmalab/${name}.hpp`]) {
      if (found.has(file) || !existsSync(path.join(root, file))) continue;
      found.add(file);
      const body = readFileSync(path.join(root, file), 'utf8');
      queue.push(...[...body.matchAll(/#include\s+"rdmalab\/([\w/]+)\.hpp"/g)].map((m) => m[1]));
    }
  }
  return [...found].sort();
}

// [{ lesson, slug, own: [field], library: [{ field, files: [file] }] }]
export function lessonLimits(root = REPOSITORY_ROOT) {
  return sourceFiles(root).filter((source) => source.lesson).map((source) => {
    const own = fieldsIn(source.text);
    const library = new Map();
    for (const file of includedLibraryFiles(source.text, root)) {
      for (const field of fieldsIn(readFileSync(path.join(root, file), 'utf8'))) {
        if (own.includes(field)) continue;
        library.set(field, [...(library.get(field) ?? []), file]);
      }
    }
    return {
      lesson: source.slug,
      file: source.file,
      own,
      library: [...library].map(([field, files]) => ({ field, files }))
        .sort((a, b) => Object.keys(LIMIT_FIELDS).indexOf(a.field) - Object.keys(LIMIT_FIELDS).indexOf(b.field)),
    };
  });
}
