# ALU rules: initialised registers, read-only r10, pointer arithmetic.
=== return constant
expect: accept
mov %r0, 0
exit

=== exit without setting r0
expect: reject @0 R0 !read_ok
exit

=== read of an uninitialised register
kind: gpu/entry
expect: reject @0 R2 !read_ok
mov %r0, %r2
exit

=== write to the frame pointer
expect: reject @0 r10 is read-only
mov %r10, 0
mov %r0, 0
exit

=== add to the frame pointer register itself
expect: reject @0 r10 is read-only
add %r10, 8
mov %r0, 0
exit

=== arithmetic chain of constants
expect: accept
mov %r0, 7
add %r0, 3
mul %r0, 5
sub %r0, 1
div %r0, 7
mod %r0, 4
exit

=== division by a register that may be zero is defined
kind: gpu/entry
expect: accept
ldxdw %r2, [%r1+0]
mov %r0, 100
div %r0, %r2
mod %r0, %r2
exit

=== signed division and modulo
expect: accept
mov %r0, -7
sdiv %r0, 2
smod %r0, 3
exit

=== 32-bit operations zero-extend
expect: accept
lddw %r0, 0x1ffffffff
add32 %r0, 1
exit

=== shifts and arithmetic shift
expect: accept
mov %r0, -16
arsh %r0, 2
lsh %r0, 1
rsh %r0, 60
exit

=== byte swaps of a scalar
expect: accept
mov %r0, 0x1234
be16 %r0
le32 %r0
bswap64 %r0
exit

=== sign-extending moves
expect: accept
mov %r1, 0xff
movsx864 %r0, %r1
movsx3264 %r0, %r0
exit

=== negation
expect: accept
mov %r0, 5
neg %r0
neg32 %r0
exit

=== 32-bit arithmetic on a pointer
expect: reject @1 32-bit arithmetic on pointer
mov %r1, %r10
add32 %r1, 8
mov %r0, 0
exit

=== multiplication of a pointer
expect: reject @1 pointer arithmetic with 'mul' operator prohibited
mov %r1, %r10
mul %r1, 2
mov %r0, 0
exit

=== xor of a pointer
expect: reject @1 pointer arithmetic with 'xor' operator prohibited
mov %r1, %r10
xor %r1, 1
mov %r0, 0
exit

=== pointer as the source of a shift
expect: reject @1 pointer R10 used as an operand of 'lsh'
mov %r2, 1
lsh %r2, %r10
mov %r0, 0
exit

=== byte swap of a pointer
expect: reject @1 byte swap of pointer
mov %r1, %r10
be16 %r1
mov %r0, 0
exit

=== sign-extending move of a pointer
expect: reject @0 sign-extending move of a pointer
movsx3264 %r1, %r10
mov %r0, 0
exit

=== difference of two stack pointers is a number
expect: accept
mov %r1, %r10
add %r1, -16
mov %r2, %r10
sub %r2, %r1
mov %r0, %r2
exit

=== difference of pointers into different objects
kind: gpu/entry
expect: reject @1 subtraction of pointers into different objects
mov %r2, %r10
sub %r2, %r1
mov %r0, 0
exit

=== returning the frame pointer from a device program
kind: gpu/entry
expect: reject @1 R0 leaks an address
mov %r0, %r10
exit

=== returning the context pointer from a host program
kind: host/launch
expect: reject @1 R0 leaks an address
mov %r0, %r1
exit

=== 32-bit move of a pointer gives a number
kind: gpu/entry
expect: accept
mov32 %r0, %r1
exit

=== pointer plus scalar in either order
expect: accept
mov %r1, -8
add %r1, %r10
stdw [%r1+0], 1
ldxdw %r0, [%r10-8]
exit

=== pointer moved far out of range
expect: reject @3 math between fp pointer and register with unbounded min value
lddw %r1, 0x100000000
mov %r2, %r10
add %r2, %r1
mov %r0, 0
exit
