// One entry per libibverbs / librdmacm call the lessons use (lessons/*/*.cpp, common/src/*.cpp,
// gpu/src/*.cpp), plus ibv_query_gid, which the course also teaches. The reference pages
// render this list: one page per call, in the order a program meets them (devices, PD, MR,
// CQ, SRQ, QP, posting, polling and events, teardown; then rdma_cm, then its simplified API).
//
// Sources: signatures copied from the installed headers (infiniband/verbs.h, rdma/rdma_cma.h,
// rdma/rdma_verbs.h of rdma-core 44); semantics and errnos from the man pages installed with
// libibverbs-dev and librdmacm-dev, and, where a man page documents no errno, from the rdma-core
// v44 source (libibverbs, librdmacm, providers/rxe and providers/mlx5) and the kernel's
// drivers/infiniband/core. Every string is plain text (no markdown, no HTML).
//
// Fields: name, library, header, signature, summary, parameters [{name, text}], returns,
// errors [{errno, text}] (may be empty when nothing is documented), notes [] (0 to 3),
// chapter {text, link} (page-level link only).

const CHAPTERS = {
  start: { text: 'Getting started', link: '/getting-started' },
  objects: { text: 'The verbs objects', link: '/verbs-objects' },
  registration: { text: 'Memory registration', link: '/memory-registration' },
  windows: { text: 'Memory windows and on-demand paging', link: '/memory-windows' },
  gpudirect: { text: 'GPUDirect RDMA', link: '/gpudirect' },
  qps: { text: 'Queue pairs and their state machine', link: '/queue-pairs' },
  operations: { text: 'SEND, WRITE and READ', link: '/operations' },
  completions: { text: 'Completions', link: '/completions' },
  signaling: { text: 'Signaling, CQ size and the extended API', link: '/signaling' },
  errors: { text: 'Errors and recovery', link: '/errors' },
  unreliable: { text: 'UC, UD and multicast', link: '/unreliable-transports' },
  connecting: { text: 'Connecting with rdma_cm', link: '/connecting' },
  byHand: { text: 'Connecting by hand, and the simplified API', link: '/connecting-by-hand' },
};

// A fresh object per entry, so that no two entries share one.
const chapter = (key) => ({ ...CHAPTERS[key] });

const VERBS_H = 'infiniband/verbs.h';
const CMA_H = 'rdma/rdma_cma.h';
const RDMA_VERBS_H = 'rdma/rdma_verbs.h';
const IBV = 'libibverbs';
const RDMACM = 'librdmacm';

