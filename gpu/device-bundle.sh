#!/usr/bin/env bash
# Packs GPU programs built here, with the shared libraries they need beyond glibc, into one folder
# that runs on a GPU machine where rdma-core, fmt and friends are not installed (a lent H100, a
# cluster node): build-device/run PROGRAM ARGS... runs it with the folder's libraries first.
#   gpu/device-bundle.sh [PROGRAM...]      default: gpu-memory-bench gpu-write gpu-read proxy rdma-bench gpu_unit_tests
# It configures build-device with the CUDA backend only (a HIP backend would need ROCm's libraries
# on an NVIDIA machine) and never installs anything.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$repo/build-device   # what travels: bin/, lib/, run
build=$repo/build-cuda   # the CUDA-only build it is made from
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(gpu-memory-bench gpu-write gpu-read proxy rdma-bench gpu_unit_tests)
for tool in cmake ninja ldd strip; do
    command -v "$tool" >/dev/null || { echo "device-bundle: $tool is missing (./rdmalab deps installs the build tools)" >&2; exit 1; }
done

cmake -S "$repo" -B "$build" -G Ninja -DRDMALAB_GPU=cuda -DBUILD_TESTING=ON >/dev/null
ninja -C "$build" "${programs[@]}"
rm -rf "$out/bin" "$out/lib"
mkdir -p "$out/bin" "$out/lib"
for program in "${programs[@]}"; do
    strip -o "$out/bin/$program" "$build/bin/$program"  # no debug info: what travels stays small
    # Every library ldd resolves, except the C library's own (the GPU machine's glibc is used,
    # and must be at least as new as this one's: Debian 12 has 2.36).
    ldd "$build/bin/$program" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r library; do
        case $(basename "$library") in
            libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) ;;
            *) cp -L "$library" "$out/lib/" ;;
        esac
    done
done
# Soft-RoCE for a GPU machine that has no RDMA NIC but whose kernel builds rdma_rxe
# (gpu/rxe-on-gpu.sh): the rxe provider libibverbs loads, and iproute2's rdma tool that adds the
# link, with the libraries it needs.
rxe_provider=$(dirname "$(ldconfig -p | awk '$1 == "libibverbs.so.1" {print $NF; exit}')")/libibverbs/librxe-rdmav34.so
if [ -f "$rxe_provider" ] && command -v rdma >/dev/null; then
    cp -L "$rxe_provider" "$out/lib/"
    cp -L "$(command -v rdma)" "$out/bin/rdma"
    ldd "$(command -v rdma)" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r library; do
        case $(basename "$library") in
            libc.so.*|ld-linux*) ;;
            *) cp -L "$library" "$out/lib/" ;;
        esac
    done
fi
cat >"$out/run" <<'EOF'
#!/usr/bin/env bash
# build-device/run PROGRAM ARGS...: a bundled program with the bundled libraries (see gpu/device-bundle.sh).
here=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] && [ -x "$here/bin/$1" ] || { echo "run: name one of: $(ls "$here/bin" | tr '\n' ' ')" >&2; exit 2; }
program=$1
shift
# libibverbs finds no provider config there: name the bundled rxe provider (a path without its
# "-rdmav34.so" ending) unless the caller named drivers.
[ -f "$here/lib/librxe-rdmav34.so" ] && export RDMAV_DRIVERS=${RDMAV_DRIVERS:-$here/lib/librxe}
LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec "$here/bin/$program" "$@"
EOF
chmod +x "$out/run"
echo "device-bundle: $(du -sh "$out/bin" "$out/lib" | awk '{print $1}' | paste -sd+ -) in $out (bin/, lib/, run)"
