// Build-time data for the GPUDirect chapter: the newest gpu-memory-bench record of each card in
// gpu/results (written by gpu/measure.sh on a machine with a GPU), newest first, each with the
// names of that card's earlier records (gpu/results/README.md compares them).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const folder = fileURLToPath(new URL('../gpu/results', import.meta.url));

// The card a record measured: its device name where the backend gave one (host memory has none).
const cardOf = (record) => record.environment.device?.device_name ?? record.memory.description;

export default {
  watchFiles: ['../gpu/results/*.json'],
  load() {
    const runs = fs
      .readdirSync(folder)
      .filter((name) => name.endsWith('.json'))
      .sort()
      .reverse()
      .map((name) => ({ name, record: JSON.parse(fs.readFileSync(path.join(folder, name), 'utf8')) }));
    const newestOfEachCard = runs.filter(
      (run, index) => runs.findIndex((other) => cardOf(other.record) === cardOf(run.record)) === index,
    );
    return newestOfEachCard.map(({ name, record }) => {
      const device = record.environment.device ?? {};
      return {
        file: `gpu/results/${name}`,
        earlier: runs
          .filter((other) => other.name < name && cardOf(other.record) === cardOf(record))
          .map((other) => `gpu/results/${other.name}`),
        description: record.memory.description,
        date: record.environment.date,
        kernel: record.environment.kernel,
        driver: device.cuda_driver ?? device.hip_runtime ?? '',
        link: `${(device.pcie_current_link_speed ?? '?').replace(/ PCIe$/, '')} x${device.pcie_current_link_width ?? '?'}`,
        reps: record.config.reps,
        ceiling: record.copies.ceiling,
        pinned: record.copies.pinned,
        pageable: record.copies.pageable,
        dmabuf: record.dmabuf_export,
        kernels: record.kernels,
        firstContextUs: record.allocation.first_device_memory_us,
      };
    });
  },
};
