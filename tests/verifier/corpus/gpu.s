# GPU/SIMT rules and device specifics.
=== pointer comparison in a device program
kind: gpu/entry
expect: reject @0 comparison of pointers
jeq %r1, %r10, out
out:
mov %r0, 0
exit

=== pointer comparison in a host program
kind: host/launch
expect: accept
jeq %r1, %r10, out
out:
mov %r0, 0
exit

=== the context is never null
kind: gpu/entry
expect: accept
jeq %r1, 0, bad
mov %r0, 0
exit
bad:
ldxdw %r0, [%r1+1000]
exit

=== lane-dependent branches are allowed (no collective helper exists)
kind: gpu/entry
expect: accept
call 511
jgt %r0, 15, hi
mov %r0, 1
exit
hi:
mov %r0, 2
exit

=== per-thread counters with thread ids
kind: gpu/entry
map: per pergputhread 4 8 1
expect: accept
call 600
stxw [%r10-4], %r0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r1, 1
lock add [%r0+0], %r1
out:
mov %r0, 0
exit

=== atomics must be aligned on the GPU
kind: gpu/entry
map: arr gpu_array 4 16 1
expect: reject @8 misaligned atomic operation on map_value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r1, 1
lock add [%r0+4], %r1
out:
mov %r0, 0
exit

=== membar then timer
kind: gpu/exit
expect: accept
call 506
call 502
exit
