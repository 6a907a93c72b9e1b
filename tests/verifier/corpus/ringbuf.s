# Ring buffer records: reserve, null check, bounds, release on every path.
=== reserve, fill and submit
kind: gpu/entry
map: events gpu_ringbuf 0 0 4096
expect: accept
lddw %r1, map[0]
mov %r2, 16
mov %r3, 0
call 131
jeq %r0, 0, out
stdw [%r0+0], 1
stdw [%r0+8], 2
mov %r1, %r0
mov %r2, 0
call 132
out:
mov %r0, 0
exit

=== reserve and discard
kind: host/launch
map: events ringbuf 0 0 4096
expect: accept
lddw %r1, map[0]
mov %r2, 8
mov %r3, 0
call 131
jeq %r0, 0, out
mov %r1, %r0
mov %r2, 0
call 133
out:
mov %r0, 0
exit

=== record never released
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: reject @8 unreleased reference
lddw %r1, map[0]
mov %r2, 16
mov %r3, 0
call 131
jeq %r0, 0, out
stdw [%r0+0], 1
out:
mov %r0, 0
exit

=== record released on one path only
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: reject unreleased reference: ring buffer record reserved at insn 5
ldxdw %r6, [%r1+0]
lddw %r1, map[0]
mov %r2, 16
mov %r3, 0
call 131
jeq %r0, 0, out
jeq %r6, 0, out
mov %r1, %r0
mov %r2, 0
call 132
out:
mov %r0, 0
exit

=== record written without a null check
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: reject @5 invalid mem access 'ringbuf_mem_or_null'
lddw %r1, map[0]
mov %r2, 16
mov %r3, 0
call 131
stdw [%r0+0], 1
mov %r0, 0
exit

=== write past the record
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: reject @6 invalid access to ringbuf_mem
lddw %r1, map[0]
mov %r2, 16
mov %r3, 0
call 131
jeq %r0, 0, out
stdw [%r0+16], 1
mov %r1, %r0
mov %r2, 0
call 132
out:
mov %r0, 0
exit

=== submit a maybe-null record
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: reject @7 bpf_ringbuf_submit arg1 (R1) type=ringbuf_mem_or_null expected=ringbuf_mem
lddw %r1, map[0]
mov %r2, 16
mov %r3, 0
call 131
mov %r1, %r0
mov %r2, 0
call 132
mov %r0, 0
exit

=== reservation size not constant
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: reject @4 must be a constant size
ldxdw %r2, [%r1+0]
lddw %r1, map[0]
mov %r3, 0
call 131
mov %r0, 0
exit

=== record used after submit
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: reject @10 invalid mem access 'scalar'
lddw %r1, map[0]
mov %r2, 16
mov %r3, 0
call 131
jeq %r0, 0, out
mov %r6, %r0
mov %r1, %r0
mov %r2, 0
call 132
stdw [%r6+0], 1
out:
mov %r0, 0
exit

=== record submitted twice
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: reject @12 expected=ringbuf_mem
lddw %r1, map[0]
mov %r2, 16
mov %r3, 0
call 131
jeq %r0, 0, out
mov %r6, %r0
mov %r1, %r0
mov %r2, 0
call 132
mov %r1, %r6
mov %r2, 0
call 132
out:
mov %r0, 0
exit

=== submit a pointer into the middle of a record
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: reject @9 must point to the start of the record
lddw %r1, map[0]
mov %r2, 16
mov %r3, 0
call 131
jeq %r0, 0, out
add %r0, 8
mov %r1, %r0
mov %r2, 0
call 132
out:
mov %r0, 0
exit

=== output from the stack
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: accept
stdw [%r10-8], 1
lddw %r1, map[0]
mov %r2, %r10
add %r2, -8
mov %r3, 8
mov %r4, 0
call 130
mov %r0, 0
exit

=== output of an unbounded size
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: reject @7 is unbounded
ldxdw %r3, [%r1+0]
stdw [%r10-8], 1
lddw %r1, map[0]
mov %r2, %r10
add %r2, -8
mov %r4, 0
call 130
mov %r0, 0
exit

=== output of more bytes than the stack holds
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: reject @7 invalid access to fp
stdw [%r10-8], 1
lddw %r1, map[0]
mov %r2, %r10
add %r2, -8
mov %r3, 16
mov %r4, 0
call 130
mov %r0, 0
exit

=== ring buffer helper on a hash map
kind: gpu/entry
map: counts hash 4 8 64
expect: reject @4 is not a ring buffer map
lddw %r1, map[0]
mov %r2, 16
mov %r3, 0
call 131
mov %r0, 0
exit

=== probe exits with a reserved record
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: reject @6 not released before the probe exits
lddw %r1, map[0]
mov %r2, 16
mov %r3, 0
call 131
jeq %r0, 0, out
call 507
out:
mov %r0, 0
exit

=== record spilled to the stack and submitted from there
kind: gpu/entry
map: events ringbuf 0 0 4096
expect: accept
lddw %r1, map[0]
mov %r2, 16
mov %r3, 0
call 131
jeq %r0, 0, out
stxdw [%r10-8], %r0
ldxdw %r1, [%r10-8]
mov %r2, 0
call 132
out:
mov %r0, 0
exit
