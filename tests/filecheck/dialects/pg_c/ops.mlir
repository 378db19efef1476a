// Every pg_c op: the custom form prints as written, survives custom -> generic -> custom,
// and the generic form survives generic -> generic.
// RUN: opt-tool %s | %roundtrip | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: pg_c.func @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) restrict {
// CHECK-NEXT:    %i = pg_c.for 0 to 4
// CHECK-NEXT:    %acc = pg_c.decl -inf : f32
// CHECK-NEXT:    %j = pg_c.for 0 to 8
// CHECK-NEXT:    %c8 = pg_c.const 8 : index
// CHECK-NEXT:    %o = pg_c.binary "*" %i, %c8 : index
// CHECK-NEXT:    %idx = pg_c.binary "+" %o, %j : index
// CHECK-NEXT:    %m = pg_c.cmp "<" %idx, %c8 : index
// CHECK-NEXT:    %v = pg_c.load %a[%idx] : !pg.buffer<32xf32> -> f32
// CHECK-NEXT:    %w = pg_c.load %a[%idx] if %m else 0.5 : !pg.buffer<32xf32> -> f32
// CHECK-NEXT:    %e = pg_c.call "expf"(%w) : f32
// CHECK-NEXT:    %n = pg_c.unary "-" %e : f32
// CHECK-NEXT:    %s = pg_c.select %m, %n, %v : f32
// CHECK-NEXT:    %old = pg_c.read %acc : f32
// CHECK-NEXT:    %new = pg_c.binary "max" %old, %s : f32
// CHECK-NEXT:    pg_c.assign %acc, %new : f32
// CHECK-NEXT:    pg_c.end_for %j
// CHECK-NEXT:    %r = pg_c.read %acc : f32
// CHECK-NEXT:    %ri = pg_c.cast %r : f32 to i32
// CHECK-NEXT:    %nb = pg_c.unary "~" %ri : i32
// CHECK-NEXT:    %rf = pg_c.cast %nb : i32 to f32
// CHECK-NEXT:    pg_c.store %rf, %out[%i] : f32, !pg.buffer<4xf32>
// CHECK-NEXT:    pg_c.end_for %i
// CHECK-NEXT:  }
// CHECK-NEXT:  pg_c.func @bools(%b: !pg.buffer<4xi1>) {
// CHECK-NEXT:    %t = pg_c.const {{-?1}} : i1
// CHECK-NEXT:    %i = pg_c.for 0 to 4
// CHECK-NEXT:    %x = pg_c.load %b[%i] : !pg.buffer<4xi1> -> i1
// CHECK-NEXT:    %y = pg_c.binary "^" %x, %t : i1
// CHECK-NEXT:    %z = pg_c.unary "!" %y : i1
// CHECK-NEXT:    pg_c.store %z, %b[%i] : i1, !pg.buffer<4xi1>
// CHECK-NEXT:    pg_c.end_for %i
// CHECK-NEXT:  }
// CHECK-NEXT:  pg_c.func @empty(%a: !pg.buffer<4xf64>) {
// CHECK-NEXT:  }

// GENERIC:      "pg_c.func"() <{sym_name = "k0", restrict}> ({
// GENERIC:        %acc = "pg_c.decl"() <{init = 0xff800000 : f32}> : () -> !pg_c.var<f32>
// GENERIC:        %o = "pg_c.binary"(%i, %c8) <{operator = "*"}> : (index, index) -> index
// GENERIC:        %e = "pg_c.call"(%w) <{callee = "expf"}> : (f32) -> f32
// GENERIC:        "pg_c.end_for"(%i) : (index) -> ()
// GENERIC:      "pg_c.func"() <{sym_name = "empty"}> ({
// GENERIC-NEXT:   ^bb0(%a: !pg.buffer<4xf64>):
// GENERIC-NEXT:   }) : () -> ()

pg_c.func @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) restrict {
  %i = pg_c.for 0 to 4
  %acc = pg_c.decl -inf : f32
  %j = pg_c.for 0 to 8
  %c8 = pg_c.const 8 : index
  %o = pg_c.binary "*" %i, %c8 : index
  %idx = pg_c.binary "+" %o, %j : index
  %m = pg_c.cmp "<" %idx, %c8 : index
  %v = pg_c.load %a[%idx] : !pg.buffer<32xf32> -> f32
  %w = pg_c.load %a[%idx] if %m else 0.5 : !pg.buffer<32xf32> -> f32
  %e = pg_c.call "expf"(%w) : f32
  %n = pg_c.unary "-" %e : f32
  %s = pg_c.select %m, %n, %v : f32
  %old = pg_c.read %acc : f32
  %new = pg_c.binary "max" %old, %s : f32
  pg_c.assign %acc, %new : f32
  pg_c.end_for %j
  %r = pg_c.read %acc : f32
  %ri = pg_c.cast %r : f32 to i32
  %nb = pg_c.unary "~" %ri : i32
  %rf = pg_c.cast %nb : i32 to f32
  pg_c.store %rf, %out[%i] : f32, !pg.buffer<4xf32>
  pg_c.end_for %i
}
pg_c.func @bools(%b: !pg.buffer<4xi1>) {
  %t = pg_c.const 1 : i1
  %i = pg_c.for 0 to 4
  %x = pg_c.load %b[%i] : !pg.buffer<4xi1> -> i1
  %y = pg_c.binary "^" %x, %t : i1
  %z = pg_c.unary "!" %y : i1
  pg_c.store %z, %b[%i] : i1, !pg.buffer<4xi1>
  pg_c.end_for %i
}
pg_c.func @empty(%a: !pg.buffer<4xf64>) {
}
