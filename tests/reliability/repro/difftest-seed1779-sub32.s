# difftest seed 1779: the CUDA JIT (13.0, driver 580, -O3/-O4) dropped the 32-bit negation
# (neg32 %r6 before the final loop); fixed by emit_alu32_wide (docs/RELIABILITY.md).
# maps: 0 = array arr (key u32, value u64, 8 entries), 1 = hash hash (key u32, value u64, 16 entries)
mov %r6, 2147483647
mov %r7, 3
mov %r8, -2092262375
lddw %r9, 0xffffffff
stdw [%r10-8], 0
stdw [%r10-16], 0
stdw [%r10-24], 0
stdw [%r10-32], 0
stdw [%r10-40], 0
stdw [%r10-48], 0
stdw [%r10-56], 0
stdw [%r10-64], 0
stdw [%r10-72], 0
stdw [%r10-80], 0
mov %r1, %r9
and %r1, 31
stxw [%r10-72], %r1
stxdw [%r10-80], %r7
lddw %r1, map[1]
mov %r2, %r10
add %r2, -72
mov %r3, %r10
add %r3, -80
mov %r4, 1
call 2
add %r7, %r0
jset32 %r9, -1, +5
neg %r7
arsh %r6, %r9
mov %r6, -1
lock xchg32 [%r10-20], %r7
ja +2
lock or32 [%r10-28], %r6
neg32 %r9
jslt %r9, 8192, +5
stb [%r10-56], 24
lock xchg32 [%r10-8], %r7
xor32 %r7, %r6
ldxsb %r7, [%r10-33]
ja +2
neg32 %r6
ldxh %r8, [%r10-36]
xor %r6, %r7
mul %r6, 16777619
add %r6, %r8
xor %r6, %r9
ldxdw %r1, [%r10-8]
mul %r6, 16777619
xor %r6, %r1
ldxdw %r1, [%r10-16]
mul %r6, 16777619
xor %r6, %r1
ldxdw %r1, [%r10-24]
mul %r6, 16777619
xor %r6, %r1
ldxdw %r1, [%r10-32]
mul %r6, 16777619
xor %r6, %r1
ldxdw %r1, [%r10-40]
mul %r6, 16777619
xor %r6, %r1
ldxdw %r1, [%r10-48]
mul %r6, 16777619
xor %r6, %r1
ldxdw %r1, [%r10-56]
mul %r6, 16777619
xor %r6, %r1
ldxdw %r1, [%r10-64]
mul %r6, 16777619
xor %r6, %r1
ldxdw %r1, [%r10-72]
mul %r6, 16777619
xor %r6, %r1
ldxdw %r1, [%r10-80]
mul %r6, 16777619
xor %r6, %r1
mov %r9, 0
stxw [%r10-72], %r9
lddw %r1, map[0]
mov %r2, %r10
add %r2, -72
call 1
jeq %r0, 0, +3
ldxdw %r1, [%r0+0]
mul %r6, 31
add %r6, %r1
add %r9, 1
jlt %r9, 8, -12
mov %r0, %r6
exit
