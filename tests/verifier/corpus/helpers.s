# Helpers: prototypes, unknown ids, where each helper may run.
=== unknown helper id
kind: gpu/entry
expect: reject @0 unknown helper id 9999
call 9999
mov %r0, 0
exit

=== probe_read is host-only
kind: gpu/entry
expect: reject @4 bpf_probe_read (4) is host-only
mov %r1, %r10
add %r1, -8
mov %r2, 8
mov %r3, 0
call 4
mov %r0, 0
exit

=== probe_read_user is host-only
kind: gpu/exit
expect: reject @4 bpf_probe_read_user (112) is host-only
mov %r1, %r10
add %r1, -8
mov %r2, 8
mov %r3, 0
call 112
mov %r0, 0
exit

=== probe_read_kernel is host-only
kind: gpu/mem
expect: reject @4 bpf_probe_read_kernel (113) is host-only
mov %r1, %r10
add %r1, -8
mov %r2, 8
mov %r3, 0
call 113
mov %r0, 0
exit

=== probe_read in a host probe fills the stack
kind: host/launch
expect: accept
mov %r1, %r10
add %r1, -8
mov %r2, 8
mov %r3, 0
call 4
ldxdw %r0, [%r10-8]
exit

=== probe_read into too small a buffer
kind: uprobe
expect: reject @4 invalid access to fp
mov %r1, %r10
add %r1, -8
mov %r2, 16
mov %r3, 0
call 4
mov %r0, 0
exit

=== trace_printk on the GPU
kind: gpu/entry
expect: accept
stdw [%r10-8], 0x6968
mov %r1, %r10
add %r1, -8
mov %r2, 8
mov %r3, 1
call 6
mov %r0, 0
exit

=== trace_printk with a zero size
kind: gpu/entry
expect: reject @4 may be zero
stdw [%r10-8], 0x6968
mov %r1, %r10
add %r1, -8
mov %r2, 0
call 6
mov %r0, 0
exit

=== trace_printk of an uninitialised format
kind: gpu/entry
expect: reject @3 is not initialised
mov %r1, %r10
add %r1, -8
mov %r2, 8
call 6
mov %r0, 0
exit

=== GPU helper in a host probe
kind: host/launch
expect: reject @0 bpf_gpu_globaltimer (502) is GPU-only
call 502
mov %r0, 0
exit

=== GPU index helper in a uprobe
kind: uprobe
expect: reject @6 is GPU-only
mov %r1, %r10
add %r1, -8
mov %r2, %r10
add %r2, -16
mov %r3, %r10
add %r3, -24
call 505
mov %r0, 0
exit

=== thread index into three stack slots
kind: gpu/entry
expect: accept
mov %r1, %r10
add %r1, -8
mov %r2, %r10
add %r2, -16
mov %r3, %r10
add %r3, -24
call 505
ldxdw %r0, [%r10-8]
ldxdw %r1, [%r10-16]
add %r0, %r1
exit

=== block index into a number
kind: gpu/entry
expect: reject @5 invalid mem access 'scalar'
mov %r1, %r10
add %r1, -8
mov %r2, %r10
add %r2, -16
mov %r3, 0
call 503
mov %r0, 0
exit

=== id and timer helpers on the GPU
kind: gpu/entry
expect: accept
call 502
call 509
call 510
call 511
call 600
call 601
call 506
call 14
call 5
mov %r0, 0
exit

=== lane id is below 64
kind: gpu/entry
expect: accept
stdw [%r10-64], 0
stdw [%r10-56], 0
stdw [%r10-48], 0
stdw [%r10-40], 0
stdw [%r10-32], 0
stdw [%r10-24], 0
stdw [%r10-16], 0
stdw [%r10-8], 0
call 511
mov %r1, %r10
add %r1, -64
add %r1, %r0
ldxb %r0, [%r1+0]
exit

=== prandom is a 32-bit value
kind: host/launch
expect: accept
stdw [%r10-8], 0
call 7
rsh %r0, 29
mov %r1, %r10
add %r1, -8
add %r1, %r0
ldxb %r0, [%r1+0]
exit

