// The course's glossary: one entry per term, in alphabetical order of `term`. The build links a
// term at its first use on each page (glossary-links.mjs) and writes the glossary page from this
// list. `forms` are the exact, case-sensitive strings that count as a use (whole words only):
// chosen so that ordinary English cannot match them by accident. `definition` is plain text;
// `see` names the section of the site that explains the term best.
export const GLOSSARY = [
  {
    id: 'ack', term: 'ACK', expansion: 'acknowledgement', forms: ['ACK', 'ACKs', 'ACKed'],
    definition: 'An RC responder\'s packet that confirms every packet up to a PSN; one ACK may cover many packets (coalesced). An RC send work request completes only once its ACK, or for a READ its response data, has arrived.',
    see: [{ text: 'On the wire', link: '/wire#on-the-wire' }],
  },
  {
    id: 'aeth', term: 'AETH', expansion: 'ACK extended transport header', forms: ['AETH'],
    definition: 'The 4-byte header of an acknowledgement and of a READ response: a syndrome byte that says ACK, RNR NAK or NAK (with its reason, such as a PSN sequence error), and the MSN.',
    see: [{ text: 'A RoCE v2 packet', link: '/wire#roce-v2-packet' }],
  },
  {
    id: 'ah', term: 'AH', expansion: 'address handle', forms: ['AH', 'AHs', 'address handle', 'address handles'],
    definition: 'A verbs object that describes how to reach a remote port: its GID (or LID), hop limit, traffic class and service level. A UD SEND names one in every work request, with the remote QPN and Q_Key; a connected QP keeps the same facts in its own attributes.',
    see: [{ text: 'Address handle', link: '/verbs-objects#ah' }],
  },
  {
    id: 'allreduce', term: 'allreduce', expansion: 'all-reduce', forms: ['allreduce', 'allreduces', 'all-reduce'],
    definition: 'A collective operation: every rank contributes a vector and every rank ends with their element-wise reduction (a sum of gradients, in training). A ring does it as a reduce-scatter then an all-gather, 2(n-1) steps in which each link carries 2(n-1)/n of the vector.',
    see: [{ text: 'A ring allreduce on verbs', link: '/collectives#ring' }],
  },
  {
    id: 'atomics', term: 'atomics', expansion: 'remote atomic operations', forms: ['atomics', 'FETCH_AND_ADD', 'CMP_AND_SWP', 'fetch-and-add', 'compare-and-swap'],
    definition: 'Operations on 8 bytes of a peer\'s registered memory that no other operation of its device can interrupt: FETCH_AND_ADD adds a value, CMP_AND_SWP (compare and swap) replaces the value if it equals an expected one; both return the old value to the requester. The device\'s atomic_cap says whether they are atomic against the target\'s CPU too (ATOMIC_GLOB) or only among the device\'s own operations (ATOMIC_HCA).',
    see: [{ text: 'Atomics', link: '/read-and-atomics#atomics' }],
  },
  {
    id: 'bar', term: 'BAR', expansion: 'base address register', forms: ['BAR', 'BARs', 'BAR1'],
    definition: 'A window of a PCIe device\'s memory mapped into the physical address space. A NIC reaches GPU memory through the GPU\'s BAR1 aperture, and a program rings a NIC\'s doorbell through a mapping of the NIC\'s BAR.',
    see: [{ text: 'PCIe topology', link: '/gpudirect#topology' }],
  },
  {
    id: 'bth', term: 'BTH', expansion: 'base transport header', forms: ['BTH'],
    definition: 'The 12-byte header every InfiniBand and RoCE packet carries: the opcode, the destination QP number, the PSN, the P_Key, the ACK-request bit and a few flags.',
    see: [{ text: 'A RoCE v2 packet', link: '/wire#roce-v2-packet' }],
  },
  {
    id: 'busbw', term: 'busbw', expansion: 'bus bandwidth', forms: ['busbw', 'bus bandwidth'],
    definition: 'The figure nccl-tests reports next to the algorithm bandwidth (data size divided by time): the algorithm bandwidth times a factor per collective, 2(n-1)/n for an all-reduce over n ranks, so that it can be compared with the speed of the links whatever the number of ranks.',
    see: [{ text: 'algbw and busbw', link: '/collectives#busbw' }, { text: 'NCCL on EFA', link: '/efa#nccl' }],
  },
  {
    id: 'cnp', term: 'CNP', expansion: 'congestion notification packet', forms: ['CNP', 'CNPs'],
    definition: 'The RoCE v2 packet a receiver sends back when a packet arrives marked by ECN; it tells the sender\'s NIC to slow down that QP (DCQCN).',
    see: [{ text: 'RoCE v2', link: '/why-rdma#roce-v2' }],
  },
  {
    id: 'completion-channel', term: 'completion channel', forms: ['completion channel', 'completion channels'],
    definition: 'A file descriptor on which a program sleeps until a completion queue it armed with ibv_req_notify_cq receives an entry; ibv_get_cq_event returns the event, and the program then polls the CQ.',
    see: [{ text: 'Completion events', link: '/completions#events' }],
  },
  {
    id: 'cq', term: 'CQ', expansion: 'completion queue', forms: ['CQ', 'CQs', 'completion queue', 'completion queues'],
    definition: 'The queue into which the device writes an entry for each finished work request; a program reads the entries with ibv_poll_cq, or sleeps on a completion channel until one arrives. Several queue pairs may share one CQ.',
    see: [{ text: 'Completion queue', link: '/verbs-objects#cq' }],
  },
  {
    id: 'cqe', term: 'CQE', expansion: 'completion queue entry', forms: ['CQE', 'CQEs', 'completion queue entry', 'completion queue entries'],
    definition: 'One entry in a completion queue, written by the device when a work request has finished; ibv_poll_cq turns each CQE into a work completion (struct ibv_wc).',
    see: [{ text: 'What a work completion says', link: '/completions#work-completion' }],
  },
  {
    id: 'dcqcn', term: 'DCQCN', expansion: 'Data Center Quantized Congestion Notification', forms: ['DCQCN'],
    definition: 'The usual congestion control of RoCE NICs: switches mark packets with ECN instead of dropping them, receivers answer with CNPs, and the sending NIC lowers the QP\'s rate on each CNP and raises it again while none arrive.',
    see: [{ text: 'RoCE v2', link: '/why-rdma#roce-v2' }],
  },
  {
    id: 'dma-buf', term: 'dma-buf', forms: ['dma-buf', 'dma-bufs'],
    definition: 'The Linux kernel\'s way of sharing a buffer between device drivers through a file descriptor. A program registers GPU memory for RDMA with ibv_reg_dmabuf_mr, passing a dma-buf descriptor that the GPU driver exported, so the NIC reaches the GPU memory directly.',
    see: [{ text: 'Registering GPU memory with dma-buf', link: '/gpudirect#dma-buf' }],
  },
  {
    id: 'doorbell', term: 'doorbell', forms: ['doorbell', 'doorbells'],
    definition: 'A write that tells the consumer of a queue that new entries wait in it. For an RDMA NIC it is a register mapped into the process: after writing work queue elements, the provider library writes the doorbell once, however many work requests one ibv_post_send call posted.',
    see: [{ text: 'Doorbell batching', link: '/performance#doorbell-batching' }],
  },
  {
    id: 'dscp', term: 'DSCP', expansion: 'Differentiated Services Code Point', forms: ['DSCP'],
    definition: 'The upper six bits of the IP header\'s traffic-class byte. RoCE networks use it to put RDMA traffic in a class of its own, which switches map to a lossless (PFC) priority; a QP sets it through the traffic_class of its address.',
    see: [{ text: 'A RoCE v2 packet', link: '/wire#roce-v2-packet' }],
  },
  {
    id: 'ecn', term: 'ECN', expansion: 'Explicit Congestion Notification', forms: ['ECN'],
    definition: 'The two lowest bits of the IP header\'s traffic-class byte, which a congested switch sets instead of dropping the packet. A RoCE receiver that sees them answers with a CNP, and the sender slows down (DCQCN).',
    see: [{ text: 'RoCE v2', link: '/why-rdma#roce-v2' }],
  },
  {
    id: 'efa', term: 'EFA', expansion: 'Elastic Fabric Adapter', forms: ['EFA'],
    definition: 'AWS\'s network interface for HPC and machine-learning instances. Its transport is SRD, and programs reach it through libfabric\'s efa provider, or through verbs with the efadv extensions.',
    see: [{ text: 'AWS EFA and libfabric', link: '/efa' }],
  },
  {
    id: 'fence', term: 'fence', forms: ['fence'],
    definition: 'In verbs, a flag on a send work request (IBV_SEND_FENCE): the WR does not start until every earlier RDMA READ and atomic on the same QP has completed, so it may send what they fetched. A CPU or GPU memory fence, such as __threadfence_system, is another thing: it orders one thread\'s loads and stores.',
    see: [{ text: 'Fences', link: '/read-and-atomics#fence' }],
  },
  {
    id: 'gid', term: 'GID', expansion: 'global identifier', forms: ['GID', 'GIDs'],
    definition: 'A 128-bit port address shaped like an IPv6 address, kept in each port\'s GID table. On RoCE the kernel fills the table from the network interface\'s IP addresses (an IPv4 address as ::ffff:a.b.c.d), so a GID is an IP address, and the GID index chosen decides the source address and the RoCE version.',
    see: [{ text: 'GIDs and the GID table', link: '/getting-started#gids' }],
  },
  {
    id: 'gpudirect-rdma', term: 'GPUDirect RDMA', forms: ['GPUDirect RDMA', 'GPUDirect'],
    definition: 'NVIDIA\'s name for a NIC reading and writing GPU memory directly over PCIe, with no copy through host memory. The registration reaches GPU memory through dma-buf or through the older peer-memory module.',
    see: [{ text: 'Three paths', link: '/gpudirect#paths' }],
  },
  {
    id: 'grh', term: 'GRH', expansion: 'global route header', forms: ['GRH', 'GRHs'],
    definition: 'The 40-byte header, laid out like an IPv6 header, that carries the source and destination GIDs of an InfiniBand packet routed between subnets; on RoCE v2 the IP header takes its place. Every UD receive buffer starts with 40 bytes where the device puts the GRH, or on RoCE v2 the packet\'s IP header.',
    see: [{ text: 'Transports', link: '/queue-pairs#transports' }],
  },
  {
    id: 'hca', term: 'HCA', expansion: 'host channel adapter', forms: ['HCA', 'HCAs', 'RNIC', 'RNICs'],
    definition: 'InfiniBand\'s name for an RDMA network card. An RNIC (RDMA NIC) is the same on Ethernet, for RoCE or iWARP.',
    see: [{ text: 'The fabrics', link: '/why-rdma#fabrics' }],
  },
  {
    id: 'icrc', term: 'ICRC', expansion: 'invariant CRC', forms: ['ICRC'],
    definition: 'A 4-byte CRC32 at the end of every InfiniBand and RoCE packet, computed over the fields that do not change on the way; the receiving device drops a packet whose ICRC is wrong.',
    see: [{ text: 'A RoCE v2 packet', link: '/wire#roce-v2-packet' }],
  },
  {
    id: 'immdt', term: 'ImmDt', expansion: 'immediate data extended transport header', forms: ['ImmDt'],
    definition: 'The 4 bytes of immediate data that a SEND or RDMA WRITE WITH IMMEDIATE carries in its last (or only) packet; the receiver finds them in its work completion.',
    see: [{ text: 'A RoCE v2 packet', link: '/wire#roce-v2-packet' }],
  },
  {
    id: 'infiniband', term: 'InfiniBand', forms: ['InfiniBand'],
    definition: 'The network built for RDMA: its own links, switches and addressing (LIDs assigned by a subnet manager), with the transport done by the host channel adapters. Its transport is also what RoCE carries over Ethernet.',
    see: [{ text: 'InfiniBand', link: '/why-rdma#infiniband' }],
  },
  {
    id: 'inline', term: 'inline data', forms: ['inline data', 'inline SEND', 'inline SENDs', 'inline sends'],
    definition: 'A small payload copied into the work queue element itself when it is posted (IBV_SEND_INLINE), so the device need not fetch it by DMA and the buffer needs no registration; at most the QP\'s max_inline_data bytes.',
    see: [{ text: 'Inline data', link: '/performance#inline' }],
  },
  {
    id: 'iwarp', term: 'iWARP', forms: ['iWARP'],
    definition: 'RDMA carried over TCP/IP, with the TCP connection run by the NIC; programs use the same verbs. Linux\'s software version is siw.',
    see: [{ text: 'iWARP', link: '/why-rdma#iwarp' }],
  },
  {
    id: 'libfabric', term: 'libfabric', expansion: 'OpenFabrics Interfaces (OFI)', forms: ['libfabric'],
    definition: 'A library with one interface (fi_getinfo, endpoints, address vectors, fi_send, fi_write, fi_read) over many providers, such as efa, verbs, tcp and shm; MPI and NCCL reach AWS EFA through it.',
    see: [{ text: 'libfabric in five objects', link: '/efa#libfabric' }],
  },
  {
    id: 'lid', term: 'LID', expansion: 'local identifier', forms: ['LID', 'LIDs'],
    definition: 'The 16-bit address that the subnet manager assigns to each InfiniBand port, used to route packets inside one subnet. RoCE ports have no LID: they are addressed by GID.',
    see: [{ text: 'GIDs and the GID table', link: '/getting-started#gids' }],
  },
  {
    id: 'lkey', term: 'lkey', expansion: 'local key', forms: ['lkey', 'lkeys'],
    definition: 'The key a memory region gives for its owner\'s own work requests: every scatter/gather entry names its buffer by address, length and lkey, and the device checks that the range lies inside that region.',
    see: [{ text: 'lkey and rkey', link: '/memory-registration#keys' }],
  },
  {
    id: 'mr', term: 'MR', expansion: 'memory region', forms: ['MR', 'MRs', 'memory region', 'memory regions'],
    definition: 'A range of virtual memory registered with ibv_reg_mr: its pages are pinned and their translation is given to the device, and its lkey, rkey and access flags decide who may use it and how.',
    see: [{ text: 'Memory registration', link: '/memory-registration#what-it-does' }],
  },
  {
    id: 'msn', term: 'MSN', expansion: 'message sequence number', forms: ['MSN'],
    definition: 'A 24-bit count of completed messages that an RC responder returns in the AETH of its acknowledgements, so that the requester knows which messages have been received whole.',
    see: [{ text: 'A RoCE v2 packet', link: '/wire#roce-v2-packet' }],
  },
  {
    id: 'mtu', term: 'MTU', expansion: 'path maximum transmission unit', forms: ['path MTU', 'MTU', 'MTUs'],
    definition: 'The largest payload one RDMA packet carries on a connection: 256, 512, 1024, 2048 or 4096 bytes, set per QP (path_mtu, at RTR) and at most the smaller of the two ports\' active MTUs (the active MTU is the port\'s own, from ibv_query_port). Longer messages are cut into packets of this size; on RoCE it must fit, with the headers, in the Ethernet MTU, so a 1500-byte Ethernet MTU allows 1024.',
    see: [{ text: 'INIT to RTR', link: '/queue-pairs#init-to-rtr' }],
  },
  {
    id: 'mw', term: 'MW', expansion: 'memory window', forms: ['MW', 'MWs', 'memory window', 'memory windows'],
    definition: 'A window onto part of a memory region with an rkey and access rights of its own, bound and invalidated by work requests (or ibv_bind_mw); it grants and revokes remote access without registering memory again.',
    see: [{ text: 'Memory window', link: '/verbs-objects#mw' }],
  },
  {
    id: 'nak', term: 'NAK', expansion: 'negative acknowledgement', forms: ['NAK', 'NAKs', 'NAKed'],
    definition: 'An RC responder\'s refusal of a packet, with its reason in the AETH: a PSN sequence error (a packet was missed, and the requester resends from the PSN expected), receiver not ready (an RNR NAK), or an error such as a remote access error.',
    see: [{ text: 'Loss: RC resends, UD loses', link: '/loss#loss-and-retransmission' }],
  },
  {
    id: 'nccl', term: 'NCCL', expansion: 'NVIDIA Collective Communications Library', forms: ['NCCL'],
    definition: 'The library that runs collective operations (all-reduce, all-gather and others) between GPUs. Between hosts it moves the data with RDMA, through verbs or, on AWS EFA, libfabric.',
    see: [{ text: 'NCCL on EFA', link: '/efa#nccl' }],
  },
  {
    id: 'odp', term: 'ODP', expansion: 'on-demand paging', forms: ['ODP', 'on-demand paging'],
    definition: 'Registration without pinning: in a memory region registered with IBV_ACCESS_ON_DEMAND the device faults pages in when it touches them, and the kernel invalidates the device\'s translation when it moves or frees a page. Support is reported in odp_caps; Soft-RoCE in the kernels the lab tried has none.',
    see: [{ text: 'On-demand paging', link: '/memory-windows#odp' }],
  },
  {
    id: 'p-key', term: 'P_Key', expansion: 'partition key', forms: ['P_Key', 'P_Keys'],
    definition: 'A 16-bit key in every packet\'s BTH that names the InfiniBand partition the sending QP belongs to; a port drops packets of partitions it is not a member of. A QP picks its P_Key by index into the port\'s table; RoCE uses the default partition.',
    see: [{ text: 'RESET to INIT', link: '/queue-pairs#reset-to-init' }],
  },
  {
    id: 'pd', term: 'PD', expansion: 'protection domain', forms: ['PD', 'PDs', 'protection domain', 'protection domains'],
    definition: 'The container that ties queue pairs, memory regions, memory windows and address handles together: a queue pair can use only memory registered in its own PD.',
    see: [{ text: 'Protection domain', link: '/verbs-objects#pd' }],
  },
  {
    id: 'pfc', term: 'PFC', expansion: 'Priority Flow Control (IEEE 802.1Qbb)', forms: ['PFC'],
    definition: 'Ethernet pause frames per priority: a switch or NIC whose buffer for one priority fills up tells its neighbour to stop sending that priority, which makes it lossless. RoCE, whose retransmission resends everything after a lost packet, runs best on such a lossless class.',
    see: [{ text: 'RoCE v2', link: '/why-rdma#roce-v2' }],
  },
  {
    id: 'psn', term: 'PSN', expansion: 'packet sequence number', forms: ['PSN', 'PSNs', 'packet sequence number', 'packet sequence numbers'],
    definition: 'A 24-bit number in every packet\'s BTH that a connected QP increases by one per packet; the receiver uses it to detect lost, repeated and out-of-order packets, and RC acknowledges and resends by PSN. Each side chooses its first PSN when the QP is brought up.',
    see: [{ text: 'INIT to RTR', link: '/queue-pairs#init-to-rtr' }],
  },
  {
    id: 'q-key', term: 'Q_Key', expansion: 'queue key', forms: ['Q_Key', 'Q_Keys'],
    definition: 'A 32-bit key of UD queue pairs: a datagram is delivered only if the Q_Key it carries matches the receiving QP\'s.',
    see: [{ text: 'RESET to INIT', link: '/queue-pairs#reset-to-init' }],
  },
  {
    id: 'qp', term: 'QP', expansion: 'queue pair', forms: ['QP', 'QPs', 'queue pair', 'queue pairs'],
    definition: 'The endpoint of RDMA communication: a send queue and a receive queue with a transport (RC, UC or UD) and a state machine. A program posts work requests to it and learns of their end from its completion queues.',
    see: [{ text: 'Queue pair', link: '/verbs-objects#qp' }],
  },
  {
    id: 'qpn', term: 'QPN', expansion: 'queue pair number', forms: ['QPN', 'QPNs', 'QP number', 'QP numbers'],
    definition: 'The 24-bit number that identifies a queue pair on its device; packets name their destination QP by it in the BTH. A connected QP is given its peer\'s QPN when it moves to RTR, and a UD SEND names it in every work request.',
    see: [{ text: 'What the peers exchange', link: '/queue-pairs#exchange' }],
  },
  {
    id: 'rc', term: 'RC', expansion: 'Reliable Connected', forms: ['RC', 'Reliable Connected'],
    definition: 'The transport that connects exactly two queue pairs and delivers every message once and in order, acknowledged, with lost packets resent by the device. It supports SEND, RDMA WRITE, RDMA READ and atomics.',
    see: [{ text: 'Transports', link: '/queue-pairs#transports' }],
  },
  {
    id: 'rdma-read', term: 'RDMA READ', forms: ['RDMA READ', 'RDMA READs', 'READ', 'READs'],
    definition: 'A one-sided operation that fetches bytes from a peer\'s registered memory, named by address and rkey, into a local buffer; the peer\'s device answers alone. A QP may have only a few READs and atomics outstanding (max_rd_atomic).',
    see: [{ text: 'RDMA READ', link: '/read-and-atomics#read' }],
  },
  {
    id: 'rdma-write', term: 'RDMA WRITE', forms: ['RDMA WRITE', 'RDMA WRITEs', 'WRITE', 'WRITEs'],
    definition: 'A one-sided operation that copies a local buffer into a peer\'s registered memory at an address and rkey the peer has shared; the target\'s CPU takes no part and gets no completion.',
    see: [{ text: 'RDMA WRITE', link: '/operations#write' }],
  },
  {
    id: 'rdma-cm', term: 'rdma_cm', expansion: 'RDMA connection manager (librdmacm)', forms: ['rdma_cm', 'librdmacm'],
    definition: 'The library that turns an IP address into a device, port and GID, exchanges the connection messages and moves the queue pairs through their states, much as connect and accept do for sockets.',
    see: [{ text: 'rdma_cm step by step', link: '/connecting#rdma-cm' }],
  },
  {
    id: 'reth', term: 'RETH', expansion: 'RDMA extended transport header', forms: ['RETH'],
    definition: 'The 16-byte header with the remote virtual address, rkey and length of an RDMA WRITE or READ. A WRITE carries it only in its first (or only) packet, a READ in its request.',
    see: [{ text: 'A RoCE v2 packet', link: '/wire#roce-v2-packet' }],
  },
  {
    id: 'rkey', term: 'rkey', expansion: 'remote key', forms: ['rkey', 'rkeys'],
    definition: 'The key a memory region or memory window gives for remote access: a peer\'s RDMA WRITE, RDMA READ or atomic names the target address and the rkey, and the target device checks the key, the range and the access rights before it touches memory.',
    see: [{ text: 'lkey and rkey', link: '/memory-registration#keys' }],
  },
  {
    id: 'rnr', term: 'RNR', expansion: 'receiver not ready', forms: ['RNR'],
    definition: 'What happens when a SEND (or a WRITE WITH IMMEDIATE) reaches an RC queue pair with no receive posted: the responder answers with an RNR NAK, and the requester tries again after the responder\'s min_rnr_timer, up to rnr_retry times, before failing with IBV_WC_RNR_RETRY_EXC_ERR.',
    see: [{ text: 'Receiver not ready', link: '/errors#rnr' }],
  },
  {
    id: 'roce-v2', term: 'RoCE v2', expansion: 'RDMA over Converged Ethernet, version 2', forms: ['RoCE v2', 'RoCE'],
    definition: 'The InfiniBand transport carried in UDP/IP packets (destination port 4791) over Ethernet, so that it can be routed; its GIDs are IP addresses. RoCE v1 put the same transport directly into Ethernet frames and cannot leave one network segment.',
    see: [{ text: 'RoCE v2', link: '/why-rdma#roce-v2' }],
  },
  {
    id: 'selective-signaling', term: 'selective signaling', forms: ['selective signaling', 'Selective signaling'],
    definition: 'Asking for a completion on only some send work requests (IBV_SEND_SIGNALED on every Nth, with sq_sig_all off). There are fewer completions to poll, but send-queue slots are freed only when a later signaled WR completes, so N must not exceed the send queue\'s depth.',
    see: [{ text: 'Selective signaling', link: '/signaling#selective-signaling' }],
  },
  {
    id: 'send', term: 'SEND', forms: ['SEND', 'SENDs'],
    definition: 'A two-sided operation: the message lands in the buffer of the next receive work request the peer has posted, and both sides get a completion.',
    see: [{ text: 'SEND and RECV', link: '/operations#send-recv' }],
  },
  {
    id: 'send-with-invalidate', term: 'SEND WITH INVALIDATE', forms: ['SEND WITH INVALIDATE'],
    definition: 'A SEND that also names an rkey which the receiving device invalidates when the message arrives, so a peer revokes remote access to a memory window in the same message that says it is done with it.',
    see: [{ text: 'SEND WITH INVALIDATE', link: '/memory-windows#send-invalidate' }],
  },
  {
    id: 'sge', term: 'SGE', expansion: 'scatter/gather entry', forms: ['SGE', 'SGEs', 'scatter/gather entry', 'scatter/gather entries'],
    definition: 'One buffer in a work request\'s list (struct ibv_sge: address, length, lkey). A send gathers its data from its SGEs in order; a receive scatters an arriving message across its SGEs.',
    see: [{ text: 'Scatter and gather', link: '/immediate-and-scatter-gather#scatter-gather' }],
  },
  {
    id: 'soft-roce', term: 'Soft-RoCE', expansion: 'rdma_rxe, rxe', forms: ['Soft-RoCE', 'rxe', 'rdma_rxe'],
    definition: 'The Linux kernel\'s RoCE v2 device in software (module rdma_rxe, devices such as rxe0), attached to an ordinary network interface. It keeps the verbs\' rules and speaks the real wire protocol, so programs run on it unchanged, but without kernel bypass and at software speed; the lab uses it.',
    see: [{ text: 'What the lab is', link: '/getting-started#soft-roce' }, { text: 'What Soft-RoCE does differently', link: '/soft-roce' }],
  },
  {
    id: 'srd', term: 'SRD', expansion: 'Scalable Reliable Datagram', forms: ['SRD'],
    definition: 'The transport of AWS EFA: delivery is reliable but not in order and needs no connection, and one flow\'s packets are spread over many network paths. Software above it restores order where it is needed.',
    see: [{ text: 'SRD', link: '/efa#srd' }],
  },
  {
    id: 'srq', term: 'SRQ', expansion: 'shared receive queue', forms: ['SRQ', 'SRQs', 'shared receive queue', 'shared receive queues'],
    definition: 'One receive queue that several queue pairs take their receives from, so a server with many connections posts receive buffers once instead of per connection; it raises an event when its fill drops below a limit the program set.',
    see: [{ text: 'Shared receive queue', link: '/verbs-objects#srq' }],
  },
  {
    id: 'uc', term: 'UC', expansion: 'Unreliable Connected', forms: ['UC', 'Unreliable Connected'],
    definition: 'A connected transport without acknowledgements or resends: a lost packet loses its whole message silently, and a send completion means sent, not delivered. It supports SEND and RDMA WRITE, but not RDMA READ or atomics.',
    see: [{ text: 'Transports', link: '/queue-pairs#transports' }],
  },
  {
    id: 'ud', term: 'UD', expansion: 'Unreliable Datagram', forms: ['UD', 'Unreliable Datagram'],
    definition: 'A transport without connections: each SEND names its destination (an address handle, a QPN and a Q_Key), a message must fit in one packet, and delivery is not guaranteed. Only SENDs exist, to one QP or to a multicast group.',
    see: [{ text: 'Transports', link: '/queue-pairs#transports' }],
  },
  {
    id: 'verbs', term: 'verbs', forms: ['verbs', 'libibverbs'],
    definition: 'The RDMA programming interface, named after the operations (verbs) of the InfiniBand specification. On Linux it is libibverbs from rdma-core, with calls such as ibv_reg_mr, ibv_post_send and ibv_poll_cq, and a provider library for each kind of device.',
    see: [{ text: 'The software stack', link: '/why-rdma#software-stack' }],
  },
  {
    id: 'wc', term: 'WC', expansion: 'work completion', forms: ['WC', 'WCs', 'work completion', 'work completions'],
    definition: 'The record (struct ibv_wc) that ibv_poll_cq returns for a finished work request: its wr_id, status, opcode and byte count and, for receives, details such as the immediate data and the source QP.',
    see: [{ text: 'What a work completion says', link: '/completions#work-completion' }],
  },
  {
    id: 'wqe', term: 'WQE', expansion: 'work queue element', forms: ['WQE', 'WQEs', 'work queue element', 'work queue elements'],
    definition: 'One entry in a send or receive queue as the device sees it: for every work request posted, the provider library writes a WQE into the queue\'s memory, and the device reads it to carry out the transfer.',
    see: [{ text: 'The optimizations', link: '/performance#optimizations' }],
  },
  {
    id: 'wr', term: 'WR', expansion: 'work request', forms: ['WR', 'WRs', 'work request', 'work requests'],
    definition: 'What a program posts to ask for a transfer: ibv_post_send takes send WRs (SEND, RDMA WRITE, RDMA READ, atomics) and ibv_post_recv receive WRs. Each names its buffers in scatter/gather entries and carries a wr_id that comes back in its completion.',
    see: [{ text: 'SEND, WRITE and READ', link: '/operations' }],
  },
  {
    id: 'write-with-immediate', term: 'WRITE WITH IMMEDIATE', forms: ['RDMA WRITE WITH IMMEDIATE', 'WRITE WITH IMMEDIATE', 'SEND WITH IMMEDIATE'],
    definition: 'An RDMA WRITE that also carries 32 bits of immediate data and consumes a receive at the target, which therefore gets a completion with the immediate value. SEND WITH IMMEDIATE is a SEND carrying the same 32 bits.',
    see: [{ text: 'RDMA WRITE WITH IMMEDIATE', link: '/immediate-and-scatter-gather#write-imm' }],
  },
];
