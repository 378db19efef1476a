// Every pg_wgsl op: the custom form prints as written, survives custom -> generic -> custom,
// and the generic form survives generic -> generic.
// RUN: opt-tool %s | %roundtrip | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: pg_wgsl.fn @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>, %b: !pg.buffer<4xi1>) grid [4, 1, 1] block [2, 1, 1] {
// CHECK-NEXT:    %g = pg_wgsl.builtin workgroup_id 0
// CHECK-NEXT:    %l = pg_wgsl.builtin local_invocation_id 0
// CHECK-NEXT:    %s = pg_wgsl.workgroup : !pg.buffer<2xf32>
// CHECK-NEXT:    %acc = pg_wgsl.var -inf : f32
// CHECK-NEXT:    %j = pg_wgsl.for 0 to 8
// CHECK-NEXT:    %c8 = pg_wgsl.const 8 : i32
// CHECK-NEXT:    %o = pg_wgsl.binary "*" %g, %c8 : i32
// CHECK-NEXT:    %idx = pg_wgsl.binary "+" %o, %j : i32
// CHECK-NEXT:    %m = pg_wgsl.cmp "<" %idx, %c8 : i32
// CHECK-NEXT:    %v = pg_wgsl.load %a[%idx] : !pg.buffer<32xf32> -> f32
// CHECK-NEXT:    %w = pg_wgsl.load %a[%idx] if %m else 0.5 : !pg.buffer<32xf32> -> f32
// CHECK-NEXT:    %e = pg_wgsl.call "exp"(%w) : f32
// CHECK-NEXT:    %n = pg_wgsl.unary "-" %e : f32
// CHECK-NEXT:    %sel = pg_wgsl.select %m, %n, %v : f32
// CHECK-NEXT:    %old = pg_wgsl.read %acc : f32
// CHECK-NEXT:    %new = pg_wgsl.binary "max" %old, %sel : f32
// CHECK-NEXT:    pg_wgsl.assign %acc, %new : f32
// CHECK-NEXT:    pg_wgsl.end_for %j
// CHECK-NEXT:    %r = pg_wgsl.read %acc : f32
// CHECK-NEXT:    pg_wgsl.store %r, %s[%l] : f32, !pg.buffer<2xf32>
// CHECK-NEXT:    pg_wgsl.workgroup_barrier
// CHECK-NEXT:    %z = pg_wgsl.const 0 : i32
// CHECK-NEXT:    %first = pg_wgsl.cmp "==" %l, %z : i32
// CHECK-NEXT:    pg_wgsl.if %first
// CHECK-NEXT:    %x = pg_wgsl.load %s[%z] : !pg.buffer<2xf32> -> f32
// CHECK-NEXT:    pg_wgsl.store %x, %out[%g] : f32, !pg.buffer<4xf32>
// CHECK-NEXT:    %bi = pg_wgsl.cast %x : f32 to i1
// CHECK-NEXT:    %nb = pg_wgsl.unary "!" %bi : i1
// CHECK-NEXT:    %t = pg_wgsl.const {{-?1}} : i1
// CHECK-NEXT:    %both = pg_wgsl.binary "&" %nb, %t : i1
// CHECK-NEXT:    pg_wgsl.store %both, %b[%g] : i1, !pg.buffer<4xi1>
// CHECK-NEXT:    pg_wgsl.end_if
// CHECK-NEXT:  }
// CHECK-NEXT:  pg_wgsl.fn @ints(%a: !pg.buffer<4xi32>) grid [1, 1, 1] block [4, 1, 1] {
// CHECK-NEXT:    %i = pg_wgsl.builtin local_invocation_id 0
// CHECK-NEXT:    %x = pg_wgsl.load %a[%i] : !pg.buffer<4xi32> -> i32
// CHECK-NEXT:    %q = pg_wgsl.binary "/" %x, %i : i32
// CHECK-NEXT:    %r = pg_wgsl.binary "%" %q, %i : i32
// CHECK-NEXT:    %y = pg_wgsl.unary "~" %r : i32
// CHECK-NEXT:    %f = pg_wgsl.cast %y : i32 to f32
// CHECK-NEXT:    %e = pg_wgsl.call "log2"(%f) : f32
// CHECK-NEXT:    %k = pg_wgsl.cast %e : f32 to i32
// CHECK-NEXT:    pg_wgsl.store %k, %a[%i] : i32, !pg.buffer<4xi32>
// CHECK-NEXT:  }
// CHECK-NEXT:  pg_wgsl.fn @empty(%a: !pg.buffer<4xi32>) grid [1, 1, 1] block [1, 1, 1] {
// CHECK-NEXT:  }

