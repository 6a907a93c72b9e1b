# Pruning that ignores scalars which decide nothing (verifier/precise.c):
# each reject case reaches a join first with a safe value (explored first,
# the fall-through) and then with an unsafe one, which must not be pruned;
# the value reaches the check by every route precise.c must follow (stack
# spills of 8 and 4 bytes, through r10 and through copies of it, branch
# conditions, pointer arithmetic, local calls, helper sizes, loop heads).

=== a counter spilled to the stack (8 bytes) that indexes a value after a join
kind: gpu/entry
map: vals array 4 16 1
expect: reject invalid access to map_value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r6, %r0
call 7
mov %r7, 0
jeq %r0, 0, big
ja join
big:
mov %r7, 64
join:
stxdw [%r10-16], %r7
mov %r7, 0
ldxdw %r3, [%r10-16]
add %r6, %r3
ldxdw %r0, [%r6+0]
out:
mov %r0, 0
exit

=== a counter spilled as 4 bytes that indexes a value after a join
kind: gpu/entry
map: vals array 4 16 1
expect: reject invalid access to map_value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r6, %r0
call 7
mov %r7, 0
jeq %r0, 0, big
ja join
big:
mov %r7, 64
join:
stxw [%r10-16], %r7
mov %r7, 0
ldxw %r3, [%r10-16]
add %r6, %r3
ldxdw %r0, [%r6+0]
out:
mov %r0, 0
exit

=== a counter stored through a copy of r10 and filled through r10
kind: gpu/entry
map: vals array 4 16 1
expect: reject invalid access to map_value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r6, %r0
call 7
mov %r7, 0
jeq %r0, 0, big
ja join
big:
mov %r7, 64
join:
mov %r8, %r10
stxdw [%r8-16], %r7
mov %r7, 0
ldxdw %r3, [%r10-16]
add %r6, %r3
ldxdw %r0, [%r6+0]
out:
mov %r0, 0
exit

=== a counter spilled through r10 and filled through a pointer copy
kind: gpu/entry
map: vals array 4 16 1
expect: reject invalid access to map_value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r6, %r0
call 7
mov %r7, 0
jeq %r0, 0, big
ja join
big:
mov %r7, 64
join:
stxdw [%r10-16], %r7
mov %r7, 0
mov %r8, %r10
add %r8, -16
ldxdw %r3, [%r8+0]
add %r6, %r3
ldxdw %r0, [%r6+0]
out:
mov %r0, 0
exit

=== a join value that decides a later branch into an unsafe access
kind: gpu/entry
map: vals array 4 16 1
expect: reject invalid access to map_value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r6, %r0
call 7
mov %r7, 0
jeq %r0, 0, big
ja join
big:
mov %r7, 64
join:
jne %r7, 64, out
ldxdw %r0, [%r6+64]
out:
mov %r0, 0
exit

=== a join value used as a pointer offset whose result is dead
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
call 7
mov %r7, 0
jeq %r0, 0, big
ja join
big:
lddw %r7, 0x40000000
join:
add %r6, %r7
mov %r0, 0
exit
out:
mov %r0, 0
exit

=== a join value that a pointer is added to
kind: gpu/entry
map: vals array 4 16 1
expect: reject pointer R7 offset out of range
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r6, %r0
call 7
mov %r7, 0
jeq %r0, 0, big
ja join
big:
lddw %r7, 0x40000000
join:
add %r7, %r6
mov %r0, 0
exit
out:
mov %r0, 0
exit

=== a join value passed to a local call that indexes with it
kind: gpu/entry
map: vals array 4 16 1
expect: reject invalid access to map_value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r6, %r0
call 7
mov %r7, 0
jeq %r0, 0, big
ja join
big:
mov %r7, 64
join:
mov %r1, %r7
mov %r2, %r6
call local f
mov %r0, 0
exit
out:
mov %r0, 0
exit
f:
add %r2, %r1
ldxdw %r0, [%r2+0]
exit

=== a join value as the size of a helper's memory argument
kind: gpu/entry
map: vals array 4 16 1
map: events gpu_ringbuf 0 0 4096
expect: reject invalid access to map_value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r6, %r0
call 7
mov %r7, 0
jeq %r0, 0, big
ja join
big:
mov %r7, 64
join:
lddw %r1, map[1]
mov %r2, %r6
mov %r3, %r7
add %r3, 8
mov %r4, 0
call 130
out:
mov %r0, 0
exit

=== a join value kept in a narrow spill across a loop head
kind: gpu/entry
map: vals array 4 16 1
expect: reject invalid access to map_value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r6, %r0
call 7
mov %r7, 0
jeq %r0, 0, big
ja join
big:
mov %r7, 64
join:
stxw [%r10-16], %r7
mov %r8, 0
loop:
add %r8, 1
jlt %r8, 4, loop
ldxw %r3, [%r10-16]
add %r6, %r3
ldxdw %r0, [%r6+0]
out:
mov %r0, 0
exit

=== a counter of failed helpers that decides nothing (accepted)
kind: gpu/entry
map: vals array 4 16 1
expect: accept
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r6, %r0
call 7
mov %r7, 0
jeq %r0, 0, big
ja join
big:
mov %r7, 1
join:
mov %r8, 0
loop:
call 7
jeq %r0, 0, skip
add %r7, 1
skip:
add %r8, 1
jlt %r8, 200, loop
ldxdw %r0, [%r6+8]
out:
mov %r0, 0
exit

=== a loop whose counter range shrinks each time ends (the accumulator decides nothing)
mem: 64
expect: accept
mov %r0, 99
ldxw %r9, [%r1+0]
ja entry
loop:
add %r0, %r9
entry:
add %r9, 1
jlt %r9, 11, loop
mov %r0, 0
exit
