# The memory buffer of `prog run` programs (kind none).
=== read inside the buffer
mem: 8
expect: accept
ldxdw %r0, [%r1+0]
exit

=== read past the buffer
mem: 8
expect: reject @0 invalid access to mem
ldxdw %r0, [%r1+4]
exit

=== write inside the buffer
mem: 16
expect: accept
stdw [%r1+8], 5
ldxdw %r0, [%r1+8]
exit

=== r2 holds the buffer length
mem: 12
expect: accept
mov %r0, %r2
exit

=== index bounded by the length
mem: 64
expect: accept
ldxb %r3, [%r1+0]
jge %r3, %r2, out
add %r1, %r3
ldxb %r0, [%r1+0]
exit
out:
mov %r0, 0
exit

=== index not bounded
mem: 64
expect: reject @2 invalid access to mem
ldxb %r3, [%r1+0]
add %r1, %r3
ldxb %r0, [%r1+0]
exit

=== negative offset before the buffer
mem: 8
expect: reject @0 invalid access to mem
ldxb %r0, [%r1-1]
exit

=== pointer stored into the buffer
mem: 16
expect: reject @0 cannot store a pointer
stxdw [%r1+0], %r10
mov %r0, 0
exit

=== atomic add in the buffer
mem: 8
expect: accept
mov %r2, 1
lock add [%r1+0], %r2
mov %r0, 0
exit

=== misaligned atomic in the buffer, even on the host
mem: 16
expect: reject @1 misaligned atomic operation on mem
mov %r2, 1
lock add [%r1+4], %r2
mov %r0, 0
exit