// GENERIC:      "pg_wgsl.fn"() <{sym_name = "k0", grid = array<i64: 4, 1, 1>, block = array<i64: 2, 1, 1>}> ({
// GENERIC:        %g = "pg_wgsl.builtin"() <{kind = "workgroup_id", dim = #builtin.int<0>}> : () -> i32
// GENERIC:        %s = "pg_wgsl.workgroup"() : () -> !pg.buffer<2xf32>
// GENERIC:        %acc = "pg_wgsl.var"() <{init = 0xff800000 : f32}> : () -> !pg_wgsl.var<f32>
// GENERIC:        %j = "pg_wgsl.for"() <{start = #builtin.int<0>, end = #builtin.int<8>}> : () -> i32
// GENERIC:        %o = "pg_wgsl.binary"(%g, %c8) <{operator = "*"}> : (i32, i32) -> i32
// GENERIC:        %w = "pg_wgsl.load"(%a, %idx, %m) <{other = 5.000000e-01 : f32}> : (!pg.buffer<32xf32>, i32, i1) -> f32
// GENERIC:        %e = "pg_wgsl.call"(%w) <{callee = "exp"}> : (f32) -> f32
// GENERIC:        "pg_wgsl.end_for"(%j) : (i32) -> ()
// GENERIC:        "pg_wgsl.workgroup_barrier"() : () -> ()
// GENERIC:        "pg_wgsl.if"(%first) : (i1) -> ()
// GENERIC:        "pg_wgsl.end_if"() : () -> ()
// GENERIC:      "pg_wgsl.fn"() <{sym_name = "empty", grid = array<i64: 1, 1, 1>, block = array<i64: 1, 1, 1>}> ({
// GENERIC-NEXT:   ^bb0(%a: !pg.buffer<4xi32>):
// GENERIC-NEXT:   }) : () -> ()

pg_wgsl.fn @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>, %b: !pg.buffer<4xi1>) grid [4, 1, 1] block [2, 1, 1] {
  %g = pg_wgsl.builtin workgroup_id 0
  %l = pg_wgsl.builtin local_invocation_id 0
  %s = pg_wgsl.workgroup : !pg.buffer<2xf32>
  %acc = pg_wgsl.var -inf : f32
  %j = pg_wgsl.for 0 to 8
  %c8 = pg_wgsl.const 8 : i32
  %o = pg_wgsl.binary "*" %g, %c8 : i32
  %idx = pg_wgsl.binary "+" %o, %j : i32
  %m = pg_wgsl.cmp "<" %idx, %c8 : i32
  %v = pg_wgsl.load %a[%idx] : !pg.buffer<32xf32> -> f32
  %w = pg_wgsl.load %a[%idx] if %m else 0.5 : !pg.buffer<32xf32> -> f32
  %e = pg_wgsl.call "exp"(%w) : f32
  %n = pg_wgsl.unary "-" %e : f32
  %sel = pg_wgsl.select %m, %n, %v : f32
  %old = pg_wgsl.read %acc : f32
  %new = pg_wgsl.binary "max" %old, %sel : f32
  pg_wgsl.assign %acc, %new : f32
  pg_wgsl.end_for %j
  %r = pg_wgsl.read %acc : f32
  pg_wgsl.store %r, %s[%l] : f32, !pg.buffer<2xf32>
  pg_wgsl.workgroup_barrier
  %z = pg_wgsl.const 0 : i32
  %first = pg_wgsl.cmp "==" %l, %z : i32
  pg_wgsl.if %first
  %x = pg_wgsl.load %s[%z] : !pg.buffer<2xf32> -> f32
  pg_wgsl.store %x, %out[%g] : f32, !pg.buffer<4xf32>
  %bi = pg_wgsl.cast %x : f32 to i1
  %nb = pg_wgsl.unary "!" %bi : i1
  %t = pg_wgsl.const 1 : i1
  %both = pg_wgsl.binary "&" %nb, %t : i1
  pg_wgsl.store %both, %b[%g] : i1, !pg.buffer<4xi1>
  pg_wgsl.end_if
}
pg_wgsl.fn @ints(%a: !pg.buffer<4xi32>) grid [1, 1, 1] block [4, 1, 1] {
  %i = pg_wgsl.builtin local_invocation_id 0
  %x = pg_wgsl.load %a[%i] : !pg.buffer<4xi32> -> i32
  %q = pg_wgsl.binary "/" %x, %i : i32
  %r = pg_wgsl.binary "%" %q, %i : i32
  %y = pg_wgsl.unary "~" %r : i32
  %f = pg_wgsl.cast %y : i32 to f32
  %e = pg_wgsl.call "log2"(%f) : f32
  %k = pg_wgsl.cast %e : f32 to i32
  pg_wgsl.store %k, %a[%i] : i32, !pg.buffer<4xi32>
}
pg_wgsl.fn @empty(%a: !pg.buffer<4xi32>) grid [1, 1, 1] block [1, 1, 1] {
}

