# Context: per-attach-kind size, read-only, constant aligned offsets.
=== gpu/entry reads the three kernel fields
kind: gpu/entry
expect: accept
ldxdw %r2, [%r1+0]
ldxdw %r3, [%r1+8]
ldxdw %r0, [%r1+16]
exit

=== gpu/entry may not read memory-probe fields
kind: gpu/entry
expect: reject @0 invalid access to ctx: off=24 size=8 reads mem_addr, a gpu/mem field a gpu/entry probe does not have
ldxdw %r0, [%r1+24]
exit

=== gpu/entry may not read the last memory-probe field
kind: gpu/entry
expect: reject @1 reads mem_site, a gpu/mem field
ldxw %r2, [%r1+56]
ldxw %r0, [%r1+52]
exit

=== gpu/entry may not read a byte of mem_space
kind: gpu/entry
expect: reject @0 reads mem_space
ldxb %r0, [%r1+51]
exit

=== gpu/entry may not read across the hole into device
kind: gpu/entry
expect: reject @0 reads mem_space
ldxdw %r0, [%r1+48]
exit

=== gpu/entry reads device
kind: gpu/entry
expect: accept
ldxw %r2, [%r1+56]
ldxw %r3, [%r1+60]
ldxdw %r0, [%r1+56]
exit

=== gpu/exit reads device after the kernel fields
kind: gpu/exit
expect: accept
ldxdw %r2, [%r1+16]
ldxw %r0, [%r1+56]
add %r0, %r2
exit

=== gpu/barrier reads device through a moved pointer
kind: gpu/barrier
expect: accept
add %r1, 48
ldxw %r0, [%r1+8]
exit

=== gpu/barrier reads past device
kind: gpu/barrier
expect: reject @0 invalid access to ctx
ldxw %r0, [%r1+64]
exit

=== gpu/exit may not read memory-probe fields
kind: gpu/exit
expect: reject @0 reads mem_size, a gpu/mem field a gpu/exit probe does not have
ldxw %r0, [%r1+40]
exit

=== gpu/barrier may not read memory-probe fields
kind: gpu/barrier
expect: reject @0 reads mem_value, a gpu/mem field a gpu/barrier probe does not have
ldxdw %r0, [%r1+32]
exit

=== memory-probe fields stay unreadable when the pointer is moved
kind: gpu/exit
expect: reject @1 reads mem_size, a gpu/mem field a gpu/exit probe does not have
add %r1, 40
ldxw %r0, [%r1+0]
exit

=== gpu/mem reads the whole struct
kind: gpu/mem
expect: accept
ldxdw %r2, [%r1+24]
ldxdw %r3, [%r1+32]
ldxw %r4, [%r1+40]
ldxw %r5, [%r1+44]
ldxw %r6, [%r1+48]
ldxw %r6, [%r1+52]
ldxw %r0, [%r1+56]
exit

=== gpu/mem reads device as one word with its padding
kind: gpu/mem
expect: accept
ldxdw %r0, [%r1+56]
exit

=== gpu/mem reads past the struct
kind: gpu/mem
expect: reject @0 invalid access to ctx: off=64..64 size=8 outside [0, 64)
ldxdw %r0, [%r1+64]
exit

=== write into the context
kind: gpu/exit
expect: reject @0 cannot write into ctx
stdw [%r1+0], 0
mov %r0, 0
exit

=== register store into the context
kind: gpu/mem
expect: reject @1 cannot write into ctx
mov %r2, 1
stxdw [%r1+32], %r2
mov %r0, 0
exit

=== atomic on the context
kind: gpu/mem
expect: reject @1 atomic operation on ctx
mov %r2, 1
lock add [%r1+32], %r2
mov %r0, 0
exit

=== misaligned context read
kind: gpu/entry
expect: reject @0 misaligned access to ctx
ldxdw %r0, [%r1+4]
exit

=== misaligned context read in a host program
kind: host/memcpy
expect: reject @0 misaligned access to ctx
ldxw %r0, [%r1+2]
exit

=== variable offset into the context
kind: gpu/entry
expect: reject @2 variable offset added to ctx pointer
ldxdw %r2, [%r1+0]
and %r2, 8
add %r1, %r2
ldxdw %r0, [%r1+0]
exit

=== constant offset added to the context
kind: gpu/entry
expect: accept
add %r1, 8
ldxdw %r0, [%r1+0]
exit

=== constant offset added past the context
kind: gpu/entry
expect: reject @1 invalid access to ctx: off=64..64 size=8 outside [0, 64)
add %r1, 64
ldxdw %r0, [%r1+0]
exit

=== constant offset added into the memory-probe fields
kind: gpu/entry
expect: reject @1 reads mem_addr
add %r1, 24
ldxdw %r0, [%r1+0]
exit

=== device may not be written
kind: gpu/exit
expect: reject @0 cannot write into ctx
stw [%r1+56], 1
mov %r0, 0
exit

=== host/launch reads the kernel name
kind: host/launch
expect: accept
ldxb %r0, [%r1+64]
ldxb %r0, [%r1+127]
exit

=== host/launch reads past its struct
kind: host/launch
expect: reject @0 invalid access to ctx
ldxb %r0, [%r1+128]
exit

=== host/memcpy reads direction and size
kind: host/memcpy
expect: accept
ldxdw %r2, [%r1+16]
ldxw %r0, [%r1+40]
exit

=== host/malloc reads past its struct
kind: host/malloc
expect: reject @0 invalid access to ctx
ldxw %r0, [%r1+56]
exit

=== host/sync reads its stream
kind: host/sync
expect: accept
ldxdw %r0, [%r1+24]
exit

=== uprobe reads saved registers
kind: uprobe
expect: accept
ldxdw %r0, [%r1+160]
exit

=== uprobe reads past pt_regs
kind: uprobe
expect: reject @0 invalid access to ctx
ldxdw %r0, [%r1+168]
exit

=== memory probe cannot dereference the application address
kind: gpu/mem
expect: reject @1 invalid mem access 'scalar'
ldxdw %r2, [%r1+24]
ldxdw %r0, [%r2+0]
exit

=== memory probe cannot write application memory
kind: gpu/mem
expect: reject @1 invalid mem access 'scalar'
ldxdw %r2, [%r1+24]
stdw [%r2+0], 0
mov %r0, 0
exit

=== memory probe cannot write application memory atomically
kind: gpu/mem
expect: reject @2 invalid mem access 'scalar'
ldxdw %r2, [%r1+24]
mov %r3, 1
lock add [%r2+0], %r3
mov %r0, 0
exit

=== kernel parameters are an address, not a pointer
kind: gpu/entry
expect: reject @1 invalid mem access 'scalar'
ldxdw %r2, [%r1+8]
ldxw %r0, [%r2+0]
exit

=== context fields are numbers in r0
kind: gpu/mem
expect: accept
ldxdw %r0, [%r1+32]
exit

=== r1 of a program without memory is zero
expect: reject @0 invalid mem access 'scalar'
ldxb %r0, [%r1+0]
exit
