# Narrow (1, 2, 4-byte) spills of scalars: the same fill restores the value
# (loop counters and map keys kept as __u32 on the stack); any other access
# gets data of unknown value.

=== a u32 counter on the stack bounds an index into a value
kind: gpu/entry
map: vals array 4 64 1
expect: accept
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
stw [%r10-8], 0
loop:
ldxw %r1, [%r10-8]
lsh %r1, 3
mov %r2, %r0
add %r2, %r1
stdw [%r2+0], 1
ldxw %r1, [%r10-8]
add %r1, 1
stxw [%r10-8], %r1
jlt %r1, 8, loop
out:
mov %r0, 0
exit

=== a u32 counter on the stack that reaches one past the value
kind: gpu/entry
map: vals array 4 64 1
expect: reject invalid access to map_value: off=64
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
stw [%r10-8], 0
loop:
ldxw %r1, [%r10-8]
lsh %r1, 3
mov %r2, %r0
add %r2, %r1
stdw [%r2+0], 1
ldxw %r1, [%r10-8]
add %r1, 1
stxw [%r10-8], %r1
jle %r1, 8, loop
out:
mov %r0, 0
exit

=== a u16 and a u8 spill (in two slots) come back
expect: accept
mov %r1, 300
stxh [%r10-2], %r1
mov %r1, 7
stxb [%r10-11], %r1
ldxh %r0, [%r10-2]
ldxb %r2, [%r10-11]
add %r0, %r2
jeq %r0, 307, ok
ldxdw %r0, [%r10+8]
ok:
exit

=== a narrower fill of a u32 spill is data of unknown value
kind: gpu/entry
map: vals array 4 16 1
expect: reject invalid access to map_value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
stw [%r10-8], 4
ldxh %r1, [%r10-8]
add %r0, %r1
ldxdw %r0, [%r0+0]
out:
mov %r0, 0
exit

=== a sign-extending fill is not restored
kind: gpu/entry
map: vals array 4 16 1
expect: reject math between map_value pointer and register with unbounded
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
stw [%r10-8], 4
ldxsw %r1, [%r10-8]
add %r0, %r1
ldxdw %r0, [%r0+0]
out:
mov %r0, 0
exit

=== a byte written over a u32 spill makes it unknown
kind: gpu/entry
map: vals array 4 16 1
expect: reject math between map_value pointer and register with unbounded
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
stw [%r10-8], 4
stb [%r10-7], 0
ldxw %r1, [%r10-8]
add %r0, %r1
ldxdw %r0, [%r0+0]
out:
mov %r0, 0
exit

=== a value wider than the store is not a narrow spill
kind: gpu/entry
map: vals array 4 16 1
expect: reject math between map_value pointer and register with unbounded
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
lddw %r1, 0x100000004
stxw [%r10-8], %r1
ldxw %r1, [%r10-8]
add %r0, %r1
ldxdw %r0, [%r0+0]
out:
mov %r0, 0
exit

=== a helper writing over a u32 spill makes it unknown
kind: gpu/entry
map: vals array 4 16 1
expect: reject math between map_value pointer and register with unbounded
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r6, %r0
stw [%r10-8], 0
mov %r1, %r10
add %r1, -8
mov %r2, %r10
add %r2, -16
mov %r3, %r10
add %r3, -24
call 505
ldxw %r1, [%r10-8]
add %r6, %r1
ldxdw %r0, [%r6+0]
out:
mov %r0, 0
exit
