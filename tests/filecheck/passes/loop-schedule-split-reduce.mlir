// RUN: opt-tool %s -p 'loop-schedule{kernel=rows actions="split_reduce(0, 8)"}' | filecheck %s
// RUN: opt-tool %s -p 'loop-schedule{kernel=rows actions="split_reduce(0, 8)"},convert-loop-to-uop,cse' | filecheck %s --check-prefix=SCALAR
// RUN: opt-tool %s -p 'loop-schedule{kernel=rows actions="split_reduce(0, 8)"},convert-loop-to-uop{vectorize=true},cse' | filecheck %s --check-prefix=VECTOR

// A row sum over 64 elements becomes 8 partial sums side by side: lane l adds elements
// l, l + 8, ..., and the lanes are added in lane order.
// CHECK-LABEL: pg_loop.kernel @rows(
// CHECK-SAME:    pg.schedule = "split_reduce(0, 8)"
// CHECK:         %s = pg_loop.reduce sum %[[L:.*]] = 0 to 8 as upcast : f32 {
// CHECK-NEXT:      %[[P:.*]] = pg_loop.reduce sum %[[B:.*]] = 0 to 8 : f32 {
// CHECK-NEXT:        %[[C8:.*]] = pg_loop.const 8
// CHECK-NEXT:        %[[S:.*]] = pg_loop.index mul %[[B]], %[[C8]]
// CHECK-NEXT:        %r = pg_loop.index add %[[S]], %[[L]]
// CHECK:             pg_loop.yield %{{.*}} : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      pg_loop.yield %[[P]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    pg_loop.store %s, %out[%i]

// Lowered with scalar lanes: one loop with 8 accumulators, then 0 + p0 + p1 + ... + p7.
// SCALAR-LABEL: pg_uop.kernel @rows(
// SCALAR-COUNT-8: pg_uop.acc 0.0 : f32
// SCALAR:         pg_uop.range 0 to 8 reduce
// SCALAR:         pg_uop.end
// SCALAR-COUNT-8: pg_uop.binary add %{{.*}}, %{{.*}} : f32
// SCALAR-NEXT:    pg_uop.store

// Lowered as vectors: one vector accumulator, one vload per step, one vreduce.
// VECTOR-LABEL: pg_uop.kernel @rows(
// VECTOR:         pg_uop.acc 0.0 : vector<8xf32>
// VECTOR:         pg_uop.range 0 to 8 reduce
// VECTOR:         pg_uop.vload %a[%{{.*}}] : !pg.buffer<1024xf32> -> vector<8xf32>
// VECTOR:         pg_uop.binary add %{{.*}}, %{{.*}} : vector<8xf32>
// VECTOR:         pg_uop.end
// VECTOR:         %[[T:.*]] = pg_uop.vreduce add %{{.*}} : vector<8xf32> -> f32
// VECTOR-NEXT:    pg_uop.store %[[T]], %out[%i]
pg_loop.kernel @rows(%a: !pg.buffer<1024xf32>, %out: !pg.buffer<16xf32>) {
  pg_loop.range %i = 0 to 16 global {
    %s = pg_loop.reduce sum %r = 0 to 64 : f32 {
      %c64 = pg_loop.const 64
      %row = pg_loop.index mul %i, %c64
      %at = pg_loop.index add %row, %r
      %x = pg_loop.load %a[%at] : !pg.buffer<1024xf32> -> f32
      pg_loop.yield %x : f32
    }
    pg_loop.store %s, %out[%i] : f32, !pg.buffer<16xf32>
  }
}
