// Every pg_uop op: the custom form prints as written (normalized), survives
// custom -> generic -> custom, and the generic form survives generic -> generic.
// RUN: opt-tool %s | %roundtrip | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: pg_uop.kernel @k0(
// CHECK-NEXT:  %i = pg_uop.range 0 to 4 global
// CHECK-NEXT:  %acc = pg_uop.acc 0.0 : f32
// CHECK-NEXT:  %j = pg_uop.range 0 to 8 reduce
// CHECK-NEXT:  %c8 = pg_uop.const 8 : index
// CHECK-NEXT:  %o = pg_uop.binary mul %i, %c8 : index
// CHECK-NEXT:  %idx = pg_uop.binary add %o, %j : index
// CHECK-NEXT:  %v = pg_uop.load %a[%idx] : !pg.buffer<32xf32> -> f32
// CHECK-NEXT:  %old = pg_uop.acc_load %acc : f32
// CHECK-NEXT:  %new = pg_uop.binary add %old, %v : f32
// CHECK-NEXT:  pg_uop.acc_store %acc, %new : f32
// CHECK-NEXT:  pg_uop.end %j
// CHECK-NEXT:  %r = pg_uop.acc_load %acc : f32
// CHECK-NEXT:  pg_uop.store %r, %out[%i] : f32, !pg.buffer<4xf32>
// CHECK-NEXT:  pg_uop.end %i
// CHECK-NEXT:  }
// GENERIC-LABEL: sym_name = "k0"
// GENERIC-NEXT: ^bb0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>):
// GENERIC-NEXT: %i = "pg_uop.range"() <{start = #builtin.int<0>, end = #builtin.int<4>, kind = #pg<range global>}> : () -> index
// GENERIC-NEXT: %acc = "pg_uop.acc"() <{init = 0.000000e+00 : f32}> : () -> !pg_uop.acc<f32>
// GENERIC-NEXT: %j = "pg_uop.range"() <{start = #builtin.int<0>, end = #builtin.int<8>, kind = #pg<range reduce>}> : () -> index
// GENERIC-NEXT: %c8 = "pg_uop.const"() <{value = 8 : index}> : () -> index
// GENERIC-NEXT: %o = "pg_uop.binary"(%i, %c8) <{kind = #pg<binary mul>}> : (index, index) -> index
// GENERIC-NEXT: %idx = "pg_uop.binary"(%o, %j) <{kind = #pg<binary add>}> : (index, index) -> index
// GENERIC-NEXT: %v = "pg_uop.load"(%a, %idx) : (!pg.buffer<32xf32>, index) -> f32
// GENERIC-NEXT: %old = "pg_uop.acc_load"(%acc) : (!pg_uop.acc<f32>) -> f32
// GENERIC-NEXT: %new = "pg_uop.binary"(%old, %v) <{kind = #pg<binary add>}> : (f32, f32) -> f32
// GENERIC-NEXT: "pg_uop.acc_store"(%acc, %new) : (!pg_uop.acc<f32>, f32) -> ()
// GENERIC-NEXT: "pg_uop.end"(%j) : (index) -> ()
// GENERIC-NEXT: %r = "pg_uop.acc_load"(%acc) : (!pg_uop.acc<f32>) -> f32
// GENERIC-NEXT: "pg_uop.store"(%r, %out, %i) : (f32, !pg.buffer<4xf32>, index) -> ()
// GENERIC-NEXT: "pg_uop.end"(%i) : (index) -> ()
// GENERIC-NEXT: }) : () -> ()
pg_uop.kernel @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
  %i = pg_uop.range 0 to 4 global
  %acc = pg_uop.acc 0.0 : f32
  %j = pg_uop.range 0 to 8 reduce
  %c8 = pg_uop.const 8 : index
  %o = pg_uop.binary mul %i, %c8 : index
  %idx = pg_uop.binary add %o, %j : index
  %v = pg_uop.load %a[%idx] : !pg.buffer<32xf32> -> f32
  %old = pg_uop.acc_load %acc : f32
  %new = pg_uop.binary add %old, %v : f32
  pg_uop.acc_store %acc, %new : f32
  pg_uop.end %j
  %r = pg_uop.acc_load %acc : f32
  pg_uop.store %r, %out[%i] : f32, !pg.buffer<4xf32>
  pg_uop.end %i
}

