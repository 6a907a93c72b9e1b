# cuda (H200): array update with BPF_NOEXIST and a key >= max_entries returns -EEXIST (-17);
# the interpreter (and Linux) return -E2BIG (-7): the range check comes first.
lddw %r6, 0xc
lddw %r7, 0x3feb54fbb1
mov %r8, -1
lddw %r9, 0x5116c6bd7
stdw [%r10-72], 0
stdw [%r10-80], 0
mov %r1, 12
stxw [%r10-72], %r1
stxdw [%r10-80], %r7
lddw %r1, map[0]
mov %r2, %r10
add %r2, -72
mov %r3, %r10
add %r3, -80
mov %r4, 1
call 2

exit
