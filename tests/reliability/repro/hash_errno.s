# hash map (16 entries): update EXIST on a missing key, insert, NOEXIST on it, delete twice,
# then fill past max_entries; every return code is packed into r0 (16 bits each)
stdw [%r10-8], 7
stw [%r10-12], 5
lddw %r1, map[1]
mov %r2, %r10
add %r2, -12
mov %r3, %r10
add %r3, -8
mov %r4, 2
call 2
and %r0, 0xff
mov %r6, %r0
lddw %r1, map[1]
mov %r2, %r10
add %r2, -12
mov %r3, %r10
add %r3, -8
mov %r4, 0
call 2
and %r0, 0xff
lsh %r6, 8
or %r6, %r0
lddw %r1, map[1]
mov %r2, %r10
add %r2, -12
mov %r3, %r10
add %r3, -8
mov %r4, 1
call 2
and %r0, 0xff
lsh %r6, 8
or %r6, %r0
lddw %r1, map[1]
mov %r2, %r10
add %r2, -12
call 3
and %r0, 0xff
lsh %r6, 8
or %r6, %r0
lddw %r1, map[1]
mov %r2, %r10
add %r2, -12
call 3
and %r0, 0xff
lsh %r6, 8
or %r6, %r0
mov %r7, 0
mov %r8, 0
fill:
stxw [%r10-12], %r7
lddw %r1, map[1]
mov %r2, %r10
add %r2, -12
mov %r3, %r10
add %r3, -8
mov %r4, 0
call 2
or %r8, %r0
add %r7, 1
jlt %r7, 20, fill
and %r8, 0xff
lsh %r6, 8
or %r6, %r8
mov %r0, %r6
exit