// CHECK-LABEL: pg_uop.kernel @k1(
// CHECK-NEXT:  %g = pg_uop.special group_id 0 size 4
// CHECK-NEXT:  %l = pg_uop.special local_id 1 size 16
// CHECK-NEXT:  %n = pg_uop.special global_id 2 size 64
// CHECK-NEXT:  %c16 = pg_uop.const 16 : index
// CHECK-NEXT:  %base = pg_uop.binary mul %g, %c16 : index
// CHECK-NEXT:  %at = pg_uop.binary add %base, %l : index
// CHECK-NEXT:  %lim = pg_uop.const 60 : index
// CHECK-NEXT:  %ok = pg_uop.cmp lt %at, %lim : index
// CHECK-NEXT:  %x = pg_uop.load %a[%at] if %ok else -inf : !pg.buffer<64xf32> -> f32
// CHECK-NEXT:  %s = pg_uop.unary sqrt %x : f32
// CHECK-NEXT:  %neg = pg_uop.unary neg %s : f32
// CHECK-NEXT:  %half = pg_uop.const 0.5 : f32
// CHECK-NEXT:  %gt = pg_uop.cmp gt %neg, %half : f32
// CHECK-NEXT:  %sel = pg_uop.where %gt, %neg, %half : f32
// CHECK-NEXT:  %k = pg_uop.cast %sel : f32 to i32
// CHECK-NEXT:  %y = pg_uop.load %b[%at] : !pg.buffer<64xi32> -> i32
// CHECK-NEXT:  %z = pg_uop.binary xor %k, %y : i32
// CHECK-NEXT:  %nz = pg_uop.cast %z : i32 to i1
// CHECK-NEXT:  %t = pg_uop.unary not %nz : i1
// CHECK-NEXT:  pg_uop.barrier
// CHECK-NEXT:  %u = pg_uop.range 0 to 2 upcast
// CHECK-NEXT:  %v = pg_uop.range 0 to 2 unroll
// CHECK-NEXT:  %w = pg_uop.range 0 to 1 loop
// CHECK-NEXT:  pg_uop.store %t, %out[%n] : i1, !pg.buffer<64xi1>
// CHECK-NEXT:  pg_uop.end %w
// CHECK-NEXT:  pg_uop.end %v
// CHECK-NEXT:  pg_uop.end %u
// CHECK-NEXT:  }
// GENERIC-LABEL: sym_name = "k1"
// GENERIC-NEXT: ^bb0(%a: !pg.buffer<64xf32>, %b: !pg.buffer<64xi32>, %out: !pg.buffer<64xi1>):
// GENERIC-NEXT: %g = "pg_uop.special"() <{kind = #pg<special group_id>, dim = #builtin.int<0>, size = #builtin.int<4>}> : () -> index
// GENERIC-NEXT: %l = "pg_uop.special"() <{kind = #pg<special local_id>, dim = #builtin.int<1>, size = #builtin.int<16>}> : () -> index
// GENERIC-NEXT: %n = "pg_uop.special"() <{kind = #pg<special global_id>, dim = #builtin.int<2>, size = #builtin.int<64>}> : () -> index
// GENERIC-NEXT: %c16 = "pg_uop.const"() <{value = 16 : index}> : () -> index
// GENERIC-NEXT: %base = "pg_uop.binary"(%g, %c16) <{kind = #pg<binary mul>}> : (index, index) -> index
// GENERIC-NEXT: %at = "pg_uop.binary"(%base, %l) <{kind = #pg<binary add>}> : (index, index) -> index
// GENERIC-NEXT: %lim = "pg_uop.const"() <{value = 60 : index}> : () -> index
// GENERIC-NEXT: %ok = "pg_uop.cmp"(%at, %lim) <{kind = #pg<cmp lt>}> : (index, index) -> i1
// GENERIC-NEXT: %x = "pg_uop.load"(%a, %at, %ok) <{other = 0xff800000 : f32}> : (!pg.buffer<64xf32>, index, i1) -> f32
// GENERIC-NEXT: %s = "pg_uop.unary"(%x) <{kind = #pg<unary sqrt>}> : (f32) -> f32
// GENERIC-NEXT: %neg = "pg_uop.unary"(%s) <{kind = #pg<unary neg>}> : (f32) -> f32
// GENERIC-NEXT: %half = "pg_uop.const"() <{value = 5.000000e-01 : f32}> : () -> f32
// GENERIC-NEXT: %gt = "pg_uop.cmp"(%neg, %half) <{kind = #pg<cmp gt>}> : (f32, f32) -> i1
// GENERIC-NEXT: %sel = "pg_uop.where"(%gt, %neg, %half) : (i1, f32, f32) -> f32
// GENERIC-NEXT: %k = "pg_uop.cast"(%sel) : (f32) -> i32
// GENERIC-NEXT: %y = "pg_uop.load"(%b, %at) : (!pg.buffer<64xi32>, index) -> i32
// GENERIC-NEXT: %z = "pg_uop.binary"(%k, %y) <{kind = #pg<binary xor>}> : (i32, i32) -> i32
// GENERIC-NEXT: %nz = "pg_uop.cast"(%z) : (i32) -> i1
// GENERIC-NEXT: %t = "pg_uop.unary"(%nz) <{kind = #pg<unary not>}> : (i1) -> i1
// GENERIC-NEXT: "pg_uop.barrier"() : () -> ()
// GENERIC-NEXT: %u = "pg_uop.range"() <{start = #builtin.int<0>, end = #builtin.int<2>, kind = #pg<range upcast>}> : () -> index
// GENERIC-NEXT: %v = "pg_uop.range"() <{start = #builtin.int<0>, end = #builtin.int<2>, kind = #pg<range unroll>}> : () -> index
// GENERIC-NEXT: %w = "pg_uop.range"() <{start = #builtin.int<0>, end = #builtin.int<1>, kind = #pg<range loop>}> : () -> index
// GENERIC-NEXT: "pg_uop.store"(%t, %out, %n) : (i1, !pg.buffer<64xi1>, index) -> ()
// GENERIC-NEXT: "pg_uop.end"(%w) : (index) -> ()
// GENERIC-NEXT: "pg_uop.end"(%v) : (index) -> ()
// GENERIC-NEXT: "pg_uop.end"(%u) : (index) -> ()
// GENERIC-NEXT: }) {note = "gpu"} : () -> ()
pg_uop.kernel @k1(%a: !pg.buffer<64xf32>, %b: !pg.buffer<64xi32>, %out: !pg.buffer<64xi1>) attributes {note = "gpu"} {
  %g = pg_uop.special group_id 0 size 4
  %l = pg_uop.special local_id 1 size 16
  %n = pg_uop.special global_id 2 size 64
  %c16 = pg_uop.const 16 : index
  %base = pg_uop.binary mul %g, %c16 : index
  %at = pg_uop.binary add %base, %l : index
  %lim = pg_uop.const 60 : index
  %ok = pg_uop.cmp lt %at, %lim : index
  %x = pg_uop.load %a[%at] if %ok else -inf : !pg.buffer<64xf32> -> f32
  %s = pg_uop.unary sqrt %x : f32
  %neg = pg_uop.unary neg %s : f32
  %half = pg_uop.const 0.5 : f32
  %gt = pg_uop.cmp gt %neg, %half : f32
  %sel = pg_uop.where %gt, %neg, %half : f32
  %k = pg_uop.cast %sel : f32 to i32
  %y = pg_uop.load %b[%at] : !pg.buffer<64xi32> -> i32
  %z = pg_uop.binary xor %k, %y : i32
  %nz = pg_uop.cast %z : i32 to i1
  %t = pg_uop.unary not %nz : i1
  pg_uop.barrier
  %u = pg_uop.range 0 to 2 upcast
  %v = pg_uop.range 0 to 2 unroll
  %w = pg_uop.range 0 to 1 loop
  pg_uop.store %t, %out[%n] : i1, !pg.buffer<64xi1>
  pg_uop.end %w
  pg_uop.end %v
  pg_uop.end %u
}


