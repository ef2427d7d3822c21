# SPDX-License-Identifier: BSD-3-Clause
# server IP PORT N: listens with backlog 1, accepts N connections slowly (10 ms apart),
#   echoing on each in a thread, as socketserver.ThreadingTCPServer does.
# client IP PORT N: opens N connections, then sends on each and expects its echo; exits 0
#   only when every one did (a reset or refusal is counted and fails it).
import errno, socket, sys, threading, time
from collections import Counter

ip, port, n = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if sys.argv[1] == 'server':
    L = socket.socket()
    L.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    L.bind((ip, port))
    L.listen(1)
    print('listening', flush=True)

    def echo(c):
        try:
            while (d := c.recv(100)):
                c.sendall(d)
        except OSError as e:
            print('server:', errno.errorcode.get(e.errno, str(e)), flush=True)
        c.close()

    threads = []
    for _ in range(n):
        c, _ = L.accept()
        t = threading.Thread(target=echo, args=(c,))
        t.start()
        threads.append(t)
        time.sleep(0.01)
    for t in threads:
        t.join()
    print('server: accepted', n, flush=True)
else:
    out, socks = {}, []
    for i in range(n):
        try:
            socks.append((i, socket.create_connection((ip, port), 120)))
        except OSError as e:
            out[i] = 'connect ' + errno.errorcode.get(e.errno, str(e))
    for i, s in socks:
        try:
            s.settimeout(120)
            s.sendall(b'%d' % i)
            out[i] = 'ok' if s.recv(100) == b'%d' % i else 'bad echo'
        except OSError as e:
            out[i] = errno.errorcode.get(e.errno, str(e)) if e.errno else str(e)
        s.close()
    print('client:', dict(Counter(out.values())), flush=True)
    sys.exit(0 if all(v == 'ok' for v in out.values()) else 1)
