// convert-loop-to-uop: nested pg_loop regions become one flat pg_uop block. A range becomes
// `pg_uop.range` ... `pg_uop.end`; a reduce becomes an accumulator (`pg_uop.acc` at the
// kind's identity) updated by acc_load / combine / acc_store in a `reduce` range and read
// after its end; index ops become pg_uop ops on `index`; masked loads keep their mask and
// other value. With hoisting (the default) loop-invariant pure ops move before the loop
// they do not depend on; with hoist=false every op stays where it was.
// RUN: opt-tool %s --split-input-file -p convert-loop-to-uop | filecheck %s
// RUN: opt-tool %s --split-input-file -p 'convert-loop-to-uop{hoist=false}' | filecheck %s --check-prefix=NOHOIST

// CHECK-LABEL: pg_uop.kernel @sum_rows(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
// CHECK-NEXT:    %c8 = pg_uop.const 8 : index
// CHECK-NEXT:    %i = pg_uop.range 0 to 4 global
// CHECK-NEXT:    %[[ACC:.*]] = pg_uop.acc 0.0 : f32
// CHECK-NEXT:    %o = pg_uop.binary mul %i, %c8 : index
// CHECK-NEXT:    %j = pg_uop.range 0 to 8 reduce
// CHECK-NEXT:    %idx = pg_uop.binary add %o, %j : index
// CHECK-NEXT:    %v = pg_uop.load %a[%idx] : !pg.buffer<32xf32> -> f32
// CHECK-NEXT:    %[[OLD:.*]] = pg_uop.acc_load %[[ACC]] : f32
// CHECK-NEXT:    %[[NEW:.*]] = pg_uop.binary add %[[OLD]], %v : f32
// CHECK-NEXT:    pg_uop.acc_store %[[ACC]], %[[NEW]] : f32
// CHECK-NEXT:    pg_uop.end %j
// CHECK-NEXT:    %s = pg_uop.acc_load %[[ACC]] : f32
// CHECK-NEXT:    pg_uop.store %s, %out[%i] : f32, !pg.buffer<4xf32>
// CHECK-NEXT:    pg_uop.end %i
// CHECK-NEXT:  }