// Guards, work-group memory and the GPU-native math functions.
// CHECK-LABEL: pg_uop.kernel @k2(
// CHECK-NEXT:  %l = pg_uop.special local_id 0 size 8
// CHECK-NEXT:  %s = pg_uop.shared : !pg.buffer<8xf32>
// CHECK-NEXT:  %x = pg_uop.load %a[%l] : !pg.buffer<8xf32> -> f32
// CHECK-NEXT:  %e = pg_uop.unary exp2 %x : f32
// CHECK-NEXT:  %g = pg_uop.unary log2 %e : f32
// CHECK-NEXT:  pg_uop.store %g, %s[%l] : f32, !pg.buffer<8xf32>
// CHECK-NEXT:  pg_uop.barrier
// CHECK-NEXT:  %c0 = pg_uop.const 0 : index
// CHECK-NEXT:  %first = pg_uop.cmp eq %l, %c0 : index
// CHECK-NEXT:  pg_uop.if %first
// CHECK-NEXT:  %y = pg_uop.load %s[%c0] : !pg.buffer<8xf32> -> f32
// CHECK-NEXT:  pg_uop.store %y, %a[%c0] : f32, !pg.buffer<8xf32>
// CHECK-NEXT:  pg_uop.endif
// CHECK-NEXT:  }
// GENERIC-LABEL: "pg_uop.kernel"() <{sym_name = "k2"}>
// GENERIC:      %s = "pg_uop.shared"() : () -> !pg.buffer<8xf32>
// GENERIC:      %e = "pg_uop.unary"(%x) <{kind = #pg<unary exp2>}> : (f32) -> f32
// GENERIC:      "pg_uop.if"(%first) : (i1) -> ()
// GENERIC:      "pg_uop.endif"() : () -> ()
pg_uop.kernel @k2(%a: !pg.buffer<8xf32>) {
  %l = pg_uop.special local_id 0 size 8
  %s = pg_uop.shared : !pg.buffer<8xf32>
  %x = pg_uop.load %a[%l] : !pg.buffer<8xf32> -> f32
  %e = pg_uop.unary exp2 %x : f32
  %g = pg_uop.unary log2 %e : f32
  pg_uop.store %g, %s[%l] : f32, !pg.buffer<8xf32>
  pg_uop.barrier
  %c0 = pg_uop.const 0 : index
  %first = pg_uop.cmp eq %l, %c0 : index
  pg_uop.if %first
  %y = pg_uop.load %s[%c0] : !pg.buffer<8xf32> -> f32
  pg_uop.store %y, %a[%c0] : f32, !pg.buffer<8xf32>
  pg_uop.endif
}
