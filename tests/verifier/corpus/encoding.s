# Encodings (checked by core/isa's gbpf_insns_check before any value analysis).
=== call with a destination register
expect: reject @0 invalid encoding
raw: 85 01 00 00 05 00 00 00
raw: b7 00 00 00 00 00 00 00
raw: 95 00 00 00 00 00 00 00

=== exit with an immediate
expect: reject @1 invalid encoding
raw: b7 00 00 00 00 00 00 00
raw: 95 00 00 00 01 00 00 00

=== unknown ALU operation
expect: reject @0 invalid encoding
raw: ff 00 00 00 00 00 00 00
raw: 95 00 00 00 00 00 00 00

=== legacy packet load
expect: reject @0 invalid encoding
raw: 20 00 00 00 00 00 00 00
raw: 95 00 00 00 00 00 00 00

=== jump past the end
expect: reject @0 invalid encoding
raw: 05 00 10 00 00 00 00 00
raw: 95 00 00 00 00 00 00 00

=== wide load without its second slot
expect: reject invalid encoding
raw: b7 00 00 00 00 00 00 00
raw: 95 00 00 00 00 00 00 00
raw: 18 00 00 00 01 00 00 00

=== jump into the second slot of a wide load
expect: reject invalid encoding
raw: 05 00 01 00 00 00 00 00
raw: 18 00 00 00 01 00 00 00
raw: 00 00 00 00 00 00 00 00
raw: 95 00 00 00 00 00 00 00

=== kernel function call
expect: reject @0 invalid encoding
raw: 85 20 00 00 01 00 00 00
raw: 95 00 00 00 00 00 00 00

=== wide load of a map file descriptor
expect: reject @0 invalid encoding
raw: 18 11 00 00 01 00 00 00
raw: 00 00 00 00 00 00 00 00
raw: b7 00 00 00 00 00 00 00
raw: 95 00 00 00 00 00 00 00

=== move with an offset
expect: reject @0 invalid encoding
raw: b7 00 01 00 00 00 00 00
raw: 95 00 00 00 00 00 00 00

=== register 11
expect: reject @0 invalid encoding
raw: bf 0b 00 00 00 00 00 00
raw: 95 00 00 00 00 00 00 00

=== 32-bit call opcode
expect: reject @0 invalid encoding
raw: 86 00 00 00 05 00 00 00
raw: 95 00 00 00 00 00 00 00

=== last instruction falls through
expect: reject invalid encoding
raw: b7 00 00 00 00 00 00 00

=== conditional jump with a source in an immediate form
expect: reject @1 invalid encoding
raw: b7 00 00 00 00 00 00 00
raw: 15 10 00 00 00 00 00 00
raw: 95 00 00 00 00 00 00 00
