# Stack: bounds, initialisation, spills and fills.
=== store then load
expect: accept
stdw [%r10-8], 42
ldxdw %r0, [%r10-8]
exit

=== load of a never-written slot
expect: reject @0 invalid read from stack
ldxdw %r0, [%r10-8]
exit

=== partially written slot
expect: reject @1 invalid read from stack
stw [%r10-8], 1
ldxdw %r0, [%r10-8]
exit

=== store below the 512-byte stack
expect: reject @0 invalid access to fp
stdw [%r10-520], 0
mov %r0, 0
exit

=== store at the frame pointer itself
expect: reject @0 invalid access to fp
stdw [%r10+0], 0
mov %r0, 0
exit

=== deepest valid slot
expect: accept
stdw [%r10-512], 3
ldxdw %r0, [%r10-512]
exit

=== spill and fill a context pointer
kind: gpu/entry
expect: accept
stxdw [%r10-8], %r1
ldxdw %r2, [%r10-8]
ldxdw %r0, [%r2+0]
exit

=== spill half of a pointer
kind: gpu/entry
expect: reject @0 cannot spill part of a pointer
stxw [%r10-8], %r1
mov %r0, 0
exit

=== read half of a spilled pointer
kind: gpu/entry
expect: reject @1 invalid size of register fill
stxdw [%r10-8], %r1
ldxw %r0, [%r10-8]
exit

=== unaligned pointer spill on the host
kind: host/launch
expect: reject @0 cannot spill part of a pointer
stxdw [%r10-12], %r1
mov %r0, 0
exit

=== spilled constant keeps its value
expect: accept
mov %r1, 8
stxdw [%r10-8], %r1
ldxdw %r2, [%r10-8]
mov %r3, %r10
sub %r3, %r2
stdw [%r3+0], 1
ldxdw %r0, [%r10-8]
exit

=== overwrite part of a spilled scalar
expect: accept
stdw [%r10-8], 1
stb [%r10-8], 2
ldxdw %r0, [%r10-8]
exit

=== variable-offset read over initialised slots
kind: gpu/entry
expect: accept
stdw [%r10-16], 1
stdw [%r10-8], 2
ldxdw %r2, [%r1+0]
and %r2, 8
mov %r3, %r10
add %r3, %r2
ldxdw %r0, [%r3-16]
exit

=== variable-offset read reaching an uninitialised slot
kind: gpu/entry
expect: reject @6 invalid read from stack
stdw [%r10-16], 1
ldxdw %r2, [%r1+0]
and %r2, 8
mov %r3, %r10
add %r3, %r2
add %r3, -8
ldxdw %r0, [%r3-16]
exit

=== variable-offset write
kind: gpu/entry
expect: reject @4 variable-offset stack write
ldxdw %r2, [%r1+0]
and %r2, 8
mov %r3, %r10
add %r3, %r2
stdw [%r3-16], 1
mov %r0, 0
exit

=== misaligned stack access in a device program
kind: gpu/entry
expect: reject @0 misaligned access to fp
stw [%r10-6], 0
mov %r0, 0
exit

=== misaligned stack access is allowed on the host
expect: accept
stw [%r10-6], 7
ldxw %r0, [%r10-6]
exit

=== byte stores make a readable slot
expect: accept
stb [%r10-1], 1
stb [%r10-2], 2
ldxh %r0, [%r10-2]
exit

=== sign-extending load from the stack
expect: accept
stdw [%r10-8], -1
ldxsb %r0, [%r10-8]
exit

=== atomic add on a stack slot
expect: accept
stdw [%r10-8], 1
mov %r1, 2
lock add [%r10-8], %r1
ldxdw %r0, [%r10-8]
exit

=== atomic fetch on a stack slot gives a number
expect: accept
stdw [%r10-8], 1
mov %r1, 2
lock fetch add [%r10-8], %r1
mov %r0, %r1
exit

=== atomic on an uninitialised slot
expect: reject @1 invalid read from stack
mov %r1, 2
lock add [%r10-8], %r1
mov %r0, 0
exit

=== atomic on a spilled pointer
kind: gpu/entry
expect: reject @2 atomic operation on a spilled pointer
stxdw [%r10-8], %r1
mov %r2, 1
lock add [%r10-8], %r2
mov %r0, 0
exit

=== atomic with a pointer operand
kind: gpu/entry
expect: reject @1 atomic operation with a pointer value
stdw [%r10-8], 0
lock xchg [%r10-8], %r1
mov %r0, 0
exit

=== cmpxchg needs r0
expect: reject @2 R0 !read_ok
stdw [%r10-8], 0
mov %r1, 1
lock cmpxchg [%r10-8], %r1
exit

=== cmpxchg on the stack
expect: accept
stdw [%r10-8], 0
mov %r1, 1
mov %r0, 0
lock cmpxchg [%r10-8], %r1
exit

=== store through an uninitialised register
expect: reject @0 R3 !read_ok
stdw [%r3+0], 1
mov %r0, 0
exit

=== load from a scalar address
expect: reject @1 invalid mem access 'scalar'
mov %r3, 4096
ldxdw %r0, [%r3+0]
exit