// NOHOIST-LABEL: pg_uop.kernel @sum_rows(
// NOHOIST-NEXT:    %i = pg_uop.range 0 to 4 global
// NOHOIST-NEXT:    %[[ACC:.*]] = pg_uop.acc 0.0 : f32
// NOHOIST-NEXT:    %j = pg_uop.range 0 to 8 reduce
// NOHOIST-NEXT:    %c8 = pg_uop.const 8 : index
// NOHOIST-NEXT:    %o = pg_uop.binary mul %i, %c8 : index
// NOHOIST-NEXT:    %idx = pg_uop.binary add %o, %j : index
pg_loop.kernel @sum_rows(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
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

// -----
// Accumulator identities: max on floats starts at -inf, min on i32 at the largest i32, and
// sum on bools starts at false and combines with `or`; prod on bools combines with `and`.
// CHECK-LABEL: pg_uop.kernel @identities(
// CHECK:         %[[M:.*]] = pg_uop.acc -inf : f32
// CHECK-NEXT:    %j = pg_uop.range 0 to 8 reduce
// CHECK:         pg_uop.binary max %{{.*}}, %{{.*}} : f32
// CHECK:         %[[N:.*]] = pg_uop.acc 2147483647 : i32
// CHECK-NEXT:    %[[J1:.*]] = pg_uop.range 0 to 8 reduce
// CHECK:         pg_uop.binary min %{{.*}}, %{{.*}} : i32
// CHECK:         %[[S:.*]] = pg_uop.acc 0 : i1
// CHECK:         pg_uop.binary or %{{.*}}, %{{.*}} : i1
// CHECK:         %[[P:.*]] = pg_uop.acc 1 : i1
// CHECK:         pg_uop.binary and %{{.*}}, %{{.*}} : i1
pg_loop.kernel @identities(%a: !pg.buffer<8xf32>, %b: !pg.buffer<8xi32>, %c: !pg.buffer<8xi1>,
                           %o1: !pg.buffer<1xf32>, %o2: !pg.buffer<1xi32>, %o3: !pg.buffer<2xi1>) {
  %z = pg_loop.const 0
  %one = pg_loop.const 1
  %m = pg_loop.reduce max %j = 0 to 8 : f32 {
    %v = pg_loop.load %a[%j] : !pg.buffer<8xf32> -> f32
    pg_loop.yield %v : f32
  }
  pg_loop.store %m, %o1[%z] : f32, !pg.buffer<1xf32>
  %n = pg_loop.reduce min %j = 0 to 8 : i32 {
    %v = pg_loop.load %b[%j] : !pg.buffer<8xi32> -> i32
    pg_loop.yield %v : i32
  }
  pg_loop.store %n, %o2[%z] : i32, !pg.buffer<1xi32>
  %s = pg_loop.reduce sum %j = 0 to 8 : i1 {
    %v = pg_loop.load %c[%j] : !pg.buffer<8xi1> -> i1
    pg_loop.yield %v : i1
  }
  pg_loop.store %s, %o3[%z] : i1, !pg.buffer<2xi1>
  %p = pg_loop.reduce prod %j = 0 to 8 : i1 {
    %v = pg_loop.load %c[%j] : !pg.buffer<8xi1> -> i1
    pg_loop.yield %v : i1
  }
  pg_loop.store %p, %o3[%one] : i1, !pg.buffer<2xi1>
}

// -----
// Nested reduces: the inner accumulator is reset inside the outer reduce range, and the
// inner result feeds the outer combine.
// CHECK-LABEL: pg_uop.kernel @nested(
// CHECK-NEXT:    %z = pg_uop.const 0 : index
// CHECK-NEXT:    %[[OUTER:.*]] = pg_uop.acc 0.0 : f32
// CHECK-NEXT:    %[[C4:.*]] = pg_uop.const 4 : index
// CHECK-NEXT:    %r0 = pg_uop.range 0 to 3 reduce
// CHECK-NEXT:    %[[INNER:.*]] = pg_uop.acc 0.0 : f32
// CHECK-NEXT:    %[[ROW:.*]] = pg_uop.binary mul %r0, %[[C4]] : index
// CHECK-NEXT:    %r1 = pg_uop.range 0 to 4 reduce
// CHECK:         pg_uop.acc_store %[[INNER]], %{{.*}} : f32
// CHECK-NEXT:    pg_uop.end %r1
// CHECK-NEXT:    %[[T:.*]] = pg_uop.acc_load %[[INNER]] : f32
// CHECK-NEXT:    %[[O:.*]] = pg_uop.acc_load %[[OUTER]] : f32
// CHECK-NEXT:    %[[N:.*]] = pg_uop.binary add %[[O]], %[[T]] : f32
// CHECK-NEXT:    pg_uop.acc_store %[[OUTER]], %[[N]] : f32
// CHECK-NEXT:    pg_uop.end %r0
// CHECK-NEXT:    %[[R:.*]] = pg_uop.acc_load %[[OUTER]] : f32
pg_loop.kernel @nested(%a: !pg.buffer<12xf32>, %out: !pg.buffer<1xf32>) {
  %z = pg_loop.const 0
  %s = pg_loop.reduce sum %r0 = 0 to 3 : f32 {
    %t = pg_loop.reduce sum %r1 = 0 to 4 : f32 {
      %c4 = pg_loop.const 4
      %row = pg_loop.index mul %r0, %c4
      %idx = pg_loop.index add %row, %r1
      %v = pg_loop.load %a[%idx] : !pg.buffer<12xf32> -> f32
      pg_loop.yield %v : f32
    }
    pg_loop.yield %t : f32
  }
  pg_loop.store %s, %out[%z] : f32, !pg.buffer<1xf32>
}

// -----
// Masks: index comparisons become pg_uop.cmp on index, pg_loop.and a bool `and`; the load
// keeps its mask and other value; the constants are hoisted out of the range.
// CHECK-LABEL: pg_uop.kernel @masked(
// CHECK-NEXT:    %c2 = pg_uop.const 2 : index
// CHECK-NEXT:    %c5 = pg_uop.const 5 : index
// CHECK-NEXT:    %i = pg_uop.range 0 to 6 global
// CHECK-NEXT:    %src = pg_uop.binary sub %i, %c2 : index
// CHECK-NEXT:    %lo = pg_uop.cmp ge %i, %c2 : index
// CHECK-NEXT:    %hi = pg_uop.cmp lt %i, %c5 : index
// CHECK-NEXT:    %m = pg_uop.binary and %lo, %hi : i1
// CHECK-NEXT:    %v = pg_uop.load %a[%src] if %m else 1.5 : !pg.buffer<4xf32> -> f32
// CHECK-NEXT:    %e = pg_uop.unary exp %v : f32
// CHECK-NEXT:    pg_uop.store %e, %out[%i] : f32, !pg.buffer<6xf32>
// CHECK-NEXT:    pg_uop.end %i
// CHECK-NEXT:  }
pg_loop.kernel @masked(%a: !pg.buffer<4xf32>, %out: !pg.buffer<6xf32>) {
  pg_loop.range %i = 0 to 6 global {
    %c2 = pg_loop.const 2
    %src = pg_loop.index sub %i, %c2
    %lo = pg_loop.cmp ge %i, %c2
    %c5 = pg_loop.const 5
    %hi = pg_loop.cmp lt %i, %c5
    %m = pg_loop.and %lo, %hi
    %v = pg_loop.load %a[%src] if %m else 1.5 : !pg.buffer<4xf32> -> f32
    %e = pg_uop.unary exp %v : f32
    pg_loop.store %e, %out[%i] : f32, !pg.buffer<6xf32>
  }
}
