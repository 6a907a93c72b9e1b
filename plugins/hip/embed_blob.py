#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Write a binary file as a C array: embed_blob.py INPUT OUTPUT SYMBOL
import sys

data = open(sys.argv[1], 'rb').read()
sym = sys.argv[3]
with open(sys.argv[2], 'w') as out:
    out.write('/* generated from %s by embed_blob.py */\n#include <stddef.h>\n' % sys.argv[1].split('/')[-1])
    out.write('extern const unsigned char %s[];\nextern const size_t %s_len;\n' % (sym, sym))
    out.write('const unsigned char %s[] __attribute__((aligned(8))) = {\n' % sym)
    for i in range(0, len(data), 16):
        out.write(''.join('0x%02x,' % b for b in data[i:i + 16]) + '\n')
    if not data:
        out.write('0\n')
    out.write('};\nconst size_t %s_len = %d;\n' % (sym, len(data)))
