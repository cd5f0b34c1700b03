// rdma-doctor's GPU rules: whether the NIC can register GPU memory (GPUDirect RDMA through
// nvidia_peermem or dma-buf), and how far each GPU sits from its nearest RDMA NIC on the PCI bus.
// No I/O here: tests/unit/doctor_test.cpp gives them made-up hosts (the lab has no GPU).
#include "doctor.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace rdmalab::doctor {
namespace {

// "6.1.0-56-amd64" >= 5.12 ; "550.54.15" >= 515
bool version_at_least(const std::string& text, int major, int minor) {
    int a = 0, b = 0;
    if (std::sscanf(text.c_str(), "%d.%d", &a, &b) < 1) return false;
    return a > major || (a == major && b >= minor);
}

void check_registration(const HostFacts& host, Diagnosis& out) {
    const bool nvidia = std::any_of(host.gpus.begin(), host.gpus.end(),
                                    [](const GpuFact& g) { return g.vendor == "NVIDIA"; });
    const bool amd = std::any_of(host.gpus.begin(), host.gpus.end(),
                                 [](const GpuFact& g) { return g.vendor == "AMD"; });
    const bool kernel_dmabuf = version_at_least(host.kernel_release, 5, 12);
    const bool peermem =
        std::find(host.modules.begin(), host.modules.end(), "nvidia_peermem") != host.modules.end();
    if (nvidia && host.nvidia_driver.empty()) {
        out.findings.push_back({"gpudirect", Severity::kProblem,
                                "an NVIDIA GPU is on the bus but the nvidia driver is not loaded",
                                "no CUDA program runs, and no GPU memory can be registered",
                                "sudo modprobe nvidia (install the driver if it is missing)"});
    } else if (nvidia && peermem) {
        out.healthy.push_back({"gpudirect", fmt::format("nvidia_peermem is loaded (driver {}): "
                                                        "ibv_reg_mr accepts cudaMalloc memory",
                                                        host.nvidia_driver)});
    } else if (nvidia && kernel_dmabuf && version_at_least(host.nvidia_driver, 515, 0)) {
        out.healthy.push_back(
            {"gpudirect",
             fmt::format("no nvidia_peermem, but kernel {} and driver {} can register GPU memory "
                         "as a dma-buf (ibv_reg_dmabuf_mr; with NVIDIA's open kernel modules)",
                         host.kernel_release, host.nvidia_driver)});
    } else if (nvidia) {
        out.findings.push_back(
            {"gpudirect", Severity::kProblem,
             fmt::format("GPU memory cannot be registered with the NIC: nvidia_peermem is not "
                         "loaded, and kernel {} with driver {} has no dma-buf path (it needs "
                         "5.12 and 515 or later)",
                         host.kernel_release.empty() ? "?" : host.kernel_release,
                         host.nvidia_driver),
             "ibv_reg_mr on a cudaMalloc pointer fails (EFAULT) and ibv_reg_dmabuf_mr with "
             "EOPNOTSUPP; NCCL falls back to copying through host memory",
             "sudo modprobe nvidia_peermem (it ships with the driver), or a driver of 515 or "
             "later with the open kernel modules on a kernel of 5.12 or later (dma-buf)"});
    }
    if (amd && kernel_dmabuf)
        out.healthy.push_back(
            {"gpudirect", fmt::format("kernel {} can register AMD GPU memory as a dma-buf "
                                      "(ibv_reg_dmabuf_mr through amdgpu)",
                                      host.kernel_release)});
    else if (amd)
        out.findings.push_back(
            {"gpudirect", Severity::kProblem,
             fmt::format("kernel {} predates dma-buf registration (5.12)", host.kernel_release),
             "ibv_reg_dmabuf_mr fails with EOPNOTSUPP: AMD GPU memory cannot be registered",
             "a kernel of 5.12 or later (or AMD's peer-memory module from ROCm's DKMS driver)"});
}

void check_distance(const HostFacts& host, Diagnosis& out) {
    std::vector<const DeviceFact*> nics;
    std::string software;
    for (const DeviceFact& device : host.devices) {
        if (device.pci)
            nics.push_back(&device);
        else
            software += fmt::format("{}{}", software.empty() ? "" : ", ", device.name);
    }
    if (nics.empty()) {
        out.findings.push_back(
            {"gpu-distance", Severity::kWarning,
             fmt::format("{} GPU{} here, but no RDMA device on the PCI bus ({} {} software)",
                         host.gpus.size(), host.gpus.size() == 1 ? "" : "s", software,
                         software.find(',') == std::string::npos ? "is" : "are"),
             "GPUDirect RDMA needs a NIC that reaches GPU memory over PCIe: every transfer is "
             "staged through host memory, a copy each way",
             "for GPUDirect use a RoCE or InfiniBand NIC; the GPU lessons' host-staging path "
             "runs as is"});
        return;
    }
    for (const GpuFact& gpu : host.gpus) {
        const DeviceFact* nearest = nullptr;
        PcieRelation best = PcieRelation::kSys;
        for (const DeviceFact* nic : nics) {
            const PcieRelation relation = pcie_relation(gpu.place, *nic->pci);
            if (!nearest || relation < best) {
                nearest = nic;
                best = relation;
            }
        }
        const std::string text = fmt::format("GPU {} ↔ {}: {} ({})", gpu.address, nearest->name,
                                             pcie_relation_name(best), pcie_relation_text(best));
        if (best <= PcieRelation::kPhb) {
            out.healthy.push_back({"gpu-distance", text});
            continue;
        }
        out.findings.push_back(
            {"gpu-distance", Severity::kWarning,
             fmt::format("{}: the nearest RDMA NIC (GPU on NUMA node {}, NIC on {})", text,
                         gpu.place.numa_node, nearest->pci->numa_node),
             "GPUDirect RDMA that crosses host bridges or sockets is slow, and NCCL stops using "
             "it past NCCL_NET_GDR_LEVEL (by default beyond PHB): data is staged through host "
             "memory",
             fmt::format("give each GPU a NIC on its own PCIe switch or NUMA node (NCCL_IB_HCA "
                         "picks it per job); run near it: numactl -N {}",
                         gpu.place.numa_node < 0 ? 0 : gpu.place.numa_node)});
    }
}

}  // namespace

void check_gpus(const HostFacts& host, Diagnosis& out) {
    if (host.gpus.empty()) return;
    check_registration(host, out);
    check_distance(host, out);
}

}  // namespace rdmalab::doctor
