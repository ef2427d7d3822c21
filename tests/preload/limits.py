# SPDX-License-Identifier: BSD-3-Clause
# IP PORT, run with MYRIO_MAX_UDP=2 and MYRIO_MAX_TCP=2: a third UDP socket's bind and a
# third blocking connect (to a listener at IP PORT) must fail with ENOBUFS, not work
# and not say EAGAIN (docs/preload.md, "Limits").
import errno, socket, sys

ip, port = sys.argv[1], int(sys.argv[2])
fails = 0


def third_fails(what, make):
    global fails
    held = []
    for i in range(3):
        try:
            held.append(make())
        except OSError as e:
            ok = i == 2 and e.errno == errno.ENOBUFS
            print(what, i + 1, errno.errorcode.get(e.errno, str(e)), 'ok' if ok else 'WRONG')
            fails += not ok
            break
    else:
        print(what, '3 worked: WRONG')
        fails += 1
    for s in held:
        s.close()


def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('0.0.0.0', 0))
    return s


third_fails('udp', udp)
def tcp():
    s = socket.socket()  # blocking: create_connection's timeout would make it non-blocking
    s.connect((ip, port))
    return s


third_fails('tcp', tcp)
sys.exit(1 if fails else 0)
