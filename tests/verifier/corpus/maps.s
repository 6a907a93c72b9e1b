# Maps: lookups, null checks, value bounds, read-only maps.
=== lookup, check and read a value
kind: gpu/entry
map: counts hash 4 8 64
expect: accept
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
ldxdw %r0, [%r0+0]
exit
out:
mov %r0, 0
exit

=== value used without a null check
kind: gpu/entry
map: counts hash 4 8 64
expect: reject @6 invalid mem access 'map_value_or_null'
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
ldxdw %r0, [%r0+0]
exit

=== null check with jne
kind: gpu/entry
map: counts hash 4 8 64
expect: accept
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jne %r0, 0, found
mov %r0, 0
exit
found:
mov %r1, 1
lock add [%r0+0], %r1
mov %r0, 0
exit

=== key not initialised
kind: gpu/entry
map: counts hash 4 8 64
expect: reject @4 stack byte fp-4 is not initialised
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
mov %r0, 0
exit

=== key pointer at the frame pointer
kind: gpu/entry
map: counts hash 4 8 64
expect: reject @3 invalid access to fp
lddw %r1, map[0]
mov %r2, %r10
call 1
mov %r0, 0
exit

=== first argument is not a map
kind: gpu/entry
map: counts hash 4 8 64
expect: reject @4 bpf_map_lookup_elem arg1 (R1) type=scalar expected=map_ptr
stw [%r10-4], 0
mov %r1, 0
mov %r2, %r10
add %r2, -4
call 1
mov %r0, 0
exit

=== read past the value
kind: gpu/entry
map: counts hash 4 8 64
expect: reject @7 invalid access to map_value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
ldxdw %r0, [%r0+8]
exit
out:
mov %r0, 0
exit

=== write the value
kind: gpu/entry
map: counts array 4 16 1
expect: accept
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
stdw [%r0+8], 7
out:
mov %r0, 0
exit

=== arithmetic on a maybe-null value
kind: gpu/entry
map: counts hash 4 8 64
expect: reject @6 pointer arithmetic on map_value_or_null prohibited
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
add %r0, 4
mov %r0, 0
exit

=== bounded variable offset into a value
kind: gpu/entry
map: buf array 4 16 1
expect: accept
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
ldxdw %r3, [%r0+0]
jgt %r3, 15, out
add %r0, %r3
ldxb %r0, [%r0+0]
exit
out:
mov %r0, 0
exit

=== variable offset one past the value
kind: gpu/entry
map: buf array 4 16 1
expect: reject @10 invalid access to map_value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
ldxdw %r3, [%r0+0]
jgt %r3, 16, out
add %r0, %r3
ldxb %r0, [%r0+0]
exit
out:
mov %r0, 0
exit

=== unbounded variable offset
kind: gpu/entry
map: buf array 4 16 1
expect: reject @8 math between map_value pointer and register with unbounded min value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
ldxdw %r3, [%r0+0]
add %r0, %r3
ldxb %r0, [%r0+0]
exit
out:
mov %r0, 0
exit

=== misaligned value access on the GPU
kind: gpu/entry
map: buf array 4 16 1
expect: reject @7 misaligned access to map_value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
ldxdw %r0, [%r0+4]
exit
out:
mov %r0, 0
exit

=== misaligned value access on the host is fine
kind: host/launch
map: buf array 4 16 1
expect: accept
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
ldxdw %r0, [%r0+4]
exit
out:
mov %r0, 0
exit

=== lookup in a ring buffer
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: reject @5 is not a hash or array map
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
mov %r0, 0
exit

=== update with a value on the stack
kind: gpu/entry
map: counts hash 4 8 64
expect: accept
stw [%r10-4], 1
stdw [%r10-16], 2
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
mov %r3, %r10
add %r3, -16
mov %r4, 0
call 2
exit

=== update with an uninitialised value
kind: gpu/entry
map: counts hash 4 8 64
expect: reject @8 stack byte fp-16 is not initialised
stw [%r10-4], 1
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
mov %r3, %r10
add %r3, -16
mov %r4, 0
call 2
exit

=== update flags must be a number
kind: gpu/entry
map: counts hash 4 8 64
expect: reject @9 bpf_map_update_elem arg4 (R4) type=fp expected=scalar
stw [%r10-4], 1
stdw [%r10-16], 2
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
mov %r3, %r10
add %r3, -16
mov %r4, %r10
call 2
exit

=== delete an element
kind: host/launch
map: counts hash 4 8 64
expect: accept
stw [%r10-4], 1
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 3
exit

=== map index out of range
map: counts hash 4 8 64
expect: reject @0 map index 3
lddw %r1, map[3]
mov %r0, 0
exit

=== pointer stored into a map value
kind: gpu/entry
map: buf array 4 16 1
expect: reject @7 cannot store a pointer
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
stxdw [%r0+0], %r10
out:
mov %r0, 0
exit

=== null check through a copy
kind: gpu/entry
map: counts hash 4 8 64
expect: accept
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
mov %r6, %r0
jeq %r6, 0, out
ldxdw %r0, [%r0+0]
exit
out:
mov %r0, 0
exit

=== checking one lookup does not check another
kind: gpu/entry
map: counts hash 4 8 64
expect: reject @13 invalid mem access 'map_value_or_null'
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
mov %r6, %r0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r6, 0, out
ldxdw %r0, [%r0+0]
exit
out:
mov %r0, 0
exit

=== direct value of a global
map: .data array 4 16 1
expect: accept
lddw %r1, map_value[0]+4
ldxw %r0, [%r1+0]
stw [%r1+8], 1
exit

=== direct value offset past the global
map: .data array 4 16 1
expect: reject @0 lddw offset 16 outside the value
lddw %r1, map_value[0]+16
mov %r0, 0
exit

=== write into a read-only global
map: .rodata array 4 16 1 ro
expect: reject @2 write into read-only map '.rodata'
lddw %r1, map_value[0]
stw [%r1+0], 1
mov %r0, 0
exit

=== read a read-only global
map: .rodata array 4 16 1 ro
expect: accept
lddw %r1, map_value[0]
ldxw %r0, [%r1+12]
exit

=== dereference of the map itself
map: counts hash 4 8 64
expect: reject @2 invalid mem access 'map_ptr'
lddw %r1, map[0]
ldxdw %r0, [%r1+0]
exit

=== arithmetic on the map itself
map: counts hash 4 8 64
expect: reject @2 pointer arithmetic on map_ptr prohibited
lddw %r1, map[0]
add %r1, 8
mov %r0, 0
exit

=== per-GPU-thread array lookup
kind: gpu/entry
map: per pergputhread 4 8 1
expect: accept
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
stdw [%r0+0], 1
out:
mov %r0, 0
exit

=== returning a maybe-null value
kind: gpu/entry
map: counts hash 4 8 64
expect: reject @6 R0 leaks an address
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
exit

=== bound checked on a copy of the index
kind: gpu/entry
map: buf array 4 16 1
expect: accept
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
ldxdw %r3, [%r0+0]
mov %r4, %r3
jgt %r4, 15, out
add %r0, %r3
ldxb %r0, [%r0+0]
exit
out:
mov %r0, 0
exit

=== copy changed after the check no longer bounds the index
kind: gpu/entry
map: buf array 4 16 1
expect: reject @11 math between map_value pointer and register with unbounded min value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
ldxdw %r3, [%r0+0]
mov %r4, %r3
ldxdw %r3, [%r0+8]
jgt %r4, 15, out
add %r0, %r3
ldxb %r0, [%r0+0]
exit
out:
mov %r0, 0
exit
