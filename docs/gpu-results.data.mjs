// Build-time data for the GPUDirect chapter: every gpu-memory-bench record in gpu/results
// (written by gpu/measure.sh on a machine with a GPU), newest first.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const folder = fileURLToPath(new URL('../gpu/results', import.meta.url));

export default {
  watchFiles: ['../gpu/results/*.json'],
  load() {
    return fs
      .readdirSync(folder)
      .filter((name) => name.endsWith('.json'))
      .sort()
      .reverse()
      .map((name) => {
        const record = JSON.parse(fs.readFileSync(path.join(folder, name), 'utf8'));
        const device = record.environment.device ?? {};
        return {
          file: `gpu/results/${name}`,
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
