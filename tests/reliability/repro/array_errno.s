# array map: update NOEXIST on an existing key, update out of range, delete
stdw [%r10-8], 0
stw [%r10-12], 3
lddw %r1, map[0]
mov %r2, %r10
add %r2, -12
mov %r3, %r10
add %r3, -8
mov %r4, 1
call 2
mov %r6, %r0
stw [%r10-12], 20
lddw %r1, map[0]
mov %r2, %r10
add %r2, -12
mov %r3, %r10
add %r3, -8
mov %r4, 0
call 2
lsh %r6, 16
and %r0, 0xffff
or %r6, %r0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -12
call 3
lsh %r6, 16
and %r0, 0xffff
or %r6, %r0
mov %r0, %r6
exit
