# BPF-to-BPF calls: frames, argument and callee-saved registers.
=== local call returns a value
expect: accept
mov %r1, 4
call local twice
exit
twice:
mov %r0, %r1
add %r0, %r1
exit

=== callee reads the caller's callee-saved register
expect: reject @3 R6 !read_ok
mov %r6, 1
call local f
exit
f:
mov %r0, %r6
exit

=== caller reads an argument register after the call
expect: reject @2 R1 !read_ok
mov %r1, 1
call local f
mov %r0, %r1
exit
f:
mov %r0, 0
exit

=== callee-saved registers survive a local call
expect: accept
mov %r6, 1
mov %r9, 2
call local f
add %r6, %r9
mov %r0, %r6
exit
f:
mov %r6, 100
mov %r9, 100
mov %r0, 0
exit

=== function returns a pointer to its own stack
expect: reject @6 returns a pointer to its own stack
call local f
mov %r0, 0
exit
f:
stdw [%r10-8], 0
mov %r0, %r10
add %r0, -8
exit

=== callee stores its stack pointer into the caller's stack
expect: reject @7 cannot store a pointer to the stack of frame 1 into the stack of its caller
mov %r1, %r10
add %r1, -8
call local f
mov %r0, 0
exit
f:
mov %r2, %r10
add %r2, -16
stxdw [%r1+0], %r2
mov %r0, 0
exit

=== callee writes into the caller's stack
expect: accept
mov %r1, %r10
add %r1, -8
call local f
ldxdw %r0, [%r10-8]
exit
f:
stdw [%r1+0], 9
mov %r0, 0
exit

=== caller reads a slot the callee did not write
expect: reject @3 invalid read from stack
mov %r1, %r10
add %r1, -8
call local f
ldxdw %r0, [%r10-16]
exit
f:
stdw [%r1+0], 9
mov %r0, 0
exit

=== unbounded recursion
expect: reject call stack is too deep
mov %r1, 0
call local f
exit
f:
add %r1, 1
call local f
exit

=== two levels of calls
expect: accept
mov %r1, 1
call local f
exit
f:
add %r1, 1
call local g
exit
g:
mov %r0, %r1
exit

=== callee exits without r0
expect: reject @3 R0 !read_ok
call local f
exit
f:
mov %r1, 0
exit

=== jump from one function into another
expect: reject @1 leaves function 0
mov %r0, 0
jeq %r0, 1, inside
call local f
exit
f:
mov %r0, 1
inside:
exit

=== call from a device program
kind: gpu/entry
expect: accept
ldxdw %r1, [%r1+0]
call local f
exit
f:
mov %r0, %r1
and %r0, 255
exit
