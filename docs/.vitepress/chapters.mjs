// The site's chapters in reading order: used by config.mts for the sidebar and
// by docs/tests/browser.mjs to know which pages must render.
export const CHAPTERS = [
  { file: 'index.md', link: '/', text: 'Home', group: 'Introduction' },
  { file: 'why-rdma.md', link: '/why-rdma', text: 'Why RDMA', group: 'Introduction' },
  { file: 'getting-started.md', link: '/getting-started', text: 'Getting started: the lab', group: 'Introduction' },
  { file: 'verbs-objects.md', link: '/verbs-objects', text: 'The verbs objects', group: 'Verbs, step by step' },
  { file: 'memory-registration.md', link: '/memory-registration', text: 'Memory registration', group: 'Verbs, step by step' },
  { file: 'queue-pairs.md', link: '/queue-pairs', text: 'Queue pairs and their state machine', group: 'Verbs, step by step' },
  { file: 'connecting.md', link: '/connecting', text: 'Connecting: rdma_cm and manual bring-up', group: 'Verbs, step by step' },
  { file: 'operations.md', link: '/operations', text: 'Operations', group: 'Verbs, step by step' },
  { file: 'completions.md', link: '/completions', text: 'Completions', group: 'Verbs, step by step' },
  { file: 'errors.md', link: '/errors', text: 'Errors and recovery', group: 'Verbs, step by step' },
  { file: 'wire.md', link: '/wire', text: 'On the wire: packets and loss', group: 'Verbs, step by step' },
  { file: 'performance.md', link: '/performance', text: 'Performance and rdma-bench', group: 'The GPU era' },
  { file: 'gpudirect.md', link: '/gpudirect', text: 'GPUDirect RDMA', group: 'The GPU era' },
  { file: 'uccl.md', link: '/uccl', text: 'Case study: UCCL', group: 'The GPU era' },
  { file: 'efa.md', link: '/efa', text: 'AWS EFA and libfabric', group: 'The GPU era' },
  { file: 'reproduce.md', link: '/reproduce', text: 'Reproduce on your cluster', group: 'The GPU era' },
  { file: 'check-your-cluster.md', link: '/check-your-cluster', text: 'Check your cluster: rdma-mesh', group: 'The GPU era' },
  { file: 'reference.md', link: '/reference', text: 'Reference: attributes, WRs, completions, limits', group: 'Reference' },
  { file: 'results.md', link: '/results', text: 'Measured results', group: 'Reference' },
];
