#!/usr/bin/env python3
"""Per-kernel digest of a cubin: sha256 of every .text.<kernel> section (the SASS encoding) and its .nv.info."""
import hashlib, struct, sys
def sections(path):
    d = open(path, 'rb').read()
    assert d[:4] == b'\x7fELF' and d[4] == 2
    shoff, = struct.unpack_from('<Q', d, 0x28); shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)
    hdrs = [struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize) for i in range(shnum)]
    stro = hdrs[shstrndx][4]
    for h in hdrs:
        name = d[stro + h[0]: d.index(b'\0', stro + h[0])].decode()
        yield name, (d[h[4]:h[4] + h[5]] if h[1] != 8 else b'')
for p in sys.argv[1:]:
    for name, body in sorted(sections(p)):
        if name.startswith(('.text.', '.nv.info.', '.nv.shared.', '.nv.constant0.')):
            print(hashlib.sha256(body).hexdigest()[:16], len(body), name)
