# Termination: bounded loops only, complexity limit.
=== loop with a constant bound
expect: accept
mov %r0, 0
mov %r1, 0
loop:
add %r0, %r1
add %r1, 1
jlt %r1, 10, loop
exit

=== jump to itself
expect: reject @1 infinite loop detected
mov %r0, 0
self:
ja self
exit

=== loop whose counter never changes
expect: reject infinite loop detected
mov %r1, 0
mov %r0, 0
loop:
add %r1, 0
jne %r1, 1, loop
exit

=== count down from an unknown value
kind: gpu/entry
expect: reject infinite loop detected
ldxdw %r2, [%r1+0]
mov %r0, 0
loop:
sub %r2, 1
jne %r2, 0, loop
exit

=== loop bounded by a clamped unknown value
kind: gpu/entry
expect: accept
ldxdw %r2, [%r1+0]
mov %r0, 0
jgt %r2, 100, out
mov %r3, 0
loop:
add %r0, 2
add %r3, 1
jlt %r3, %r2, loop
out:
exit

=== nested loops
expect: accept
mov %r0, 0
mov %r1, 0
outer:
mov %r2, 0
inner:
add %r0, 1
add %r2, 1
jlt %r2, 8, inner
add %r1, 1
jlt %r1, 8, outer
exit

=== loop longer than the complexity limit
expect: reject program too complex
mov %r0, 0
mov %r1, 0
loop:
add %r1, 1
jlt %r1, 1000000, loop
exit

=== counter that skips the exit value
expect: reject program too complex
mov %r0, 0
mov %r1, 1
loop:
add %r1, 2
jne %r1, 0, loop
exit

=== loop over the memory buffer
mem: 32
expect: accept
mov %r0, 0
mov %r3, 0
loop:
mov %r4, %r1
add %r4, %r3
ldxb %r5, [%r4+0]
add %r0, %r5
add %r3, 1
jlt %r3, %r2, loop
exit

=== loop that walks off the buffer
mem: 32
expect: reject invalid access to mem
mov %r0, 0
mov %r3, 0
loop:
mov %r4, %r1
add %r4, %r3
ldxb %r5, [%r4+0]
add %r0, %r5
add %r3, 1
jle %r3, %r2, loop
exit

=== backward jump with a decreasing constant
expect: accept
mov %r0, 0
mov %r1, 5
top:
add %r0, %r1
sub %r1, 1
jsgt %r1, 0, top
exit

=== branches on unknown data converge
kind: gpu/mem
expect: accept
ldxw %r2, [%r1+44]
mov %r0, 0
jeq %r2, 1, a
add %r0, 1
a:
jeq %r2, 2, b
add %r0, 2
b:
jeq %r2, 3, c
add %r0, 4
c:
exit
