// Every pg_loop op: the custom form prints as written (normalized), survives
// custom -> generic -> custom, and the generic form survives generic -> generic.
// RUN: opt-tool %s | %roundtrip | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: pg_loop.kernel @k0(
// CHECK-NEXT:  pg_loop.range %i = 0 to 4 global {
// CHECK-NEXT:  %s = pg_loop.reduce sum %j = 0 to 8 : f32 {
// CHECK-NEXT:  %c8 = pg_loop.const 8
// CHECK-NEXT:  %o = pg_loop.index mul %i, %c8
// CHECK-NEXT:  %idx = pg_loop.index add %o, %j
// CHECK-NEXT:  %v = pg_loop.load %a[%idx] : !pg.buffer<32xf32> -> f32
// CHECK-NEXT:  pg_loop.yield %v : f32
// CHECK-NEXT:  }
// CHECK-NEXT:  pg_loop.store %s, %out[%i] : f32, !pg.buffer<4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// GENERIC-LABEL: sym_name = "k0"
// GENERIC-NEXT: ^bb0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>):
// GENERIC-NEXT: "pg_loop.range"() <{start = #builtin.int<0>, end = #builtin.int<4>, kind = #pg<range global>}> ({
// GENERIC-NEXT: ^bb0(%i: index):
// GENERIC-NEXT: %s = "pg_loop.reduce"() <{kind = #pg<reduce sum>, start = #builtin.int<0>, end = #builtin.int<8>, range_kind = #pg<range reduce>}> ({
// GENERIC-NEXT: ^bb0(%j: index):
// GENERIC-NEXT: %c8 = "pg_loop.const"() <{value = #builtin.int<8>}> : () -> index
// GENERIC-NEXT: %o = "pg_loop.index"(%i, %c8) <{kind = #pg<binary mul>}> : (index, index) -> index
// GENERIC-NEXT: %idx = "pg_loop.index"(%o, %j) <{kind = #pg<binary add>}> : (index, index) -> index
// GENERIC-NEXT: %v = "pg_loop.load"(%a, %idx) : (!pg.buffer<32xf32>, index) -> f32
// GENERIC-NEXT: "pg_loop.yield"(%v) : (f32) -> ()
// GENERIC-NEXT: }) : () -> f32
// GENERIC-NEXT: "pg_loop.store"(%s, %out, %i) : (f32, !pg.buffer<4xf32>, index) -> ()
// GENERIC-NEXT: }) : () -> ()
// GENERIC-NEXT: }) : () -> ()
pg_loop.kernel @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
    %s = pg_loop.reduce sum %j = 0 to 8 : f32 {
      %c8 = pg_loop.const 8
      %o = pg_loop.index mul %i, %c8
      %idx = pg_loop.index add %o, %j
      %v = pg_loop.load %a[%idx] : !pg.buffer<32xf32> -> f32
      pg_loop.yield %v : f32
    }
    pg_loop.store %s, %out[%i] : f32, !pg.buffer<4xf32>
  }
}