=== puts with a constant string
kind: gpu/entry
rostr: hello from the GPU
expect: accept
lddw %r1, map_value[0]
call 501
mov %r0, 0
exit

=== puts with a stack string
kind: gpu/entry
expect: reject @2 bpf_gpu_puts arg1 must be a constant string
stdw [%r10-8], 0x6968
mov %r1, %r10
call 501
mov %r0, 0
exit

=== puts with a writable global
kind: gpu/entry
map: .data array 4 8 1
expect: reject @2 must point to a NUL-terminated string in a read-only map
lddw %r1, map_value[0]
call 501
mov %r0, 0
exit

=== gpu exit ends the path
kind: gpu/entry
expect: accept
call 507
mov %r0, %r5
exit

=== argument registers are clobbered by a call
kind: gpu/entry
expect: reject @1 R1 !read_ok
call 502
mov %r0, %r1
exit

=== callee-saved registers survive a call
kind: gpu/entry
expect: accept
mov %r6, 3
call 502
mov %r0, %r6
exit

=== map helper argument not initialised
kind: gpu/entry
map: counts hash 4 8 64
expect: reject @2 bpf_map_lookup_elem arg2 (R2) !read_ok
lddw %r1, map[0]
call 1
mov %r0, 0
exit

=== perf event output on the GPU
kind: gpu/entry
map: events perf 4 4 64
expect: accept
stdw [%r10-8], 1
lddw %r2, map[0]
mov %r3, 0
mov %r4, %r10
add %r4, -8
mov %r5, 8
call 25
mov %r0, 0
exit

=== perf event output without the context
kind: gpu/entry
map: events perf 4 4 64
expect: reject @8 bpf_perf_event_output arg1 (R1) type=fp expected=ctx
stdw [%r10-8], 1
mov %r1, %r10
lddw %r2, map[0]
mov %r3, 0
mov %r4, %r10
add %r4, -8
mov %r5, 8
call 25
mov %r0, 0
exit

=== perf event output into a hash map
kind: gpu/entry
map: counts hash 4 8 64
expect: reject @7 is not a perf event array
stdw [%r10-8], 1
lddw %r2, map[0]
mov %r3, 0
mov %r4, %r10
add %r4, -8
mov %r5, 8
call 25
mov %r0, 0
exit

=== indirect call in a device program
kind: gpu/entry
expect: reject @1 callx (indirect call) is only allowed
mov %r2, 5
call %r2
mov %r0, 0
exit

=== indirect call with a constant under prog run
expect: accept
mov %r2, 5
call %r2
mov %r0, 2
exit

=== indirect call through an unknown register
mem: 8
expect: reject @1 callx (indirect call) is only allowed
ldxdw %r2, [%r1+0]
call %r2
mov %r0, 0
exit

=== ktime in a host probe
kind: host/sync
expect: accept
call 5
exit

=== GPU and host helpers under prog run
expect: accept
call 502
mov %r1, %r10
add %r1, -8
mov %r2, 8
mov %r3, 0
call 4
mov %r0, 0
exit

=== log2 (602) bounds an index into 64 counters, in a host probe too
kind: host/launch
map: hist array 4 512 1
expect: accept
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r6, %r0
call 5
mov %r1, %r0
call 602
lsh %r0, 3
add %r6, %r0
mov %r1, 1
lock add [%r6+0], %r1
out:
mov %r0, 0
exit

=== log2 (602) is at most 63: not an index into 32 counters
kind: gpu/entry
map: hist array 4 256 1
expect: reject @14 invalid access to map_value
stw [%r10-4], 0
lddw %r1, map[0]
mov %r2, %r10
add %r2, -4
call 1
jeq %r0, 0, out
mov %r6, %r0
call 5
mov %r1, %r0
call 602
lsh %r0, 3
add %r6, %r0
mov %r1, 1
lock add [%r6+0], %r1
out:
mov %r0, 0
exit