// Emulated types (held in f32 / i32): loads, stores, constants, variables, comparisons,
// selects and casts, but no arithmetic.
// CHECK-LABEL: pg_wgsl.fn @emulated(%h: !pg.buffer<4xf16>, %b: !pg.buffer<4xi8>, %u: !pg.buffer<4xui8>) grid [1, 1, 1] block [4, 1, 1] {
// CHECK-NEXT:    %l = pg_wgsl.builtin local_invocation_id 0
// CHECK-NEXT:    %x = pg_wgsl.load %h[%l] : !pg.buffer<4xf16> -> f16
// CHECK-NEXT:    %w = pg_wgsl.cast %x : f16 to f32
// CHECK-NEXT:    %r = pg_wgsl.cast %w : f32 to f16
// CHECK-NEXT:    %c = pg_wgsl.cmp "<" %r, %x : f16
// CHECK-NEXT:    %k = pg_wgsl.const -3 : i8
// CHECK-NEXT:    %acc = pg_wgsl.var 0 : i8
// CHECK-NEXT:    %v = pg_wgsl.load %b[%l] if %c else 7 : !pg.buffer<4xi8> -> i8
// CHECK-NEXT:    %s = pg_wgsl.select %c, %v, %k : i8
// CHECK-NEXT:    pg_wgsl.assign %acc, %s : i8
// CHECK-NEXT:    %t = pg_wgsl.read %acc : i8
// CHECK-NEXT:    %n = pg_wgsl.cast %t : i8 to ui8
// CHECK-NEXT:    pg_wgsl.store %n, %u[%l] : ui8, !pg.buffer<4xui8>
// CHECK-NEXT:    pg_wgsl.store %r, %h[%l] : f16, !pg.buffer<4xf16>
// CHECK-NEXT:  }
// GENERIC-LABEL: "pg_wgsl.fn"() <{sym_name = "emulated"
// GENERIC:         "pg_wgsl.cast"(%{{.*}}) : (f32) -> f16
pg_wgsl.fn @emulated(%h: !pg.buffer<4xf16>, %b: !pg.buffer<4xi8>, %u: !pg.buffer<4xui8>)
    grid [1, 1, 1] block [4, 1, 1] {
  %l = pg_wgsl.builtin local_invocation_id 0
  %x = pg_wgsl.load %h[%l] : !pg.buffer<4xf16> -> f16
  %w = pg_wgsl.cast %x : f16 to f32
  %r = pg_wgsl.cast %w : f32 to f16
  %c = pg_wgsl.cmp "<" %r, %x : f16
  %k = pg_wgsl.const -3 : i8
  %acc = pg_wgsl.var 0 : i8
  %v = pg_wgsl.load %b[%l] if %c else 7 : !pg.buffer<4xi8> -> i8
  %s = pg_wgsl.select %c, %v, %k : i8
  pg_wgsl.assign %acc, %s : i8
  %t = pg_wgsl.read %acc : i8
  %n = pg_wgsl.cast %t : i8 to ui8
  pg_wgsl.store %n, %u[%l] : ui8, !pg.buffer<4xui8>
  pg_wgsl.store %r, %h[%l] : f16, !pg.buffer<4xf16>
}