// CHECK-LABEL: pg_loop.kernel @k1(
// CHECK-NEXT:  pg_loop.range %i = 0 to 5 local {
// CHECK-NEXT:  pg_loop.range %j = 0 to 2 upcast {
// CHECK-NEXT:  pg_loop.range %k = 1 to 5 unroll attributes {hint = 1 : i64} {
// CHECK-NEXT:  pg_loop.range %l = 0 to 0 loop {
// CHECK-NEXT:  }
// CHECK-NEXT:  %m = pg_loop.reduce max %r = 0 to 3 as unroll : i32 {
// CHECK-NEXT:  %c1 = pg_loop.const 1
// CHECK-NEXT:  %c4 = pg_loop.const 4
// CHECK-NEXT:  %q = pg_loop.index div %k, %c4
// CHECK-NEXT:  %rem = pg_loop.index mod %k, %c4
// CHECK-NEXT:  %d = pg_loop.index sub %q, %rem
// CHECK-NEXT:  %hi = pg_loop.index max %d, %c1
// CHECK-NEXT:  %lo = pg_loop.index min %hi, %r
// CHECK-NEXT:  %in0 = pg_loop.cmp ge %i, %c1
// CHECK-NEXT:  %in1 = pg_loop.cmp lt %lo, %c4
// CHECK-NEXT:  %in = pg_loop.and %in0, %in1
// CHECK-NEXT:  %v = pg_loop.load %a[%lo] if %in else -3 : !pg.buffer<32xi32> -> i32
// CHECK-NEXT:  %w = pg_uop.binary add %v, %v : i32
// CHECK-NEXT:  pg_loop.yield %w : i32
// CHECK-NEXT:  }
// CHECK-NEXT:  %c8 = pg_loop.const 8
// CHECK-NEXT:  %row = pg_loop.index mul %i, %c8
// CHECK-NEXT:  %at = pg_loop.index add %row, %k
// CHECK-NEXT:  pg_loop.store %m, %out[%at] : i32, !pg.buffer<40xi32>
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// GENERIC-LABEL: sym_name = "k1"
// GENERIC-NEXT: ^bb0(%a: !pg.buffer<32xi32>, %out: !pg.buffer<40xi32>):
// GENERIC-NEXT: "pg_loop.range"() <{start = #builtin.int<0>, end = #builtin.int<5>, kind = #pg<range local>}> ({
// GENERIC-NEXT: ^bb0(%i: index):
// GENERIC-NEXT: "pg_loop.range"() <{start = #builtin.int<0>, end = #builtin.int<2>, kind = #pg<range upcast>}> ({
// GENERIC-NEXT: ^bb0(%j: index):
// GENERIC-NEXT: "pg_loop.range"() <{start = #builtin.int<1>, end = #builtin.int<5>, kind = #pg<range unroll>}> ({
// GENERIC-NEXT: ^bb0(%k: index):
// GENERIC-NEXT: "pg_loop.range"() <{start = #builtin.int<0>, end = #builtin.int<0>, kind = #pg<range loop>}> ({
// GENERIC-NEXT: ^bb0(%l: index):
// GENERIC-NEXT: }) : () -> ()
// GENERIC-NEXT: %m = "pg_loop.reduce"() <{kind = #pg<reduce max>, start = #builtin.int<0>, end = #builtin.int<3>, range_kind = #pg<range unroll>}> ({
// GENERIC-NEXT: ^bb0(%r: index):
// GENERIC-NEXT: %c1 = "pg_loop.const"() <{value = #builtin.int<1>}> : () -> index
// GENERIC-NEXT: %c4 = "pg_loop.const"() <{value = #builtin.int<4>}> : () -> index
// GENERIC-NEXT: %q = "pg_loop.index"(%k, %c4) <{kind = #pg<binary div>}> : (index, index) -> index
// GENERIC-NEXT: %rem = "pg_loop.index"(%k, %c4) <{kind = #pg<binary mod>}> : (index, index) -> index
// GENERIC-NEXT: %d = "pg_loop.index"(%q, %rem) <{kind = #pg<binary sub>}> : (index, index) -> index
// GENERIC-NEXT: %hi = "pg_loop.index"(%d, %c1) <{kind = #pg<binary max>}> : (index, index) -> index
// GENERIC-NEXT: %lo = "pg_loop.index"(%hi, %r) <{kind = #pg<binary min>}> : (index, index) -> index
// GENERIC-NEXT: %in0 = "pg_loop.cmp"(%i, %c1) <{kind = #pg<cmp ge>}> : (index, index) -> i1
// GENERIC-NEXT: %in1 = "pg_loop.cmp"(%lo, %c4) <{kind = #pg<cmp lt>}> : (index, index) -> i1
// GENERIC-NEXT: %in = "pg_loop.and"(%in0, %in1) : (i1, i1) -> i1
// GENERIC-NEXT: %v = "pg_loop.load"(%a, %lo, %in) <{other = -3 : i32}> : (!pg.buffer<32xi32>, index, i1) -> i32
// GENERIC-NEXT: %w = "pg_uop.binary"(%v, %v) <{kind = #pg<binary add>}> : (i32, i32) -> i32
// GENERIC-NEXT: "pg_loop.yield"(%w) : (i32) -> ()
// GENERIC-NEXT: }) : () -> i32
// GENERIC-NEXT: %c8 = "pg_loop.const"() <{value = #builtin.int<8>}> : () -> index
// GENERIC-NEXT: %row = "pg_loop.index"(%i, %c8) <{kind = #pg<binary mul>}> : (index, index) -> index
// GENERIC-NEXT: %at = "pg_loop.index"(%row, %k) <{kind = #pg<binary add>}> : (index, index) -> index
// GENERIC-NEXT: "pg_loop.store"(%m, %out, %at) : (i32, !pg.buffer<40xi32>, index) -> ()
// GENERIC-NEXT: }) {hint = 1 : i64} : () -> ()
// GENERIC-NEXT: }) : () -> ()
// GENERIC-NEXT: }) : () -> ()
// GENERIC-NEXT: }) {note = "every kind"} : () -> ()
pg_loop.kernel @k1(%a: !pg.buffer<32xi32>, %out: !pg.buffer<40xi32>) attributes {note = "every kind"} {
  pg_loop.range %i = 0 to 5 local {
    pg_loop.range %j = 0 to 2 upcast {
      pg_loop.range %k = 1 to 5 unroll attributes {hint = 1 : i64} {
        pg_loop.range %l = 0 to 0 loop {
        }
        %m = pg_loop.reduce max %r = 0 to 3 as unroll : i32 {
          %c1 = pg_loop.const 1
          %c4 = pg_loop.const 4
          %q = pg_loop.index div %k, %c4
          %rem = pg_loop.index mod %k, %c4
          %d = pg_loop.index sub %q, %rem
          %hi = pg_loop.index max %d, %c1
          %lo = pg_loop.index min %hi, %r
          %in0 = pg_loop.cmp ge %i, %c1
          %in1 = pg_loop.cmp lt %lo, %c4
          %in = pg_loop.and %in0, %in1
          %v = pg_loop.load %a[%lo] if %in else -3 : !pg.buffer<32xi32> -> i32
          %w = pg_uop.binary add %v, %v : i32
          pg_loop.yield %w : i32
        }
        %c8 = pg_loop.const 8
        %row = pg_loop.index mul %i, %c8
        %at = pg_loop.index add %row, %k
        pg_loop.store %m, %out[%at] : i32, !pg.buffer<40xi32>
      }
    }
  }
}