export const VERBS = [
  // ---------------------------------------------------------------- devices and ports
  {
    name: 'ibv_get_device_list',
    library: IBV,
    header: VERBS_H,
    signature: 'struct ibv_device **ibv_get_device_list(int *num_devices);',
    summary:
      'Returns a NULL-terminated array of the RDMA devices that libibverbs can drive on this host. It is the first verbs call of every program: a device must come from this list before it can be opened.',
    parameters: [
      { name: 'num_devices', text: 'optional; when not NULL it receives the number of devices in the array (0 when there are none).' },
    ],
    returns:
      'The array, to be released with ibv_free_device_list, or NULL with errno set. Finding no device is not an error: the array is then empty and num_devices receives 0.',
    errors: [
      { errno: 'EPERM', text: 'permission denied.' },
      { errno: 'ENOSYS', text: 'the kernel\'s verbs support cannot be found (no netlink answer and no /sys/class/infiniband_verbs, for example ib_uverbs not loaded), or its verbs ABI version is one this library does not accept.' },
      { errno: 'ENOMEM', text: 'out of memory.' },
    ],
    notes: [
      'A device whose kernel driver is loaded but whose userspace provider is missing (on Debian, the ibverbs-providers package) is silently left out of the list; set IBV_SHOW_WARNINGS=1 to have the library say so.',
      'Open every device you need before freeing the list: after ibv_free_device_list only the opened contexts stay valid.',
      'A statically linked program must link the providers in too (RDMA_STATIC_PROVIDERS), or the list is always empty.',
    ],
    chapter: chapter('objects'),
  },
  {
    name: 'ibv_get_device_name',
    library: IBV,
    header: VERBS_H,
    signature: 'const char *ibv_get_device_name(struct ibv_device *device);',
    summary:
      'Returns the kernel name of a device, such as mlx5_0 or rxe0: the name ibv_devices and ibv_devinfo print and the lessons\' -d option matches.',
    parameters: [
      { name: 'device', text: 'an entry of the array from ibv_get_device_list, or context->device of an open context.' },
    ],
    returns: 'A pointer to the name, owned by the library (do not free it), or NULL on failure.',
    errors: [],
    notes: [
      'Matching devices by name is how a program honours a user\'s choice of adapter; the order of the device list is not guaranteed to be stable across hosts or reboots.',
    ],
    chapter: chapter('start'),
  },
  {
    name: 'ibv_get_device_guid',
    library: IBV,
    header: VERBS_H,
    signature: '__be64 ibv_get_device_guid(struct ibv_device *device);',
    summary: 'Returns the node GUID of a device: its 64-bit globally unique identifier.',
    parameters: [
      { name: 'device', text: 'an entry of the array from ibv_get_device_list, or context->device of an open context.' },
    ],
    returns: 'The GUID in network byte order (__be64): convert it with be64toh before printing it as a number.',
    errors: [],
    notes: [
      'The GUID identifies the adapter (in logs, inventories, ibv_devinfo output); connections are addressed by GID or LID, not by this value.',
    ],
    chapter: chapter('start'),
  },
  {
    name: 'ibv_open_device',
    library: IBV,
    header: VERBS_H,
    signature: 'struct ibv_context *ibv_open_device(struct ibv_device *device);',
    summary:
      'Opens a device and returns a context: the handle through which this process creates every later object (PD, MR, CQ, QP) on that device.',
    parameters: [
      { name: 'device', text: 'an entry of the array from ibv_get_device_list.' },
    ],
    returns: 'The new context, or NULL with errno set.',
    errors: [
      { errno: 'EACCES', text: 'the open(2) of the device file /dev/infiniband/uverbsN was refused for lack of permission. errno is whatever the last failed open left: when the first open fails, libibverbs tries again through /dev/char/MAJOR:MINOR, so the caller may see EACCES again (after a wait of up to 5 seconds) or, where /dev/char does not exist, as in many containers, ENOENT instead.' },
      { errno: 'ENOMEM', text: 'libibverbs could not allocate the context structure.' },
    ],
    notes: [
      'Objects belong to the context that created them: they cannot be mixed with objects of another context, even one opened on the same device.',
      'The context carries async_fd, the file descriptor for asynchronous events (ibv_get_async_event), and num_comp_vectors, the range of comp_vector for ibv_create_cq.',
      'Close it with ibv_close_device only after destroying everything created through it.',
    ],
    chapter: chapter('objects'),
  },
  {
    name: 'ibv_free_device_list',
    library: IBV,
    header: VERBS_H,
    signature: 'void ibv_free_device_list(struct ibv_device **list);',
    summary: 'Releases the array returned by ibv_get_device_list.',
    parameters: [{ name: 'list', text: 'the array returned by ibv_get_device_list.' }],
    returns: 'Nothing.',
    errors: [],
    notes: [
      'Devices already opened with ibv_open_device stay usable; pointers to the devices you did not open become invalid.',
      'Call it once for every successful ibv_get_device_list, also when the list is empty.',
    ],
    chapter: chapter('objects'),
  },
  {
    name: 'ibv_query_device',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr);',
    summary:
      'Reads a device\'s attributes: firmware version, GUIDs, capability flags, and the limits on QPs, work requests per queue, scatter/gather entries, CQ size, MRs, atomics and outstanding RDMA READs.',
    parameters: [
      { name: 'context', text: 'an open device context.' },
      { name: 'device_attr', text: 'filled in: struct ibv_device_attr (fw_ver, max_qp_wr, max_sge, max_cqe, max_qp_rd_atom, atomic_cap, device_cap_flags, phys_port_cnt and more).' },
    ],
    returns: '0 on success, or the errno value on failure (returned, not stored in errno).',
    errors: [],
    notes: [
      'The limits are the device\'s ceilings; what can really be created is also bounded by host memory, the memlock limit and what other processes already use.',
      'Check device_cap_flags before relying on optional features (IBV_DEVICE_MEM_WINDOW, IBV_DEVICE_SRQ_RESIZE, ...) and atomic_cap before posting atomics.',
      'On-demand paging, completion timestamps and hca_core_clock are extended attributes: read them with ibv_query_device_ex.',
    ],
    chapter: chapter('objects'),
  },
  {
    name: 'ibv_query_device_ex',
    library: IBV,
    header: VERBS_H,
    signature:
      'int ibv_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input, struct ibv_device_attr_ex *attr);',
    summary:
      'Reads everything ibv_query_device reads plus the extended attributes: on-demand paging capabilities (odp_caps), the completion timestamp mask and hca_core_clock, extended capability flags, and more.',
    parameters: [
      { name: 'context', text: 'an open device context.' },
      { name: 'input', text: 'NULL, or a structure whose comp_mask must be 0 (it exists for future extensions).' },
      { name: 'attr', text: 'filled in: attr->orig_attr holds the classic struct ibv_device_attr, followed by the extended fields.' },
    ],
    returns:
      '0 on success, or an errno value. It is a static inline function in verbs.h: it returns the error instead of setting errno.',
    errors: [{ errno: 'EINVAL', text: 'input is not NULL and input->comp_mask is not 0.' }],
    notes: [
      'When the provider has no extended query, the call falls back to ibv_query_device and zeroes every extended field, so 0 there can mean unsupported as well as absent.',
      'Check odp_caps.general_caps for IBV_ODP_SUPPORT before registering with IBV_ACCESS_ON_DEMAND; a completion_timestamp_mask of 0 means completions carry no timestamps.',
    ],
    chapter: chapter('objects'),
  },
  {
    name: 'ibv_query_port',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr);',
    summary:
      'Reads the attributes of one port: its state, maximum and active MTU, link layer (InfiniBand or Ethernet), LID, GID table length, and link width and speed.',
    parameters: [
      { name: 'context', text: 'an open device context.' },
      { name: 'port_num', text: 'the port, counted from 1 up to phys_port_cnt (from ibv_query_device).' },
      { name: 'port_attr', text: 'filled in: struct ibv_port_attr.' },
    ],
    returns:
      '0 on success, or the errno value on failure. In verbs.h the name is a macro over a static inline function, which returns the error rather than setting errno.',
    errors: [{ errno: 'EINVAL', text: 'port_num is 0 or larger than the device\'s number of ports.' }],
    notes: [
      'Ports are numbered from 1; there is no port 0 on an adapter.',
      'link_layer IBV_LINK_LAYER_ETHERNET means RoCE: peers are addressed by GID, and lid is 0.',
      'A QP\'s path_mtu should not exceed active_mtu, and a port should be in state IBV_PORT_ACTIVE before you connect through it.',
    ],
    chapter: chapter('objects'),
  },
  {
    name: 'ibv_port_state_str',
    library: IBV,
    header: VERBS_H,
    signature: 'const char *ibv_port_state_str(enum ibv_port_state port_state);',
    summary: 'Turns a port state (port_attr.state from ibv_query_port) into a short readable string such as active or down.',
    parameters: [{ name: 'port_state', text: 'an enum ibv_port_state value.' }],
    returns: 'A constant string; a value the library does not know gives unknown, never NULL.',
    errors: [],
    notes: [],
    chapter: chapter('start'),
  },
  {
    name: 'ibv_node_type_str',
    library: IBV,
    header: VERBS_H,
    signature: 'const char *ibv_node_type_str(enum ibv_node_type node_type);',
    summary:
      'Turns a node type (device->node_type) into a readable string such as InfiniBand channel adapter or iWARP NIC. RoCE adapters, rxe included, report themselves as channel adapters.',
    parameters: [{ name: 'node_type', text: 'an enum ibv_node_type value.' }],
    returns: 'A constant string; a value the library does not know gives unknown, never NULL.',
    errors: [],
    notes: [],
    chapter: chapter('start'),
  },
  {
    name: 'ibv_query_gid',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid);',
    summary: 'Reads one entry of a port\'s GID table: the 128-bit address at that index.',
    parameters: [
      { name: 'context', text: 'an open device context.' },
      { name: 'port_num', text: 'the port, counted from 1.' },
      { name: 'index', text: 'the GID index, from 0 to gid_tbl_len - 1 (from ibv_query_port).' },
      { name: 'gid', text: 'filled in with the GID.' },
    ],
    returns: '0 on success, -1 on failure.',
    errors: [],
    notes: [
      'An empty entry is not an error here: the call returns 0 with an all-zero GID, so test for zero.',
      'It tells neither the GID type (RoCE v1 or v2) nor the network device; ibv_query_gid_ex and ibv_query_gid_table do, which is what choosing an entry on RoCE needs.',
    ],
    chapter: chapter('start'),
  },
  {
    name: 'ibv_query_gid_ex',
    library: IBV,
    header: VERBS_H,
    signature:
      'int ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index, struct ibv_gid_entry *entry, uint32_t flags);',
    summary:
      'Reads one GID table entry together with its type (InfiniBand, RoCE v1 or RoCE v2) and the network interface it belongs to.',
    parameters: [
      { name: 'context', text: 'an open device context.' },
      { name: 'port_num', text: 'the port, counted from 1.' },
      { name: 'gid_index', text: 'the index of the entry in the port\'s GID table.' },
      { name: 'entry', text: 'filled in: struct ibv_gid_entry (gid, gid_index, port_num, gid_type, ndev_ifindex).' },
      { name: 'flags', text: 'must be 0.' },
    ],
    returns:
      '0 on success, or an errno value. It is a static inline function in verbs.h: the error is returned, not stored in errno.',
    errors: [
      { errno: 'ENODATA', text: 'gid_index lies inside the table but the entry is empty.' },
      { errno: 'EINVAL', text: 'port_num is not a port of the device, or flags is not 0.' },
    ],
    notes: [
      'For an IPv4 peer over RoCE, the entry to use is the one with gid_type IBV_GID_TYPE_ROCE_V2 holding the IPv4-mapped address (::ffff:a.b.c.d) of the local interface.',
      'GID indices are not stable across hosts or address changes: look the entry up by address and type rather than hard-coding an index.',
    ],
    chapter: chapter('start'),
  },
  {
    name: 'ibv_query_gid_table',
    library: IBV,
    header: VERBS_H,
    signature:
      'ssize_t ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries, size_t max_entries, uint32_t flags);',
    summary:
      'Reads all valid GID entries of every port of a device in one call, each with its index, port, type and network interface.',
    parameters: [
      { name: 'context', text: 'an open device context.' },
      { name: 'entries', text: 'an array the caller allocates, filled with the valid entries only.' },
      { name: 'max_entries', text: 'the number of elements of entries; must be non-zero and large enough for every valid entry.' },
      { name: 'flags', text: 'must be 0.' },
    ],
    returns:
      'The number of entries written, or a negative errno value on failure. It is a static inline function in verbs.h and does not report through errno.',
    errors: [
      { errno: 'EINVAL', text: 'the device has more valid entries than max_entries.' },
    ],
    notes: [
      'Only valid entries are returned, so positions in the array are not GID indices: read each entry\'s gid_index.',
      'Size the array from the ports\' gid_tbl_len (ibv_query_port) so that it can never be too small.',
    ],
    chapter: chapter('start'),
  },

  // ---------------------------------------------------------------- protection domain
  {
    name: 'ibv_alloc_pd',
    library: IBV,
    header: VERBS_H,
    signature: 'struct ibv_pd *ibv_alloc_pd(struct ibv_context *context);',
    summary:
      'Allocates a protection domain: the container that ties MRs, memory windows, QPs, SRQs and AHs together. Objects can be used with each other only if they belong to the same PD.',
    parameters: [{ name: 'context', text: 'an open device context.' }],
    returns: 'The new PD, or NULL with errno set.',
    errors: [{ errno: 'ENOMEM', text: 'out of memory: the provider could not allocate its PD structure, or the kernel could not allocate its own.' }],
    notes: [
      'An MR whose lkey is used in a WR of a QP from another PD fails that WR with a protection error; a peer\'s access through the rkey of another PD\'s MR fails with a remote access error.',
      'One PD per device and process is usually enough; several PDs only help to keep groups of QPs and memory apart.',
    ],
    chapter: chapter('objects'),
  },

  // ---------------------------------------------------------------- memory
  {
    name: 'ibv_is_fork_initialized',
    library: IBV,
    header: VERBS_H,
    signature: 'enum ibv_fork_status ibv_is_fork_initialized(void);',
    summary:
      'Tells whether registered memory is protected across fork(): whether libibverbs\' fork support was turned on, or whether the kernel makes it unnecessary.',
    parameters: [],
    returns:
      'IBV_FORK_DISABLED (no protection), IBV_FORK_ENABLED (ibv_fork_init or RDMAV_FORK_SAFE turned it on), or IBV_FORK_UNNEEDED (the kernel copies pinned DMA pages at fork, so nothing is needed).',
    errors: [],
    notes: [
      'IBV_FORK_UNNEEDED takes precedence: on a kernel that copies DMA pages on fork it is returned whether or not ibv_fork_init was called.',
      'Where protection is needed, ibv_fork_init (or RDMAV_FORK_SAFE=1) must run before the first registration, and it adds a system call to every registration.',
    ],
    chapter: chapter('registration'),
  },
  {
    name: 'ibv_reg_mr',
    library: IBV,
    header: VERBS_H,
    signature: 'struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access);',
    summary:
      'Registers a range of the process\'s memory with a protection domain: the kernel pins the pages and gives the NIC their translation. The MR\'s lkey lets local work requests use the memory, and its rkey lets a peer access it with RDMA, as far as the access flags allow.',
    parameters: [
      { name: 'pd', text: 'the protection domain the MR will belong to; only QPs of this PD can use it.' },
      { name: 'addr', text: 'the start of the range, a virtual address in this process.' },
      { name: 'length', text: 'the size of the range in bytes (not 0).' },
      { name: 'access', text: '0 or an OR of IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_MW_BIND, IBV_ACCESS_ON_DEMAND, IBV_ACCESS_RELAXED_ORDERING and others. Local read is always allowed.' },
    ],
    returns: 'The new MR (addr, length, lkey, rkey), or NULL with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'IBV_ACCESS_REMOTE_WRITE or IBV_ACCESS_REMOTE_ATOMIC without IBV_ACCESS_LOCAL_WRITE, an access flag the kernel does not know, a length of 0, or a range that wraps around; also IBV_ACCESS_ON_DEMAND on a device without ODP on older kernels (6.1 in the lab).' },
      { errno: 'ENOMEM', text: 'pinning the range would exceed RLIMIT_MEMLOCK (ulimit -l) and the process lacks CAP_IPC_LOCK; or out of memory.' },
      { errno: 'EPERM', text: 'RLIMIT_MEMLOCK is 0 and the process lacks CAP_IPC_LOCK, so it may not pin memory at all.' },
      { errno: 'EFAULT', text: 'part of the range is not mapped, is mapped read-only while a writable access (LOCAL_WRITE, REMOTE_WRITE, REMOTE_ATOMIC, MW_BIND) was asked for, or is not ordinary host memory (a GPU pointer without peer-memory support).' },
      { errno: 'EOPNOTSUPP', text: 'IBV_ACCESS_ON_DEMAND on a device without on-demand paging, on newer kernels (6.12 in the lab).' },
    ],
    notes: [
      'Memory the NIC writes into locally also needs IBV_ACCESS_LOCAL_WRITE: receive buffers and the local side of an RDMA READ or atomic. Without it the WR completes with IBV_WC_LOC_PROT_ERR.',
      'Pinning counts against RLIMIT_MEMLOCK, and registration is slow next to the data path: register buffers once and reuse them.',
      'Keep the MR and its memory until every WR that uses its lkey or rkey has completed; give the peer addr, length and rkey only with the access it needs.',
    ],
    chapter: chapter('registration'),
  },
  {
    name: 'ibv_reg_dmabuf_mr',
    library: IBV,
    header: VERBS_H,
    signature:
      'struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd, int access);',
    summary:
      'Registers memory exported as a dma-buf, such as GPU memory exported by the GPU driver, so the NIC can read and write it directly without a copy through host memory.',
    parameters: [
      { name: 'pd', text: 'the protection domain the MR will belong to.' },
      { name: 'offset', text: 'where the region starts inside the dma-buf.' },
      { name: 'length', text: 'the size of the region in bytes.' },
      { name: 'iova', text: 'the address the region has for users of its lkey and rkey (what goes into sge.addr and a peer\'s remote_addr); it must have the same offset within a page as offset.' },
      { name: 'fd', text: 'the dma-buf file descriptor.' },
      { name: 'access', text: 'an OR of IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_ATOMIC and IBV_ACCESS_RELAXED_ORDERING only.' },
    ],
    returns: 'The new MR, or NULL with errno set. Its addr field holds offset, not a CPU pointer.',
    errors: [
      { errno: 'EOPNOTSUPP', text: 'the provider cannot import dma-bufs at all (rxe answers this).' },
      { errno: 'EPROTONOSUPPORT', text: 'the kernel or its driver lacks the dma-buf registration method.' },
      { errno: 'EBADF', text: 'fd is not an open file descriptor (reported by the kernel when the provider hands the call on, as mlx5 does).' },
      { errno: 'EINVAL', text: 'fd is an open file but not a dma-buf, or offset plus length overflows (reported by the kernel when the provider hands the call on).' },
    ],
    notes: [
      'A call with fd -1 is a cheap capability probe: EOPNOTSUPP or EPROTONOSUPPORT mean no dma-buf path exists, any other error means it does.',
      'Address the region by iova in SGEs and in what you advertise to the peer, never by a CPU or device pointer.',
    ],
    chapter: chapter('gpudirect'),
  },
  {
    name: 'ibv_alloc_mw',
    library: IBV,
    header: VERBS_H,
    signature: 'struct ibv_mw *ibv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);',
    summary:
      'Allocates a memory window in a protection domain. Once bound to part of an MR it gives a peer remote access to just that part through the window\'s own rkey, and the access can be revoked without deregistering the MR.',
    parameters: [
      { name: 'pd', text: 'the protection domain of the window (and of the MRs it may be bound to).' },
      { name: 'type', text: 'IBV_MW_TYPE_1 (bound with ibv_bind_mw) or IBV_MW_TYPE_2 (bound with an IBV_WR_BIND_MW work request).' },
    ],
    returns: 'The window, created unbound, or NULL with errno set.',
    errors: [
      { errno: 'EOPNOTSUPP', text: 'the provider implements no memory windows (the static inline wrapper in verbs.h sets this itself).' },
      { errno: 'EINVAL', text: 'type is neither IBV_MW_TYPE_1 nor IBV_MW_TYPE_2; the kernel checks this for every provider that passes the call on.' },
    ],
    notes: [
      'Windows are optional: check IBV_DEVICE_MEM_WINDOW, IBV_DEVICE_MEM_WINDOW_TYPE_2A and IBV_DEVICE_MEM_WINDOW_TYPE_2B in device_cap_flags.',
      'The MR a window is bound to must have been registered with IBV_ACCESS_MW_BIND.',
      'A bound type 1 window may be used through any QP of the PD; a type 2 window only through the QP that bound it.',
    ],
    chapter: chapter('windows'),
  },

  // ---------------------------------------------------------------- completion queues
  {
    name: 'ibv_create_comp_channel',
    library: IBV,
    header: VERBS_H,
    signature: 'struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context);',
    summary:
      'Creates a completion channel: a file descriptor through which armed CQs deliver completion events, so a thread can sleep instead of busy-polling.',
    parameters: [{ name: 'context', text: 'an open device context.' }],
    returns: 'The channel (its fd field can be polled), or NULL with errno set.',
    errors: [
      { errno: 'EMFILE', text: 'the process has reached its file-descriptor limit (RLIMIT_NOFILE), so the kernel cannot give the channel an fd.' },
      { errno: 'ENOMEM', text: 'out of memory, in libibverbs or in the kernel.' },
    ],
    notes: [
      'Pass it to ibv_create_cq; one channel can serve several CQs, and several channels let different threads wait for different CQs.',
      'The channel must outlive its CQs: ibv_destroy_comp_channel fails with EBUSY while a CQ still uses it.',
    ],
    chapter: chapter('completions'),
  },
  {
    name: 'ibv_create_cq',
    library: IBV,
    header: VERBS_H,
    signature:
      'struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context, struct ibv_comp_channel *channel, int comp_vector);',
    summary:
      'Creates a completion queue, where the NIC reports finished work requests of the QPs attached to it.',
    parameters: [
      { name: 'context', text: 'an open device context.' },
      { name: 'cqe', text: 'the minimum number of entries; the CQ may be larger (read cq->cqe).' },
      { name: 'cq_context', text: 'any pointer; ibv_get_cq_event hands it back with each completion event.' },
      { name: 'channel', text: 'a completion channel for events, or NULL when the CQ will only be polled.' },
      { name: 'comp_vector', text: 'which completion vector (interrupt) signals its events: from 0 to context->num_comp_vectors - 1.' },
    ],
    returns: 'The new CQ, or NULL with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'comp_vector is not below num_comp_vectors (checked by the kernel for every device); cqe is below 1 (mlx5, rxe) or above the device\'s max_cqe (rxe).' },
      { errno: 'ENOMEM', text: 'out of memory or device resources.' },
    ],
    notes: [
      'Size it for every completion that can be outstanding at once: the send and receive queues of all QPs that share it. An overrun raises IBV_EVENT_CQ_ERR and the CQ, with its QPs, becomes unusable.',
      'One CQ may serve the send and the receive queue of many QPs; completions then carry qp_num to tell them apart.',
    ],
    chapter: chapter('completions'),
  },
  {
    name: 'ibv_create_cq_ex',
    library: IBV,
    header: VERBS_H,
    signature: 'struct ibv_cq_ex *ibv_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *cq_attr);',
    summary:
      'Creates an extended CQ, polled with ibv_start_poll, ibv_next_poll and ibv_end_poll, that reports only the completion fields asked for in wc_flags (and can add some, such as completion timestamps).',
    parameters: [
      { name: 'context', text: 'an open device context.' },
      { name: 'cq_attr', text: 'struct ibv_cq_init_attr_ex: cqe, cq_context, channel and comp_vector as for ibv_create_cq, plus wc_flags (IBV_WC_EX_WITH_BYTE_LEN, IBV_WC_EX_WITH_IMM, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, ...), comp_mask and flags.' },
    ],
    returns:
      'The new extended CQ, or NULL with errno set. It is a static inline function in verbs.h; use ibv_cq_ex_to_cq for calls that take a struct ibv_cq, and destroy it with ibv_destroy_cq.',
    errors: [
      { errno: 'EOPNOTSUPP', text: 'the provider has no extended CQs, or cannot report a field requested in wc_flags (rxe refuses IBV_WC_EX_WITH_COMPLETION_TIMESTAMP).' },
      { errno: 'EINVAL', text: 'cqe, comp_vector, comp_mask or flags not acceptable, as for ibv_create_cq.' },
    ],
    notes: [
      'Only the fields requested in wc_flags can be read back; the reader for a field that was not requested is left unset by the provider.',
      'Completion timestamps count in device clock ticks: hca_core_clock from ibv_query_device_ex gives the frequency in kHz.',
    ],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_cq_ex_to_cq',
    library: IBV,
    header: VERBS_H,
    signature: 'struct ibv_cq *ibv_cq_ex_to_cq(struct ibv_cq_ex *cq);',
    summary:
      'Converts an extended CQ into the struct ibv_cq that QP creation, ibv_req_notify_cq, ibv_poll_cq and ibv_destroy_cq take. It is a cast: both are views of the same CQ.',
    parameters: [{ name: 'cq', text: 'a CQ created with ibv_create_cq_ex.' }],
    returns: 'The same CQ as a struct ibv_cq pointer.',
    errors: [],
    notes: [],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_req_notify_cq',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_req_notify_cq(struct ibv_cq *cq, int solicited_only);',
    summary:
      'Arms a CQ: the next completion added to it produces one event on its completion channel. Arming is one-shot, so it is repeated after every event.',
    parameters: [
      { name: 'cq', text: 'a CQ created with a completion channel.' },
      { name: 'solicited_only', text: '0: any new completion triggers the event; non-zero: only a receive completion of a message sent with IBV_SEND_SOLICITED, or an unsuccessful completion.' },
    ],
    returns:
      '0 on success, or the errno value. It is a static inline function in verbs.h that calls the provider directly: the error is returned, not stored in errno.',
    errors: [],
    notes: [
      'The safe loop is: wait for the event, ack it, re-arm, then poll until the CQ is empty. A completion that arrives between the last poll and the arming would otherwise wait unnoticed.',
      'Because of that order an event may find the CQ already empty; treat it as harmless.',
    ],
    chapter: chapter('completions'),
  },

  // ---------------------------------------------------------------- shared receive queues
  {
    name: 'ibv_create_srq',
    library: IBV,
    header: VERBS_H,
    signature: 'struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr);',
    summary:
      'Creates a shared receive queue: one pool of posted receives that many QPs of the PD draw from, instead of a receive queue per QP.',
    parameters: [
      { name: 'pd', text: 'the protection domain of the SRQ and of the QPs that will use it.' },
      { name: 'srq_init_attr', text: 'srq_context, and attr.max_wr and attr.max_sge (attr.srq_limit is ignored here); updated with the values actually granted, which are at least those requested.' },
    ],
    returns: 'The new SRQ, or NULL with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'max_wr or max_sge above the device\'s max_srq_wr or max_srq_sge (rxe checks both).' },
      { errno: 'ENOMEM', text: 'out of memory or device resources.' },
      { errno: 'EOPNOTSUPP', text: 'the provider does not implement SRQs.' },
    ],
    notes: [
      'A QP uses it when created with qp_init_attr.srq set; its own max_recv_wr and max_recv_sge are then ignored, and receives are posted with ibv_post_srq_recv, never ibv_post_recv.',
      'Arm a low-watermark with ibv_modify_srq (IBV_SRQ_LIMIT) to be told by an async event when it runs low.',
    ],
    chapter: chapter('objects'),
  },
  {
    name: 'ibv_modify_srq',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask);',
    summary:
      'Changes an SRQ: resizes it (IBV_SRQ_MAX_WR, where the device supports it) or arms its limit (IBV_SRQ_LIMIT), a low-watermark that raises one asynchronous event when the number of posted receives drops below it.',
    parameters: [
      { name: 'srq', text: 'the SRQ.' },
      { name: 'srq_attr', text: 'the new max_wr and/or srq_limit (max_sge cannot be changed).' },
      { name: 'srq_attr_mask', text: 'an OR of IBV_SRQ_MAX_WR and IBV_SRQ_LIMIT, saying which fields to apply.' },
    ],
    returns: '0 on success, or the errno value (returned, not stored in errno). If any attribute is invalid, nothing is changed.',
    errors: [
      { errno: 'EINVAL', text: 'srq_limit not below the SRQ\'s size (mlx5) or above it (rxe); or a resize (IBV_SRQ_MAX_WR): mlx5 refuses every resize, rxe one above max_srq_wr or below the current srq_limit.' },
    ],
    notes: [
      'The limit is one-shot: after IBV_EVENT_SRQ_LIMIT_REACHED it reads 0 (ibv_query_srq) until armed again, so post more receives and then re-arm.',
      'Resizing needs IBV_DEVICE_SRQ_RESIZE in device_cap_flags.',
    ],
    chapter: chapter('objects'),
  },
  {
    name: 'ibv_query_srq',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);',
    summary: 'Reads an SRQ\'s attributes: its max_wr, max_sge and current srq_limit.',
    parameters: [
      { name: 'srq', text: 'the SRQ.' },
      { name: 'srq_attr', text: 'filled in: struct ibv_srq_attr.' },
    ],
    returns: '0 on success, or the errno value (returned, not stored in errno).',
    errors: [],
    notes: ['An srq_limit of 0 means the limit is not armed (or has fired and not been re-armed).'],
    chapter: chapter('objects'),
  },

  // ---------------------------------------------------------------- queue pairs
  {
    name: 'ibv_create_qp',
    library: IBV,
    header: VERBS_H,
    signature: 'struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr);',
    summary:
      'Creates a queue pair, the endpoint that carries work: a send queue and a receive queue (or an SRQ), each reporting to a CQ, with a transport type such as RC, UC or UD. The QP starts in the RESET state.',
    parameters: [
      { name: 'pd', text: 'the protection domain; the QP can use only MRs, windows and AHs of this PD.' },
      { name: 'qp_init_attr', text: 'send_cq, recv_cq, optional srq, qp_type (IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, ...), sq_sig_all, and cap (max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data). cap is updated with the values actually granted, which are at least those requested.' },
    ],
    returns: 'The new QP (read its qp_num for the peer), or NULL with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'a capability above the device\'s limits (max_qp_wr, max_sge, inline size), or a QP type or attribute the device does not accept.' },
      { errno: 'ENOMEM', text: 'out of memory: the provider could not allocate its QP structure, or the kernel could not allocate its own.' },
    ],
    notes: [
      'With sq_sig_all 0 only WRs posted with IBV_SEND_SIGNALED produce completions, and the slots of unsignaled WRs are freed only when a later signaled WR completes: signal at least one WR in every max_send_wr and poll its completion.',
      'A new QP is in RESET and can do nothing: ibv_modify_qp (or rdma_cm) takes it through INIT and RTR to RTS.',
      'send_cq and recv_cq are both required (one CQ may serve both); libibverbs does not check them for NULL, so a missing CQ crashes instead of returning an error.',
    ],
    chapter: chapter('qps'),
  },
  {
    name: 'ibv_create_qp_ex',
    library: IBV,
    header: VERBS_H,
    signature: 'struct ibv_qp *ibv_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *qp_init_attr_ex);',
    summary:
      'Creates a QP with extended attributes. The one the lessons use is send_ops_flags, which enables posting with the ibv_wr functions (ibv_wr_start, ibv_wr_rdma_write, ibv_wr_complete, ...) instead of ibv_post_send.',
    parameters: [
      { name: 'context', text: 'an open device context.' },
      { name: 'qp_init_attr_ex', text: 'everything of struct ibv_qp_init_attr plus comp_mask, which must include IBV_QP_INIT_ATTR_PD (with pd set) and, to use the ibv_wr functions, IBV_QP_INIT_ATTR_SEND_OPS_FLAGS with send_ops_flags listing the operations (IBV_QP_EX_WITH_RDMA_WRITE, IBV_QP_EX_WITH_SEND_WITH_IMM, ...).' },
    ],
    returns:
      'The new QP, or NULL with errno set. It is a static inline function in verbs.h; destroy the QP with ibv_destroy_qp.',
    errors: [
      { errno: 'EOPNOTSUPP', text: 'the provider has no extended QP creation, or does not support an operation in send_ops_flags or a creation flag for this QP type.' },
      { errno: 'EINVAL', text: 'capabilities or attributes not acceptable, as for ibv_create_qp.' },
    ],
    notes: [
      'Get the struct ibv_qp_ex that the ibv_wr functions take with ibv_qp_to_qp_ex.',
      'Ask only for the operations you post: an operation missing from send_ops_flags cannot be posted through the ibv_wr functions.',
    ],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_qp_to_qp_ex',
    library: IBV,
    header: VERBS_H,
    signature: 'struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp);',
    summary:
      'Returns the extended view of a QP, through which the ibv_wr posting functions and the wr_id and wr_flags fields are used.',
    parameters: [{ name: 'qp', text: 'a QP created by ibv_create_qp_ex with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS.' }],
    returns: 'The struct ibv_qp_ex, or NULL when the QP was not created with extended send operations.',
    errors: [],
    notes: [],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_modify_qp',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);',
    summary:
      'Changes a QP\'s attributes and, with IBV_QP_STATE, moves it through its state machine: RESET to INIT to RTR (ready to receive) to RTS (ready to send), or to ERR or back to RESET.',
    parameters: [
      { name: 'qp', text: 'the QP.' },
      { name: 'attr', text: 'struct ibv_qp_attr holding the new values: qp_state, port_num, pkey_index, qp_access_flags, path_mtu, dest_qp_num, rq_psn, sq_psn, ah_attr, timeout, retry_cnt, rnr_retry, min_rnr_timer, max_rd_atomic, max_dest_rd_atomic, qkey and more.' },
      { name: 'attr_mask', text: 'an OR of IBV_QP_ attribute flags (IBV_QP_STATE, IBV_QP_PORT, IBV_QP_AV, ...) naming exactly the fields of attr to apply.' },
    ],
    returns:
      '0 on success, or the errno value (returned, not stored in errno). On failure nothing is applied, the state included.',
    errors: [
      { errno: 'EINVAL', text: 'the transition is not allowed from the current state, attr_mask lacks an attribute the transition requires or carries one it does not accept, or a value is invalid (for example a RoCE address vector without is_global).' },
    ],
    notes: [
      'RC needs, for INIT: STATE, PKEY_INDEX, PORT, ACCESS_FLAGS; for RTR: STATE, AV, PATH_MTU, DEST_QPN, RQ_PSN, MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER; for RTS: STATE, SQ_PSN, TIMEOUT, RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC. UD needs STATE, PKEY_INDEX, PORT and QKEY for INIT, STATE alone for RTR, and STATE and SQ_PSN for RTS.',
      'On RoCE the address vector must be global: ah_attr.is_global 1, grh.dgid set to the peer\'s GID and grh.sgid_index to a local GID entry.',
      'Moving to ERR flushes every outstanding WR with IBV_WC_WR_FLUSH_ERR; a QP in ERR must go to RESET before it can be used again.',
    ],
    chapter: chapter('qps'),
  },
  {
    name: 'ibv_query_qp',
    library: IBV,
    header: VERBS_H,
    signature:
      'int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask, struct ibv_qp_init_attr *init_attr);',
    summary:
      'Reads a QP\'s current attributes, including its state as the device sees it and the capabilities it was granted.',
    parameters: [
      { name: 'qp', text: 'the QP.' },
      { name: 'attr', text: 'filled in: struct ibv_qp_attr.' },
      { name: 'attr_mask', text: 'IBV_QP_ attribute flags naming the attributes wanted, as for ibv_modify_qp; a hint, the device may fill in more.' },
      { name: 'init_attr', text: 'filled in: struct ibv_qp_init_attr, with cap holding the actual capabilities.' },
    ],
    returns: '0 on success, or the errno value (returned, not stored in errno).',
    errors: [],
    notes: [
      'qp->state is only a cached copy, updated by ibv_modify_qp and by ibv_query_qp with IBV_QP_STATE: a QP the device moved to ERR after an error completion still shows its old state there until you query it.',
      'Attributes are meaningful only once set by ibv_modify_qp, and which ones are valid depends on the state.',
    ],
    chapter: chapter('qps'),
  },
  {
    name: 'ibv_create_ah',
    library: IBV,
    header: VERBS_H,
    signature: 'struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);',
    summary:
      'Creates an address handle: the path to one remote port that a UD send names in its work request, since a UD QP has no fixed peer.',
    parameters: [
      { name: 'pd', text: 'the protection domain; the AH can be used only by QPs of this PD.' },
      { name: 'attr', text: 'struct ibv_ah_attr: port_num, dlid, sl, static_rate, is_global and grh (dgid, sgid_index, hop_limit, traffic_class, flow_label).' },
    ],
    returns: 'The new AH, or NULL with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'port_num is not a port of the device, or is_global is 0 on a RoCE port or a port that requires a GRH.' },
      { errno: 'ENOMEM', text: 'out of memory: the provider could not allocate its AH structure, or the kernel could not allocate its own.' },
    ],
    notes: [
      'On RoCE every AH is global: set is_global to 1, grh.dgid to the peer\'s GID and grh.sgid_index to a local GID entry of the right type.',
      'A UD send also needs the remote QPN and Q_Key (wr.ud.remote_qpn, wr.ud.remote_qkey); keep the AH alive until every send that uses it has completed.',
    ],
    chapter: chapter('unreliable'),
  },

  // ---------------------------------------------------------------- posting work
  {
    name: 'ibv_post_recv',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);',
    summary:
      'Posts a linked list of receive work requests to a QP\'s receive queue: buffers into which incoming SENDs (and WRITE WITH IMMEDIATE notifications) will complete.',
    parameters: [
      { name: 'qp', text: 'a QP without an SRQ, in INIT or a later state.' },
      { name: 'wr', text: 'the first struct ibv_recv_wr (wr_id, next, sg_list, num_sge); the list ends with next NULL.' },
      { name: 'bad_wr', text: 'on failure, set to the first WR that was not posted.' },
    ],
    returns:
      '0 on success, or an errno value. It is a static inline function in verbs.h that calls the provider directly: it returns the error and errno is not to be relied on.',
    errors: [
      { errno: 'ENOMEM', text: 'the receive queue is full (max_recv_wr receives already outstanding).' },
      { errno: 'EINVAL', text: 'more SGEs than max_recv_sge; rxe also refuses a QP still in RESET, or one that uses an SRQ (post to the SRQ instead).' },
    ],
    notes: [
      'WRs before bad_wr were posted and will complete; the ones from bad_wr on were not.',
      'Post receives before the peer can send: a SEND that finds no receive on an RC QP is answered with receiver not ready (RNR) and retried, up to rnr_retry times.',
      'On a UD QP the first 40 bytes of every receive buffer get the GRH (or undefined bytes), so make buffers 40 bytes larger than the largest message.',
    ],
    chapter: chapter('operations'),
  },
  {
    name: 'ibv_post_srq_recv',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr, struct ibv_recv_wr **bad_recv_wr);',
    summary: 'Posts a linked list of receive work requests to a shared receive queue, for any of the QPs that use it.',
    parameters: [
      { name: 'srq', text: 'the SRQ.' },
      { name: 'recv_wr', text: 'the first struct ibv_recv_wr of the list.' },
      { name: 'bad_recv_wr', text: 'on failure, set to the first WR that was not posted.' },
    ],
    returns:
      '0 on success, or an errno value. It is a static inline function in verbs.h: the error is returned, not stored in errno.',
    errors: [
      { errno: 'ENOMEM', text: 'the SRQ is full.' },
      { errno: 'EINVAL', text: 'more SGEs than the SRQ\'s max_sge.' },
    ],
    notes: [
      'Which QP a receive will serve is decided only when a message arrives; the completion\'s qp_num says which one it was.',
      'Buffers may be reused only after their completion has been polled.',
    ],
    chapter: chapter('objects'),
  },
  {
    name: 'ibv_post_send',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);',
    summary:
      'Posts a linked list of work requests to a QP\'s send queue: SEND, SEND WITH IMMEDIATE, RDMA WRITE (WITH IMMEDIATE), RDMA READ, atomics, and memory-window binds and invalidations.',
    parameters: [
      { name: 'qp', text: 'the QP, in RTS.' },
      { name: 'wr', text: 'the first struct ibv_send_wr: wr_id, next, sg_list, num_sge, opcode, send_flags (IBV_SEND_SIGNALED, IBV_SEND_INLINE, IBV_SEND_FENCE, IBV_SEND_SOLICITED), imm_data, and wr.rdma, wr.atomic or wr.ud as the opcode needs.' },
      { name: 'bad_wr', text: 'on failure, set to the first WR that was not posted.' },
    ],
    returns:
      '0 on success, or an errno value. It is a static inline function in verbs.h that calls the provider directly: it returns the error and errno is not to be relied on.',
    errors: [
      { errno: 'ENOMEM', text: 'the send queue is full (max_send_wr WRs not yet completed); mlx5 also answers ENOMEM for too many SGEs or for inline data above max_inline_data.' },
      { errno: 'EINVAL', text: 'an invalid opcode or WR; rxe also answers EINVAL for too many SGEs, inline data above max_inline_data, or a QP not yet in RTS.' },
    ],
    notes: [
      'Success means queued, not done: buffers may be reused only after the WR completes, except with IBV_SEND_INLINE, whose data is copied during the call (the WR and SGE structures themselves may be reused at once).',
      'WRs before bad_wr were posted and will complete; the ones from bad_wr on were not. An opcode the transport lacks (RDMA READ on UC, WRITE on UD) is refused here by some providers and fails in its completion on others.',
      'Unsignaled WRs still occupy send queue slots until a later signaled WR completes: signal periodically, or the queue fills up.',
    ],
    chapter: chapter('operations'),
  },
  {
    name: 'ibv_wr_start',
    library: IBV,
    header: VERBS_H,
    signature: 'void ibv_wr_start(struct ibv_qp_ex *qp);',
    summary:
      'Opens a batch of work requests on an extended QP. The WRs built with ibv_wr builder and setter calls after it are posted together by ibv_wr_complete (or dropped by ibv_wr_abort).',
    parameters: [{ name: 'qp', text: 'the extended QP (from ibv_qp_to_qp_ex).' }],
    returns: 'Nothing; errors are reported by ibv_wr_complete.',
    errors: [],
    notes: [
      'The batch holds the send queue\'s lock until ibv_wr_complete or ibv_wr_abort: do not call ibv_post_send on the same QP in between.',
      'Set qp->wr_id and qp->wr_flags (IBV_SEND_SIGNALED, ...) before each builder call; the builder takes them from there.',
    ],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_wr_rdma_write',
    library: IBV,
    header: VERBS_H,
    signature: 'void ibv_wr_rdma_write(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr);',
    summary:
      'Adds an RDMA WRITE to the open batch: the data, given by the setter that follows, is written into the peer\'s memory at remote_addr without involving the peer\'s CPU or consuming a receive.',
    parameters: [
      { name: 'qp', text: 'the extended QP, between ibv_wr_start and ibv_wr_complete.' },
      { name: 'rkey', text: 'the peer MR\'s (or window\'s) rkey, which must allow remote write.' },
      { name: 'remote_addr', text: 'the destination address in the peer\'s registered memory.' },
    ],
    returns: 'Nothing; errors are reported by ibv_wr_complete.',
    errors: [],
    notes: [
      'Follow it with exactly one data setter (ibv_wr_set_sge, ibv_wr_set_sge_list or an inline setter).',
      'The QP must have been created with IBV_QP_EX_WITH_RDMA_WRITE in send_ops_flags; RC, UC and XRC only.',
    ],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_wr_send_imm',
    library: IBV,
    header: VERBS_H,
    signature: 'void ibv_wr_send_imm(struct ibv_qp_ex *qp, __be32 imm_data);',
    summary:
      'Adds a SEND WITH IMMEDIATE to the open batch: a SEND whose receive completion also carries 32 bits of immediate data.',
    parameters: [
      { name: 'qp', text: 'the extended QP, between ibv_wr_start and ibv_wr_complete.' },
      { name: 'imm_data', text: 'the immediate value, in network byte order (use htonl).' },
    ],
    returns: 'Nothing; errors are reported by ibv_wr_complete.',
    errors: [],
    notes: [
      'It consumes a receive at the peer, whose completion has opcode IBV_WC_RECV with IBV_WC_WITH_IMM set in wc_flags.',
      'Follow it with one data setter; the QP needs IBV_QP_EX_WITH_SEND_WITH_IMM in send_ops_flags.',
    ],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_wr_set_sge',
    library: IBV,
    header: VERBS_H,
    signature: 'void ibv_wr_set_sge(struct ibv_qp_ex *qp, uint32_t lkey, uint64_t addr, uint32_t length);',
    summary: 'Gives the WR just built one local buffer: the data to send or write, or where a READ lands.',
    parameters: [
      { name: 'qp', text: 'the extended QP, right after a WR builder.' },
      { name: 'lkey', text: 'the lkey of the MR that holds the buffer.' },
      { name: 'addr', text: 'the buffer\'s address, inside that MR.' },
      { name: 'length', text: 'its length in bytes.' },
    ],
    returns: 'Nothing; errors are reported by ibv_wr_complete.',
    errors: [],
    notes: ['The same as ibv_wr_set_sge_list with one element.'],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_wr_set_sge_list',
    library: IBV,
    header: VERBS_H,
    signature: 'void ibv_wr_set_sge_list(struct ibv_qp_ex *qp, size_t num_sge, const struct ibv_sge *sg_list);',
    summary:
      'Gives the WR just built a list of local buffers, used as one logically contiguous message: a gather list for a SEND or WRITE, a scatter list for a READ.',
    parameters: [
      { name: 'qp', text: 'the extended QP, right after a WR builder.' },
      { name: 'num_sge', text: 'the number of elements, at most the QP\'s max_send_sge.' },
      { name: 'sg_list', text: 'the array of struct ibv_sge (addr, length, lkey).' },
    ],
    returns: 'Nothing; errors, such as too many elements, are reported by ibv_wr_complete.',
    errors: [],
    notes: ['The array is copied into the work request during the call; the buffers it points to must stay until the WR completes.'],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_wr_complete',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_wr_complete(struct ibv_qp_ex *qp);',
    summary:
      'Closes the batch opened by ibv_wr_start and hands all its WRs to the device. Nothing of the batch executes before this call succeeds.',
    parameters: [{ name: 'qp', text: 'the extended QP.' }],
    returns:
      '0 on success, or an errno value (it is a static inline function in verbs.h and returns the error). On failure the whole batch is discarded.',
    errors: [
      { errno: 'ENOMEM', text: 'the send queue overflowed (mlx5).' },
      { errno: 'ENOSPC', text: 'the send queue overflowed, too many SGEs, or inline data too long (rxe).' },
      { errno: 'EINVAL', text: 'a WR of the batch was invalid.' },
    ],
    notes: [
      'The builders and setters return nothing so as not to branch: the first error of the batch surfaces here, and all of it is dropped.',
    ],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_bind_mw',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);',
    summary:
      'Posts, on a QP, a request to bind a type 1 memory window to a range of an MR with given access rights. On success the window gets a new rkey, valid once the bind has completed.',
    parameters: [
      { name: 'qp', text: 'an RC, UC or XRC send QP of the same PD, in RTS, that will execute the bind.' },
      { name: 'mw', text: 'a type 1 window from ibv_alloc_mw.' },
      { name: 'mw_bind', text: 'wr_id, send_flags (IBV_SEND_SIGNALED, IBV_SEND_FENCE) and bind_info: mr, addr, length and mw_access_flags (IBV_ACCESS_REMOTE_READ, _WRITE, _ATOMIC, IBV_ACCESS_ZERO_BASED). A length of 0 unbinds.' },
    ],
    returns:
      '0 if the bind was posted, or an errno value. It is a static inline function in verbs.h: the error is returned, not stored in errno. The new rkey is written to mw->rkey.',
    errors: [
      { errno: 'EINVAL', text: 'mw is not a type 1 window, or bind_info has no MR but a non-zero addr or length.' },
      { errno: 'EPERM', text: 'the window and the MR belong to different PDs.' },
    ],
    notes: [
      'The bind is a work request: it completes on the QP\'s send CQ (opcode IBV_WC_BIND_MW). Keep the old rkey until then, and if the completion fails, restore it.',
      'The MR must have been registered with IBV_ACCESS_MW_BIND; remote write or atomic rights on the window also require local write on the MR.',
      'Send the new rkey to the peer only after the bind completed, or in a SEND posted after the bind on the same QP, which is ordered behind it. Type 2 windows are bound with ibv_post_send (IBV_WR_BIND_MW) instead.',
    ],
    chapter: chapter('windows'),
  },
  {
    name: 'ibv_inc_rkey',
    library: IBV,
    header: VERBS_H,
    signature: 'uint32_t ibv_inc_rkey(uint32_t rkey);',
    summary:
      'Computes a new rkey from an old one by advancing its low 8 bits (the key tag), keeping the upper 24 bits (the index of the window or MR).',
    parameters: [{ name: 'rkey', text: 'the current rkey, typically a memory window\'s.' }],
    returns: 'The new rkey.',
    errors: [],
    notes: [
      'Use it to pick the rkey for each new bind of a type 2 window (bind_mw.rkey in the IBV_WR_BIND_MW work request): the tag change makes the previous rkey invalid, so a peer holding the old one is refused.',
    ],
    chapter: chapter('windows'),
  },

  // ---------------------------------------------------------------- completions and events
  {
    name: 'ibv_poll_cq',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);',
    summary:
      'Takes up to num_entries work completions from a CQ without blocking. Each struct ibv_wc reports one finished WR: its wr_id, status, opcode, byte count, immediate data and more.',
    parameters: [
      { name: 'cq', text: 'the CQ.' },
      { name: 'num_entries', text: 'the maximum number of completions to take.' },
      { name: 'wc', text: 'an array of at least num_entries struct ibv_wc, filled in.' },
    ],
    returns:
      'The number of completions taken (0 when the CQ is empty), or a negative value on failure. It is a static inline function in verbs.h; the man page defines no errno.',
    errors: [],
    notes: [
      'Check status of every completion: a WR can fail after it was posted. When status is not IBV_WC_SUCCESS only wr_id, status, qp_num and vendor_err are valid, and the QP has usually moved to ERR.',
      'Each completion is removed as it is returned; poll often enough that the CQ never overruns.',
      'It never waits: a busy loop burns a core, and ibv_req_notify_cq with a completion channel lets a thread sleep instead.',
    ],
    chapter: chapter('completions'),
  },
  {
    name: 'ibv_wc_status_str',
    library: IBV,
    header: VERBS_H,
    signature: 'const char *ibv_wc_status_str(enum ibv_wc_status status);',
    summary:
      'Turns a work completion status into a readable string, such as remote access error for IBV_WC_REM_ACCESS_ERR or transport retry counter exceeded for IBV_WC_RETRY_EXC_ERR.',
    parameters: [{ name: 'status', text: 'an enum ibv_wc_status value, usually wc.status.' }],
    returns: 'A constant string; a value the library does not know gives unknown, never NULL.',
    errors: [],
    notes: [
      'Log the numeric status and wc.vendor_err next to the string: the vendor error is what a NIC vendor\'s documentation explains.',
    ],
    chapter: chapter('errors'),
  },
  {
    name: 'ibv_start_poll',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr);',
    summary:
      'Begins polling an extended CQ: takes the first completion, whose fields are then read with cq->wr_id, cq->status and the ibv_wc_read functions (ibv_wc_read_opcode, ibv_wc_read_byte_len, ...).',
    parameters: [
      { name: 'cq', text: 'an extended CQ from ibv_create_cq_ex.' },
      { name: 'attr', text: 'struct ibv_poll_cq_attr, with comp_mask 0 (reserved for extensions).' },
    ],
    returns:
      '0 when a completion is available, ENOENT when the CQ is empty, or another errno value on error. It is a static inline function in verbs.h: the code is returned, not stored in errno.',
    errors: [{ errno: 'ENOENT', text: 'no completion is available; this is the normal empty answer, and the CQ stays valid.' }],
    notes: [
      'After 0, read the fields, continue with ibv_next_poll and finish with ibv_end_poll. After ENOENT or any error, do not call ibv_end_poll.',
      'The CQ is held between ibv_start_poll and ibv_end_poll: keep the loop short.',
    ],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_next_poll',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_next_poll(struct ibv_cq_ex *cq);',
    summary: 'Advances to the next completion of a batch started with ibv_start_poll.',
    parameters: [{ name: 'cq', text: 'the extended CQ, between ibv_start_poll and ibv_end_poll.' }],
    returns:
      '0 when another completion is available, ENOENT when there is none, or another errno value (returned, not stored in errno).',
    errors: [{ errno: 'ENOENT', text: 'no further completion; the CQ stays valid.' }],
    notes: ['Unlike after ibv_start_poll, ibv_end_poll must still be called after ENOENT or an error from ibv_next_poll.'],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_wc_read_opcode',
    library: IBV,
    header: VERBS_H,
    signature: 'enum ibv_wc_opcode ibv_wc_read_opcode(struct ibv_cq_ex *cq);',
    summary:
      'Returns the opcode of the current completion of an extended CQ (IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RECV, IBV_WC_RECV_RDMA_WITH_IMM, ...).',
    parameters: [{ name: 'cq', text: 'the extended CQ, on a completion taken by ibv_start_poll or ibv_next_poll.' }],
    returns: 'The completion\'s opcode.',
    errors: [],
    notes: ['Meaningful only when cq->status is IBV_WC_SUCCESS. It is always available, whatever wc_flags the CQ was created with.'],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_wc_read_byte_len',
    library: IBV,
    header: VERBS_H,
    signature: 'uint32_t ibv_wc_read_byte_len(struct ibv_cq_ex *cq);',
    summary: 'Returns the byte count of the current completion of an extended CQ: for a receive, the length of the message that arrived.',
    parameters: [{ name: 'cq', text: 'the extended CQ, on a completion taken by ibv_start_poll or ibv_next_poll.' }],
    returns: 'The number of bytes.',
    errors: [],
    notes: [
      'Available only if the CQ was created with IBV_WC_EX_WITH_BYTE_LEN in wc_flags.',
      'On a UD receive the count includes the 40-byte GRH area.',
    ],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_wc_read_imm_data',
    library: IBV,
    header: VERBS_H,
    signature: '__be32 ibv_wc_read_imm_data(struct ibv_cq_ex *cq);',
    summary: 'Returns the immediate data of the current completion of an extended CQ, sent by SEND or RDMA WRITE WITH IMMEDIATE.',
    parameters: [{ name: 'cq', text: 'the extended CQ, on a completion taken by ibv_start_poll or ibv_next_poll.' }],
    returns: 'The 32-bit immediate value in network byte order (convert it with ntohl).',
    errors: [],
    notes: [
      'Available only if the CQ was created with IBV_WC_EX_WITH_IMM, and meaningful only when ibv_wc_read_wc_flags has IBV_WC_WITH_IMM.',
    ],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_wc_read_wc_flags',
    library: IBV,
    header: VERBS_H,
    signature: 'unsigned int ibv_wc_read_wc_flags(struct ibv_cq_ex *cq);',
    summary:
      'Returns the flags of the current completion of an extended CQ: IBV_WC_WITH_IMM, IBV_WC_WITH_INV, IBV_WC_GRH and others, which say which optional fields are valid.',
    parameters: [{ name: 'cq', text: 'the extended CQ, on a completion taken by ibv_start_poll or ibv_next_poll.' }],
    returns: 'An OR of completion flags such as IBV_WC_WITH_IMM, IBV_WC_WITH_INV and IBV_WC_GRH.',
    errors: [],
    notes: ['Always available, whatever wc_flags the CQ was created with.'],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_wc_read_completion_ts',
    library: IBV,
    header: VERBS_H,
    signature: 'uint64_t ibv_wc_read_completion_ts(struct ibv_cq_ex *cq);',
    summary: 'Returns the device timestamp of the current completion of an extended CQ, in device clock ticks.',
    parameters: [{ name: 'cq', text: 'the extended CQ, on a completion taken by ibv_start_poll or ibv_next_poll.' }],
    returns: 'The timestamp in device clock units.',
    errors: [],
    notes: [
      'Available only if the CQ was created with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, which not every device supports (rxe refuses it at creation).',
      'Convert with hca_core_clock (kHz) from ibv_query_device_ex; only the bits in completion_timestamp_mask are significant.',
    ],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_end_poll',
    library: IBV,
    header: VERBS_H,
    signature: 'void ibv_end_poll(struct ibv_cq_ex *cq);',
    summary: 'Ends a polling batch of an extended CQ and releases the CQ; the completions read are consumed.',
    parameters: [{ name: 'cq', text: 'the extended CQ.' }],
    returns: 'Nothing.',
    errors: [],
    notes: ['Call it once per ibv_start_poll that returned 0, and not after one that returned ENOENT or an error.'],
    chapter: chapter('signaling'),
  },
  {
    name: 'ibv_get_cq_event',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context);',
    summary:
      'Waits for the next completion event on a completion channel and says which CQ it is for. The event only signals that the CQ has new completions; they are then read with ibv_poll_cq.',
    parameters: [
      { name: 'channel', text: 'the completion channel.' },
      { name: 'cq', text: 'set to the CQ that produced the event.' },
      { name: 'cq_context', text: 'set to that CQ\'s cq_context.' },
    ],
    returns: '0 on success, or -1 with errno set (the error of the read on the channel\'s file descriptor).',
    errors: [
      { errno: 'EAGAIN', text: 'the channel\'s fd was made non-blocking (O_NONBLOCK) and no event is pending.' },
      { errno: 'EINTR', text: 'a signal arrived during the blocking read and its handler was installed without SA_RESTART (with SA_RESTART the read is simply resumed).' },
    ],
    notes: [
      'Every event taken must be acknowledged with ibv_ack_cq_events; ibv_destroy_cq waits until all have been.',
      'A CQ produces an event only when armed with ibv_req_notify_cq, and once per arming.',
      'To wait with a timeout, make channel->fd non-blocking and poll it, then call ibv_get_cq_event.',
    ],
    chapter: chapter('completions'),
  },
  {
    name: 'ibv_ack_cq_events',
    library: IBV,
    header: VERBS_H,
    signature: 'void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents);',
    summary: 'Acknowledges completion events taken from a CQ with ibv_get_cq_event.',
    parameters: [
      { name: 'cq', text: 'the CQ the events were for.' },
      { name: 'nevents', text: 'how many of its events to acknowledge.' },
    ],
    returns: 'Nothing.',
    errors: [],
    notes: [
      'Acknowledging takes a mutex, so counting events and acknowledging them in batches is cheaper than one call per event.',
      'An event never acknowledged makes ibv_destroy_cq wait forever.',
    ],
    chapter: chapter('completions'),
  },
  {
    name: 'ibv_create_ah_from_wc',
    library: IBV,
    header: VERBS_H,
    signature: 'struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh, uint8_t port_num);',
    summary:
      'Creates an address handle pointing back at the sender of a received UD message, from its completion and GRH: the way a UD server answers a request.',
    parameters: [
      { name: 'pd', text: 'the protection domain of the new AH.' },
      { name: 'wc', text: 'the receive completion (it gives src_qp, slid, sl and whether a GRH is present).' },
      { name: 'grh', text: 'the first 40 bytes of the receive buffer, where the GRH was placed.' },
      { name: 'port_num', text: 'the local port the message arrived on.' },
    ],
    returns: 'The new AH, or NULL with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'the message was sent to a multicast group, so no unicast reply address can be derived; or the AH attributes are rejected, as by ibv_create_ah.' },
      { errno: 'EPROTONOSUPPORT', text: 'the GRH is neither a RoCE v1 nor a RoCE v2 (IPv4 or IPv6) header.' },
    ],
    notes: [
      'The reply also needs the sender\'s QPN (wc.src_qp) and the Q_Key.',
      'On RoCE v2 over IPv4 the IPv4 header occupies the last 20 of the 40 GRH bytes; the library recognises it and finds the matching local GID entry.',
    ],
    chapter: chapter('unreliable'),
  },
  {
    name: 'ibv_get_async_event',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event);',
    summary:
      'Waits for the next asynchronous event of a device context: events not tied to one WR, such as a QP entering the error state, a CQ overrun, an SRQ reaching its limit, or a port going up or down.',
    parameters: [
      { name: 'context', text: 'the device context.' },
      { name: 'event', text: 'filled in: event_type, and in element the QP, CQ, SRQ, WQ or port number the event concerns.' },
    ],
    returns: '0 on success, or -1 with errno set (the error of the read on context->async_fd).',
    errors: [
      { errno: 'EAGAIN', text: 'async_fd was made non-blocking (O_NONBLOCK) and no event is pending.' },
      { errno: 'EINTR', text: 'a signal arrived during the blocking read and its handler was installed without SA_RESTART (with SA_RESTART the read is simply resumed).' },
    ],
    notes: [
      'Every event must be acknowledged with ibv_ack_async_event; destroying the QP, CQ or SRQ an event names waits until it has been.',
      'Only the element member that fits event_type is valid: qp for QP events, cq for IBV_EVENT_CQ_ERR, srq for SRQ events, port_num for port events.',
      'It blocks: a long-running program reads events in a thread of its own, or makes async_fd non-blocking and polls it.',
    ],
    chapter: chapter('errors'),
  },
  {
    name: 'ibv_event_type_str',
    library: IBV,
    header: VERBS_H,
    signature: 'const char *ibv_event_type_str(enum ibv_event_type event);',
    summary:
      'Turns an asynchronous event type into a readable string, such as port error or SRQ limit reached.',
    parameters: [{ name: 'event', text: 'an enum ibv_event_type value, usually event.event_type.' }],
    returns: 'A constant string; a value the library does not know gives unknown, never NULL.',
    errors: [],
    notes: [],
    chapter: chapter('errors'),
  },
  {
    name: 'ibv_ack_async_event',
    library: IBV,
    header: VERBS_H,
    signature: 'void ibv_ack_async_event(struct ibv_async_event *event);',
    summary: 'Acknowledges an asynchronous event returned by ibv_get_async_event.',
    parameters: [{ name: 'event', text: 'the event, as filled in by ibv_get_async_event.' }],
    returns: 'Nothing.',
    errors: [],
    notes: [
      'Acknowledge each event exactly once, and before destroying the object it names: the destroy call waits for it.',
    ],
    chapter: chapter('errors'),
  },

  // ---------------------------------------------------------------- teardown
  {
    name: 'ibv_destroy_qp',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_destroy_qp(struct ibv_qp *qp);',
    summary: 'Destroys a queue pair. It is the first object to go at teardown, since it uses CQs, an SRQ, MRs and the PD.',
    parameters: [{ name: 'qp', text: 'the QP.' }],
    returns: '0 on success, or the errno value (returned, not stored in errno).',
    errors: [{ errno: 'EBUSY', text: 'the QP is still attached to a multicast group.' }],
    notes: [
      'It waits until every asynchronous event naming this QP has been acknowledged.',
      'For a QP created by rdma_create_qp, use rdma_destroy_qp.',
    ],
    chapter: chapter('objects'),
  },
  {
    name: 'ibv_destroy_srq',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_destroy_srq(struct ibv_srq *srq);',
    summary: 'Destroys a shared receive queue, after the QPs that use it.',
    parameters: [{ name: 'srq', text: 'the SRQ.' }],
    returns: '0 on success, or the errno value (returned, not stored in errno).',
    errors: [{ errno: 'EBUSY', text: 'a QP still uses the SRQ.' }],
    notes: ['It waits until every asynchronous event naming this SRQ has been acknowledged.'],
    chapter: chapter('objects'),
  },
  {
    name: 'ibv_destroy_ah',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_destroy_ah(struct ibv_ah *ah);',
    summary: 'Destroys an address handle.',
    parameters: [{ name: 'ah', text: 'the AH.' }],
    returns: '0 on success, or the errno value (returned, not stored in errno).',
    errors: [],
    notes: ['Destroy it only after every send that named it has completed.'],
    chapter: chapter('objects'),
  },
  {
    name: 'ibv_dealloc_mw',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_dealloc_mw(struct ibv_mw *mw);',
    summary: 'Frees a memory window, unbinding it first if it is bound; its rkey stops working.',
    parameters: [{ name: 'mw', text: 'the window.' }],
    returns:
      '0 on success, or the errno value. It is a static inline function in verbs.h: the error is returned, not stored in errno.',
    errors: [],
    notes: ['Free windows before deregistering the MR they are bound to: ibv_dereg_mr refuses an MR with a bound window.'],
    chapter: chapter('windows'),
  },
  {
    name: 'ibv_dereg_mr',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_dereg_mr(struct ibv_mr *mr);',
    summary: 'Deregisters a memory region and unpins its memory; its lkey and rkey stop working.',
    parameters: [{ name: 'mr', text: 'the MR.' }],
    returns: '0 on success, or the errno value (returned, not stored in errno).',
    errors: [
      { errno: 'EINVAL', text: 'a memory window is still bound to the MR (the man page says the call fails then; EINVAL is rxe\'s answer, other providers may use another errno).' },
    ],
    notes: [
      'Deregister only after every WR using the MR has completed and the peer has stopped using its rkey; a peer\'s later access fails with a remote access error.',
      'Free the memory itself only after deregistering it.',
    ],
    chapter: chapter('registration'),
  },
  {
    name: 'ibv_destroy_cq',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_destroy_cq(struct ibv_cq *cq);',
    summary: 'Destroys a completion queue (basic or extended), after the QPs that report to it.',
    parameters: [{ name: 'cq', text: 'the CQ; for an extended CQ, pass ibv_cq_ex_to_cq(cq).' }],
    returns: '0 on success, or the errno value (returned, not stored in errno).',
    errors: [{ errno: 'EBUSY', text: 'a QP still uses the CQ.' }],
    notes: [
      'It waits until every completion event taken from it has been acknowledged (ibv_ack_cq_events) and every asynchronous event naming it too: a missing acknowledgement hangs it.',
    ],
    chapter: chapter('objects'),
  },
  {
    name: 'ibv_destroy_comp_channel',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_destroy_comp_channel(struct ibv_comp_channel *channel);',
    summary: 'Destroys a completion channel and closes its file descriptor.',
    parameters: [{ name: 'channel', text: 'the channel.' }],
    returns: '0 on success, or the errno value (returned, not stored in errno).',
    errors: [{ errno: 'EBUSY', text: 'a CQ still uses the channel: destroy the CQs first.' }],
    notes: [],
    chapter: chapter('completions'),
  },
  {
    name: 'ibv_dealloc_pd',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_dealloc_pd(struct ibv_pd *pd);',
    summary: 'Frees a protection domain, once nothing belongs to it any more.',
    parameters: [{ name: 'pd', text: 'the PD.' }],
    returns: '0 on success, or the errno value (returned, not stored in errno).',
    errors: [{ errno: 'EBUSY', text: 'an MR, memory window, QP, SRQ or AH of this PD still exists: a teardown-order bug.' }],
    notes: [],
    chapter: chapter('objects'),
  },
  {
    name: 'ibv_close_device',
    library: IBV,
    header: VERBS_H,
    signature: 'int ibv_close_device(struct ibv_context *context);',
    summary: 'Closes a device context: the last verbs call on it.',
    parameters: [{ name: 'context', text: 'the context from ibv_open_device.' }],
    returns: '0 on success; the man page allows -1 on failure, but rdma-core 44 always returns 0.',
    errors: [],
    notes: [
      'It does not release the objects created through the context: destroy QPs, SRQs, AHs, windows, MRs, CQs, channels and PDs first, or they leak.',
    ],
    chapter: chapter('objects'),
  },

  // ---------------------------------------------------------------- rdma_cm
  {
    name: 'rdma_create_event_channel',
    library: RDMACM,
    header: CMA_H,
    signature: 'struct rdma_event_channel *rdma_create_event_channel(void);',
    summary:
      'Opens an event channel: the file descriptor on which rdma_cm reports what happens to the IDs attached to it (address and route resolved, connect request, established, disconnected, ...).',
    parameters: [],
    returns: 'The channel (its fd field can be polled), or NULL with errno set.',
    errors: [
      { errno: 'ENODEV', text: 'no RDMA device was found on the host.' },
      { errno: 'EPERM', text: 'librdmacm cannot find the kernel\'s rdma_cm interface (the rdma_ucm module) or does not accept its ABI version.' },
      { errno: 'ENOMEM', text: 'out of memory.' },
    ],
    notes: [
      'One channel can serve every ID of a program; separate channels (see rdma_migrate_id) let connections be waited on independently.',
      'Make channel->fd non-blocking and poll it to wait for events with a timeout.',
      'Destroy it with rdma_destroy_event_channel after all its IDs.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_create_id',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context, enum rdma_port_space ps);',
    summary:
      'Creates an rdma_cm identifier, the RDMA counterpart of a socket: it is bound, resolved, listened on or connected, and its events arrive on the channel.',
    parameters: [
      { name: 'channel', text: 'the event channel for its events, or NULL to make the ID synchronous (each call then blocks until its event).' },
      { name: 'id', text: 'set to the new ID.' },
      { name: 'context', text: 'any pointer, kept in id->context.' },
      { name: 'ps', text: 'the port space: RDMA_PS_TCP for reliable connected QPs (RC), RDMA_PS_UDP for UD and multicast, RDMA_PS_IB for any IB service.' },
    ],
    returns: '0 on success, or -1 with errno set.',
    errors: [
      { errno: 'ENODEV', text: 'no RDMA device was found on the host.' },
      { errno: 'EPERM', text: 'the kernel\'s rdma_cm interface is missing or has an ABI version librdmacm does not accept.' },
      { errno: 'ENOMEM', text: 'out of memory.' },
    ],
    notes: [
      'A new ID is bound to no device; id->verbs is set once rdma_bind_addr with a specific address, rdma_resolve_addr, or a connect request gives it one.',
      'Release it with rdma_destroy_id.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_bind_addr',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr);',
    summary:
      'Binds an ID to a local IP address and port, usually before rdma_listen. A specific address also binds the ID to the RDMA device behind it; a wildcard address does not.',
    parameters: [
      { name: 'id', text: 'the ID.' },
      { name: 'addr', text: 'a struct sockaddr_in or sockaddr_in6; the address may be the wildcard, and port 0 lets rdma_cm pick one (read it with rdma_get_src_port).' },
    ],
    returns: '0 on success, or -1 with errno set.',
    errors: [
      { errno: 'EADDRINUSE', text: 'another rdma_cm ID is bound to the same address and port.' },
      { errno: 'EADDRNOTAVAIL', text: 'the address is not one of this host\'s, or the port is taken by another rdma_cm ID and one of the two binds is a wildcard.' },
      { errno: 'ENODEV', text: 'the address belongs to a network interface with no RDMA device.' },
      { errno: 'EACCES', text: 'a port below 1024 without CAP_NET_BIND_SERVICE.' },
      { errno: 'EINVAL', text: 'an unsupported address family, or the ID is already bound.' },
    ],
    notes: [
      'On InfiniBand and RoCE, rdma_cm ports are a space of their own: a TCP server on the same port number does not conflict with it.',
      'On the active side a bind is optional: rdma_resolve_addr picks the source from the routing table.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_listen',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_listen(struct rdma_cm_id *id, int backlog);',
    summary:
      'Starts listening for connection requests on a bound ID. Each request arrives as an RDMA_CM_EVENT_CONNECT_REQUEST event carrying a new ID for that client.',
    parameters: [
      { name: 'id', text: 'an ID bound with rdma_bind_addr.' },
      { name: 'backlog', text: 'how many requests may wait for rdma_accept or rdma_reject.' },
    ],
    returns: '0 on success, or -1 with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'the ID is neither bound nor fresh: for example it is already listening, or resolving or connected. (A fresh, unbound ID is not an error: the kernel binds it to the IPv4 wildcard address first.)' },
    ],
    notes: [
      'An ID bound to a specific address listens on that address and its device only; a wildcard bind listens on all RDMA devices.',
      'Accept or reject each request on the new ID (event->id), never on the listening one.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_resolve_addr',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr, int timeout_ms);',
    summary:
      'Starts resolving a destination IP address into an RDMA address: picks the local device and port that route to it and the GIDs of both ends (on RoCE, through the routing table and ARP or neighbour discovery). The result arrives as an event.',
    parameters: [
      { name: 'id', text: 'the ID (active side).' },
      { name: 'src_addr', text: 'a local address to bind to, or NULL to let the routing table choose.' },
      { name: 'dst_addr', text: 'the destination, including the port the server listens on.' },
      { name: 'timeout_ms', text: 'how long resolution may take, in milliseconds.' },
    ],
    returns: '0 if resolution started, or -1 with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'dst_addr of an unsupported family, src_addr and dst_addr of different families, or the ID not in a state that allows resolution.' },
      { errno: 'ENETUNREACH', text: 'the routing table has no route to dst_addr (reported by the call itself).' },
      { errno: 'ETIMEDOUT', text: 'as the status (-ETIMEDOUT) of RDMA_CM_EVENT_ADDR_ERROR: no neighbour answered within timeout_ms, for example no host at that address.' },
      { errno: 'ENODEV', text: 'as the status of RDMA_CM_EVENT_ADDR_ERROR: the interface that routes to the address has no RDMA device.' },
    ],
    notes: [
      'Wait for RDMA_CM_EVENT_ADDR_RESOLVED (or ADDR_ERROR) before the next step; after it id->verbs is the device context on which to create the PD, CQs and QP.',
      'Next comes rdma_resolve_route.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_resolve_route',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms);',
    summary:
      'Starts resolving the route to an already resolved destination: the path the connection will use (on InfiniBand a path record from the subnet administrator; on RoCE it is computed locally). The result arrives as an event.',
    parameters: [
      { name: 'id', text: 'an ID whose address is resolved (RDMA_CM_EVENT_ADDR_RESOLVED received).' },
      { name: 'timeout_ms', text: 'how long resolution may take, in milliseconds.' },
    ],
    returns: '0 if resolution started, or -1 with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'the address has not been resolved yet.' },
      { errno: 'ETIMEDOUT', text: 'as the status (-ETIMEDOUT) of RDMA_CM_EVENT_ROUTE_ERROR on InfiniBand: the path record query to the subnet administrator got no answer in time.' },
    ],
    notes: [
      'Wait for RDMA_CM_EVENT_ROUTE_RESOLVED (or ROUTE_ERROR); then create the QP and call rdma_connect.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_get_cm_event',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event);',
    summary:
      'Takes the next event from an event channel, blocking by default until one arrives. The event says which ID it concerns, its type, a status and type-specific parameters such as private data.',
    parameters: [
      { name: 'channel', text: 'the event channel.' },
      { name: 'event', text: 'set to the event, which the library allocated and rdma_ack_cm_event frees.' },
    ],
    returns: '0 on success, or -1 with errno set.',
    errors: [
      { errno: 'EAGAIN', text: 'the channel\'s fd was made non-blocking and no event is pending.' },
      { errno: 'EINVAL', text: 'event is NULL.' },
      { errno: 'ENOMEM', text: 'out of memory.' },
    ],
    notes: [
      'Check event->event before anything else: an ID waiting for ESTABLISHED may get REJECTED, UNREACHABLE or CONNECT_ERROR instead. event->status is 0, a negative errno, or a transport-specific value such as an InfiniBand reject reason.',
      'For RDMA_CM_EVENT_CONNECT_REQUEST, event->id is a new ID for the client and event->listen_id the listening one.',
      'Copy what you need (private data included) before rdma_ack_cm_event: the event and everything it points to are freed then.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_event_str',
    library: RDMACM,
    header: CMA_H,
    signature: 'const char *rdma_event_str(enum rdma_cm_event_type event);',
    summary: 'Turns an rdma_cm event type into its name, such as RDMA_CM_EVENT_ESTABLISHED.',
    parameters: [{ name: 'event', text: 'an enum rdma_cm_event_type value, usually event->event.' }],
    returns: 'A static string; a value the library does not know gives UNKNOWN EVENT.',
    errors: [],
    notes: [],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_ack_cm_event',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_ack_cm_event(struct rdma_cm_event *event);',
    summary: 'Acknowledges and frees an event returned by rdma_get_cm_event, including its private data.',
    parameters: [{ name: 'event', text: 'the event.' }],
    returns: '0 on success, or -1 with errno set.',
    errors: [{ errno: 'EINVAL', text: 'event is NULL.' }],
    notes: [
      'Every successful rdma_get_cm_event needs exactly one acknowledgement; rdma_destroy_id and rdma_migrate_id wait for the ID\'s events to be acknowledged.',
      'When rdma_accept takes its conn_param from the event, acknowledge only after rdma_accept has returned.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_migrate_id',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel);',
    summary:
      'Moves an ID, with its pending events, to another event channel, for example to give each accepted connection a channel of its own.',
    parameters: [
      { name: 'id', text: 'the ID to move.' },
      { name: 'channel', text: 'the new event channel, or NULL to make the ID synchronous.' },
    ],
    returns: '0 on success, or -1 with errno set.',
    errors: [{ errno: 'EINVAL', text: 'channel is NULL for an ID that is already synchronous.' }],
    notes: [
      'It blocks while the ID has unacknowledged events on its current channel.',
      'While it runs, do not read the old channel for this ID or call anything else on the ID.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_create_qp',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr);',
    summary:
      'Creates a QP on the ID\'s device and attaches it to the ID, which then moves it through its states itself: a connected QP goes to INIT now, so receives can be posted, and to RTR and RTS during rdma_connect or rdma_accept; a UD QP goes straight to RTS.',
    parameters: [
      { name: 'id', text: 'an ID bound to a device (address resolved, or the new ID of a connect request).' },
      { name: 'pd', text: 'a PD of the same device (id->verbs), or NULL for a default PD per device.' },
      { name: 'qp_init_attr', text: 'as for ibv_create_qp; send_cq and recv_cq may be NULL, and cap is updated with the actual values.' },
    ],
    returns: '0 on success (the QP is id->qp), or -1 with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'the ID already has a QP, pd belongs to another device than the ID, the CQs conflict with ones the ID already has, or a capability exceeds the device\'s limits.' },
      { errno: 'ENOMEM', text: 'out of memory while creating the QP, or the CQs librdmacm creates for it when none are given: the errno of the failing verbs call is passed on.' },
    ],
    notes: [
      'With send_cq or recv_cq NULL, rdma_cm creates CQs with completion channels for the QP and exposes them as id->send_cq, id->recv_cq and their channels.',
      'An ID has at most one QP; destroy it with rdma_destroy_qp, not ibv_destroy_qp.',
      'Post the receives the peer may need before rdma_connect or rdma_accept.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_connect',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param);',
    summary:
      'Sends a connection request to the server (for RDMA_PS_UDP, a lookup of the remote UD QP). The outcome arrives as an event on the client\'s ID.',
    parameters: [
      { name: 'id', text: 'an ID whose route is resolved, normally with a QP.' },
      { name: 'conn_param', text: 'private_data and private_data_len, responder_resources and initiator_depth (outstanding RDMA READs and atomics each way), retry_count, rnr_retry_count, flow_control; qp_num and srq only when the ID has no QP.' },
    ],
    returns: '0 if the request was sent, or -1 with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'responder_resources or initiator_depth above the device\'s limits, conn_param NULL on an ID without a QP, private data too long, or the route not resolved.' },
      { errno: 'ETIMEDOUT', text: 'as the status (-ETIMEDOUT) of RDMA_CM_EVENT_UNREACHABLE: the server never answered.' },
      { errno: 'ECONNREFUSED', text: 'on a synchronous ID (no event channel, as from rdma_create_ep), a REJECTED answer is returned as this errno.' },
    ],
    notes: [
      'Expect RDMA_CM_EVENT_ESTABLISHED, or REJECTED, whose status is the InfiniBand reject reason (8, invalid service ID, when nothing listens on that port; 28 when the server called rdma_reject), or UNREACHABLE or CONNECT_ERROR.',
      'rdma_cm moves the QP to RTR and RTS itself when the reply arrives; post receives before connecting.',
      'On InfiniBand and RoCE the request carries at most 56 bytes of private data; retry_count and rnr_retry_count are 3-bit values, and rnr_retry_count 7 means retry without limit.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_accept',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param);',
    summary:
      'Accepts a connection request on the server: moves the new ID\'s QP to RTR and RTS and sends the reply, with optional private data. Both sides then get RDMA_CM_EVENT_ESTABLISHED.',
    parameters: [
      { name: 'id', text: 'the new ID from the RDMA_CM_EVENT_CONNECT_REQUEST event, not the listening ID.' },
      { name: 'conn_param', text: 'private data for the reply, responder_resources and initiator_depth (at most the device limits and, preferably, what the request asked), rnr_retry_count; may be NULL only when the ID has a QP, and then the request\'s values are used, capped by the device.' },
    ],
    returns: '0 on success, or -1 with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'responder_resources or initiator_depth above the device\'s limits, or the ID is not a pending connection request.' },
    ],
    notes: [
      'Post receives before accepting: the client may send as soon as it sees ESTABLISHED.',
      'If conn_param points into the connect request event, do not acknowledge that event until rdma_accept has returned.',
      'On InfiniBand and RoCE the reply carries at most 196 bytes of private data: enough to advertise a buffer address, length and rkey.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_reject',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len);',
    summary: 'Refuses a connection request, optionally with private data explaining why.',
    parameters: [
      { name: 'id', text: 'the new ID from the RDMA_CM_EVENT_CONNECT_REQUEST event.' },
      { name: 'private_data', text: 'optional data for the client, or NULL.' },
      { name: 'private_data_len', text: 'its length in bytes.' },
    ],
    returns: '0 on success, or -1 with errno set.',
    errors: [{ errno: 'EINVAL', text: 'the ID has no connection exchange under way, so there is nothing to reject: for example the listening ID itself, or an ID that never received a request.' }],
    notes: [
      'The client gets RDMA_CM_EVENT_REJECTED; on InfiniBand and RoCE its status is 28 (consumer-defined reject) and the private data comes with it.',
      'Destroy the rejected ID afterwards with rdma_destroy_id.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_join_multicast',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context);',
    summary:
      'Joins a multicast group as a full member (send and receive). The ID\'s UD QP is attached to the group when the join\'s event is retrieved.',
    parameters: [
      { name: 'id', text: 'an RDMA_PS_UDP ID bound to a device by rdma_bind_addr or rdma_resolve_addr.' },
      { name: 'addr', text: 'the multicast IP address identifying the group.' },
      { name: 'context', text: 'any pointer, returned in the join event\'s private_data field.' },
    ],
    returns: '0 if the join started, or -1 with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'an address of unsupported family, the ID is not bound to a device, or it is past address resolution (only a bound or address-resolved ID may join).' },
      { errno: 'ENOMEM', text: 'out of memory.' },
    ],
    notes: [
      'The result is RDMA_CM_EVENT_MULTICAST_JOIN (or MULTICAST_ERROR); its param.ud holds the ah_attr, remote QPN (0xFFFFFF) and Q_Key with which to send to the group.',
      'Leave with rdma_leave_multicast; destroying the ID also leaves all its groups.',
    ],
    chapter: chapter('unreliable'),
  },
  {
    name: 'rdma_join_multicast_ex',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *mc_join_attr, void *context);',
    summary:
      'Joins a multicast group with extended options; in practice, to join as a send-only full member, which may send to the group but receives nothing from it.',
    parameters: [
      { name: 'id', text: 'an RDMA_PS_UDP ID bound to a device.' },
      { name: 'mc_join_attr', text: 'comp_mask (RDMA_CM_JOIN_MC_ATTR_ADDRESS and RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS, both required), addr, and join_flags: RDMA_MC_JOIN_FLAG_FULLMEMBER or RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER.' },
      { name: 'context', text: 'any pointer, returned in the join event.' },
    ],
    returns: '0 if the join started, or -1 with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'comp_mask lacks the address or the join flags, join_flags is unknown, or the address is unusable.' },
      { errno: 'EOPNOTSUPP', text: 'comp_mask has bits this librdmacm does not know.' },
    ],
    notes: [
      'A send-only join does not attach the QP to the group; on RoCE it sends no IGMP join, and on InfiniBand it needs subnet manager support.',
    ],
    chapter: chapter('unreliable'),
  },
  {
    name: 'rdma_leave_multicast',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr);',
    summary: 'Leaves a multicast group joined on this ID and detaches the ID\'s QP from it.',
    parameters: [
      { name: 'id', text: 'the ID that joined.' },
      { name: 'addr', text: 'the group\'s multicast address, as given to the join.' },
    ],
    returns: '0 on success, or -1 with errno set.',
    errors: [
      { errno: 'EADDRNOTAVAIL', text: 'this ID has not joined that address.' },
      { errno: 'EINVAL', text: 'an address of unsupported family.' },
    ],
    notes: [
      'Called before the join completed, it cancels the join. It waits until the group\'s events have been acknowledged.',
      'Messages from the group may still be waiting in the CQ after leaving.',
    ],
    chapter: chapter('unreliable'),
  },
  {
    name: 'rdma_disconnect',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_disconnect(struct rdma_cm_id *id);',
    summary:
      'Disconnects a connection: moves the ID\'s QP to the error state and tells the peer. Both sides then get RDMA_CM_EVENT_DISCONNECTED.',
    parameters: [{ name: 'id', text: 'a connected ID.' }],
    returns: '0 on success, or -1 with errno set.',
    errors: [{ errno: 'EINVAL', text: 'the ID never sent or received a connection request, so there is no connection to end.' }],
    notes: [
      'The QP goes to ERR at once, so every WR still outstanding completes with IBV_WC_WR_FLUSH_ERR: disconnect only after your own operations have completed.',
      'Both sides should call it; calling it after the peer has started the disconnect is normal.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_destroy_qp',
    library: RDMACM,
    header: CMA_H,
    signature: 'void rdma_destroy_qp(struct rdma_cm_id *id);',
    summary: 'Destroys the QP created on an ID with rdma_create_qp, together with the CQs rdma_cm created for it.',
    parameters: [{ name: 'id', text: 'the ID.' }],
    returns: 'Nothing.',
    errors: [],
    notes: [
      'CQs you passed to rdma_create_qp are left alone: destroy them yourself, after the QP.',
      'Destroy the QP before rdma_destroy_id.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_destroy_id',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_destroy_id(struct rdma_cm_id *id);',
    summary: 'Destroys an rdma_cm ID and cancels anything it still has in progress.',
    parameters: [{ name: 'id', text: 'the ID.' }],
    returns: '0 on success, or -1 with errno set.',
    errors: [],
    notes: [
      'Destroy its QP first (rdma_destroy_qp), and acknowledge all of its events: the call blocks until they are acknowledged.',
      'Destroying an ID also leaves the multicast groups it joined.',
    ],
    chapter: chapter('connecting'),
  },
  {
    name: 'rdma_destroy_event_channel',
    library: RDMACM,
    header: CMA_H,
    signature: 'void rdma_destroy_event_channel(struct rdma_event_channel *channel);',
    summary: 'Closes an event channel and its file descriptor.',
    parameters: [{ name: 'channel', text: 'the channel.' }],
    returns: 'Nothing.',
    errors: [],
    notes: ['Destroy every ID on the channel and acknowledge every event taken from it first.'],
    chapter: chapter('connecting'),
  },

  // ---------------------------------------------------------------- rdma_cm simplified API
  {
    name: 'rdma_getaddrinfo',
    library: RDMACM,
    header: CMA_H,
    signature:
      'int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints, struct rdma_addrinfo **res);',
    summary:
      'The RDMA counterpart of getaddrinfo: resolves a host name or address and a port into the addresses (and, on InfiniBand, route data) that rdma_create_ep needs.',
    parameters: [
      { name: 'node', text: 'a host name or numeric address, or NULL (for example for a passive listener on all addresses).' },
      { name: 'service', text: 'the port, as a string.' },
      { name: 'hints', text: 'optional: ai_flags (RAI_PASSIVE for a listener, RAI_NUMERICHOST, ...), ai_family, ai_qp_type, ai_port_space (RDMA_PS_TCP for RC).' },
      { name: 'res', text: 'set to a list of struct rdma_addrinfo, to be freed with rdma_freeaddrinfo.' },
    ],
    returns:
      '0 on success; -1 with errno set; or, when name resolution fails, a getaddrinfo EAI_ code returned directly (then errno means nothing: use gai_strerror).',
    errors: [
      { errno: 'EINVAL', text: 'node, service and hints are all NULL.' },
      { errno: 'ENODEV', text: 'no RDMA device was found on the host.' },
      { errno: 'ENOMEM', text: 'out of memory.' },
      { errno: 'EAI_NONAME', text: 'returned as the value, not in errno: the host or service is not known (other EAI_ codes are possible).' },
    ],
    notes: ['Test the result for non-zero rather than for -1: EAI_ codes are other non-zero values.'],
    chapter: chapter('byHand'),
  },
  {
    name: 'rdma_create_ep',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr);',
    summary:
      'Creates a synchronous rdma_cm ID from rdma_getaddrinfo results in one call. On the active side it also resolves the address and the route and, given qp_init_attr, creates the QP; on the passive side it binds, ready for rdma_listen.',
    parameters: [
      { name: 'id', text: 'set to the new ID.' },
      { name: 'res', text: 'an entry from rdma_getaddrinfo; RAI_PASSIVE in its ai_flags selects the passive side.' },
      { name: 'pd', text: 'the PD for the QP, or NULL for the device\'s default PD.' },
      { name: 'qp_init_attr', text: 'attributes for the QP, or NULL for none; on the passive side they are kept for the QPs of accepted IDs.' },
    ],
    returns: '0 on success, or -1 with errno set.',
    errors: [
      { errno: 'ETIMEDOUT', text: 'active side: address or route resolution did not finish; rdma_create_ep waits 2000 ms for each.' },
      { errno: 'ENODEV', text: 'librdmacm found no RDMA device on the host, or resolving or binding the address found none behind it.' },
      { errno: 'EINVAL', text: 'an address in res of a family librdmacm does not handle, or, when a QP is created, QP attributes that rdma_create_qp refuses (such as a pd of another device).' },
      { errno: 'ENOMEM', text: 'out of memory.' },
    ],
    notes: [
      'The ID is synchronous: each later call on it (rdma_connect, rdma_get_request, ...) blocks until its result; rdma_migrate_id to an event channel changes that.',
      'Active side: call rdma_connect next. Passive side: rdma_listen, then rdma_get_request for each client.',
      'Release it with rdma_destroy_ep, which destroys its QP too.',
    ],
    chapter: chapter('byHand'),
  },
  {
    name: 'rdma_freeaddrinfo',
    library: RDMACM,
    header: CMA_H,
    signature: 'void rdma_freeaddrinfo(struct rdma_addrinfo *res);',
    summary: 'Frees the list returned by rdma_getaddrinfo, with the addresses and route data its entries point to.',
    parameters: [{ name: 'res', text: 'the list from rdma_getaddrinfo.' }],
    returns: 'Nothing.',
    errors: [],
    notes: ['It may be called as soon as rdma_create_ep has returned: the ID does not keep pointers into the list.'],
    chapter: chapter('byHand'),
  },
  {
    name: 'rdma_get_request',
    library: RDMACM,
    header: CMA_H,
    signature: 'int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id);',
    summary:
      'Waits for the next connection request on a synchronous listening ID and returns the new ID for that client, with a QP already created if the listener was given QP attributes.',
    parameters: [
      { name: 'listen', text: 'a synchronous listening ID (from rdma_create_ep with RAI_PASSIVE, then rdma_listen).' },
      { name: 'id', text: 'set to the new ID.' },
    ],
    returns: '0 on success, or -1 with errno set.',
    errors: [
      { errno: 'EINVAL', text: 'the listening ID is not synchronous (it has an event channel), or the event received was not a connect request.' },
    ],
    notes: [
      'The request\'s details (private data, read depths) stay readable through the new ID until rdma_accept, rdma_reject or rdma_destroy_id.',
      'Post receives on the new ID before rdma_accept.',
    ],
    chapter: chapter('byHand'),
  },
  {
    name: 'rdma_reg_msgs',
    library: RDMACM,
    header: RDMA_VERBS_H,
    signature: 'struct ibv_mr *rdma_reg_msgs(struct rdma_cm_id *id, void *addr, size_t length);',
    summary:
      'Registers a buffer for messages on an ID: ibv_reg_mr on the ID\'s PD with IBV_ACCESS_LOCAL_WRITE only. It is a static inline function in rdma_verbs.h.',
    parameters: [
      { name: 'id', text: 'an ID bound to a device, so that id->pd exists.' },
      { name: 'addr', text: 'the start of the buffer (or array of buffers).' },
      { name: 'length', text: 'its total length in bytes.' },
    ],
    returns: 'The MR, or NULL with errno set.',
    errors: [
      { errno: 'ENOMEM', text: 'as for ibv_reg_mr: the memlock limit would be exceeded, or out of memory.' },
      { errno: 'EFAULT', text: 'as for ibv_reg_mr: the range is not mapped writable.' },
      { errno: 'EPERM', text: 'as for ibv_reg_mr: the memlock limit is 0.' },
    ],
    notes: [
      'The MR allows local access only: it can be sent from, received into, or be the local side of a READ or WRITE, but a peer cannot access it. rdma_reg_read and rdma_reg_write add remote read or write.',
      'Deregister it with rdma_dereg_mr before destroying the ID.',
    ],
    chapter: chapter('byHand'),
  },
  {
    name: 'rdma_post_recv',
    library: RDMACM,
    header: RDMA_VERBS_H,
    signature: 'int rdma_post_recv(struct rdma_cm_id *id, void *context, void *addr, size_t length, struct ibv_mr *mr);',
    summary:
      'Posts one receive buffer on the ID\'s QP (or its SRQ): a single-SGE ibv_post_recv. It is a static inline function in rdma_verbs.h.',
    parameters: [
      { name: 'id', text: 'an ID with a QP.' },
      { name: 'context', text: 'returned as wc.wr_id of the completion.' },
      { name: 'addr', text: 'the buffer.' },
      { name: 'length', text: 'its length; it must hold the whole incoming message.' },
      { name: 'mr', text: 'the MR containing the buffer (required).' },
    ],
    returns: '0 on success, or -1 with errno set (the wrapper turns ibv_post_recv\'s errno value into errno).',
    errors: [
      { errno: 'ENOMEM', text: 'the receive queue is full.' },
      { errno: 'EINVAL', text: 'the receive is invalid for the QP.' },
    ],
    notes: [
      'addr to addr + length must lie inside mr; this is checked only by an assert in debug builds.',
      'Post it before the peer sends, and keep the buffer registered until the receive completes.',
    ],
    chapter: chapter('byHand'),
  },
  {
    name: 'rdma_post_send',
    library: RDMACM,
    header: RDMA_VERBS_H,
    signature: 'int rdma_post_send(struct rdma_cm_id *id, void *context, void *addr, size_t length, struct ibv_mr *mr, int flags);',
    summary: 'Posts one SEND of a buffer on the ID\'s QP: a single-SGE ibv_post_send. It is a static inline function in rdma_verbs.h.',
    parameters: [
      { name: 'id', text: 'a connected ID with a QP.' },
      { name: 'context', text: 'returned as wc.wr_id of the completion.' },
      { name: 'addr', text: 'the data.' },
      { name: 'length', text: 'its length in bytes.' },
      { name: 'mr', text: 'the MR containing the data, or NULL with IBV_SEND_INLINE.' },
      { name: 'flags', text: 'ibv_send_flags: IBV_SEND_SIGNALED, IBV_SEND_INLINE, ...' },
    ],
    returns: '0 on success, or -1 with errno set (the wrapper turns ibv_post_send\'s errno value into errno).',
    errors: [
      { errno: 'ENOMEM', text: 'the send queue is full.' },
      { errno: 'EINVAL', text: 'the WR is invalid for the QP.' },
    ],
    notes: [
      'The peer must have a receive posted, or the SEND meets receiver-not-ready retries.',
      'Without IBV_SEND_SIGNALED (on a QP created with sq_sig_all 0) the send produces no completion, and an rdma_get_send_comp waiting for it blocks for ever.',
    ],
    chapter: chapter('byHand'),
  },
  {
    name: 'rdma_get_send_comp',
    library: RDMACM,
    header: RDMA_VERBS_H,
    signature: 'int rdma_get_send_comp(struct rdma_cm_id *id, struct ibv_wc *wc);',
    summary:
      'Waits for the next completion on the ID\'s send CQ (a SEND, READ or WRITE), arming the CQ and sleeping on its channel when it is empty. It is a static inline function in rdma_verbs.h.',
    parameters: [
      { name: 'id', text: 'an ID whose send CQ and channel were created by rdma_cm (rdma_create_ep or rdma_create_qp without CQs).' },
      { name: 'wc', text: 'filled in with the completion.' },
    ],
    returns: 'The number of completions returned (1), or -1 with errno set.',
    errors: [],
    notes: [
      'A returned completion can still be an error: check wc->status.',
      'Use it only when the ID\'s CQs are its own and separate for sends and receives.',
    ],
    chapter: chapter('byHand'),
  },
  {
    name: 'rdma_get_recv_comp',
    library: RDMACM,
    header: RDMA_VERBS_H,
    signature: 'int rdma_get_recv_comp(struct rdma_cm_id *id, struct ibv_wc *wc);',
    summary:
      'Waits for the next completion on the ID\'s receive CQ, arming the CQ and sleeping on its channel when it is empty. It is a static inline function in rdma_verbs.h.',
    parameters: [
      { name: 'id', text: 'an ID whose receive CQ and channel were created by rdma_cm.' },
      { name: 'wc', text: 'filled in with the completion; wc->byte_len is the received length.' },
    ],
    returns: 'The number of completions returned (1), or -1 with errno set.',
    errors: [],
    notes: [
      'A returned completion can still be an error: check wc->status.',
      'Use it only when the ID\'s CQs are its own and separate for sends and receives.',
    ],
    chapter: chapter('byHand'),
  },
  {
    name: 'rdma_dereg_mr',
    library: RDMACM,
    header: RDMA_VERBS_H,
    signature: 'int rdma_dereg_mr(struct ibv_mr *mr);',
    summary: 'Deregisters memory registered with rdma_reg_msgs (or rdma_reg_read, rdma_reg_write): ibv_dereg_mr behind a static inline wrapper.',
    parameters: [{ name: 'mr', text: 'the MR.' }],
    returns: '0 on success, or -1 with errno set (the wrapper turns ibv_dereg_mr\'s errno value into errno).',
    errors: [],
    notes: ['Deregister every MR of an ID before destroying it: the MRs belong to the ID\'s PD.'],
    chapter: chapter('byHand'),
  },
  {
    name: 'rdma_destroy_ep',
    library: RDMACM,
    header: CMA_H,
    signature: 'void rdma_destroy_ep(struct rdma_cm_id *id);',
    summary: 'Destroys an ID created by rdma_create_ep (or returned by rdma_get_request) together with its QP and SRQ.',
    parameters: [{ name: 'id', text: 'the ID.' }],
    returns: 'Nothing.',
    errors: [],
    notes: ['Deregister the ID\'s MRs first; a PD you passed in is yours to free afterwards.'],
    chapter: chapter('byHand'),
  },
];
