// RUN: opt-tool %s -p loop-upcast | filecheck %s
// RUN: opt-tool %s -p 'loop-upcast{rows=2 cols=2},convert-loop-to-uop' | filecheck %s --check-prefix=UOP
// RUN: opt-tool %s -p 'loop-upcast{min-tiles=4}' | filecheck %s --check-prefix=TILES4
// RUN: opt-tool %s -p 'loop-upcast{min-tiles=5}' | filecheck %s --check-prefix=TILES5

// With min-tiles (CUDA's pipeline), only a kernel whose ranges the whole 4 x 8 tile divides
// into at least that many tiles is tiled: @mm's 8 x 16 outputs make 4 tiles; @ragged's 12
// columns are no multiple of 8 (and it has no row range for the 4 rows).
// TILES4-LABEL: pg_loop.kernel @mm(
// TILES4-SAME:    pg.schedule = "split(1, 8, upcast); split(0, 4, upcast); interchange(1)"
// TILES4-LABEL: pg_loop.kernel @ragged(
// TILES4-NEXT:    pg_loop.range %{{.*}} = 0 to 12 global {
// TILES5-LABEL: pg_loop.kernel @mm(
// TILES5-NEXT:    pg_loop.range %{{.*}} = 0 to 8 global {

// A matmul: the column range splits into tiles of 8 lanes, the row range into tiles of 4,
// and the row lanes move inside the column tiles (three actions, recorded on the kernel);
// the body is unchanged but for its two indices, rebuilt from tile and lane.
// CHECK-LABEL: pg_loop.kernel @mm(
// CHECK-SAME:    pg.schedule = "split(1, 8, upcast); split(0, 4, upcast); interchange(1)"
// CHECK:         pg_loop.range %[[T0:.*]] = 0 to 2 global {
// CHECK-NEXT:      pg_loop.range %[[T1:.*]] = 0 to 2 global {
// CHECK-NEXT:        pg_loop.range %[[L0:.*]] = 0 to 4 upcast {
// CHECK-NEXT:          %[[C4:.*]] = pg_loop.const 4
// CHECK-NEXT:          %[[S0:.*]] = pg_loop.index mul %[[T0]], %[[C4]]
// CHECK-NEXT:          %[[I0:.*]] = pg_loop.index add %[[S0]], %[[L0]]
// CHECK-NEXT:          pg_loop.range %[[L1:.*]] = 0 to 8 upcast {
// CHECK-NEXT:            %[[C8:.*]] = pg_loop.const 8
// CHECK-NEXT:            %[[S1:.*]] = pg_loop.index mul %[[T1]], %[[C8]]
// CHECK-NEXT:            %[[I1:.*]] = pg_loop.index add %[[S1]], %[[L1]]
// CHECK-NEXT:            pg_loop.reduce sum %{{.*}} = 0 to 8 : f32 {
// CHECK:                   pg_loop.index mul %[[I0]], %{{.*}}
// CHECK:                   pg_loop.index add %{{.*}}, %[[I1]]
// CHECK:                 pg_loop.store

// With 2x2 lanes, convert-loop-to-uop emits one reduce loop holding four accumulators,
// then the four stores after it.
// UOP-LABEL: pg_uop.kernel @mm(
// UOP:         pg_uop.range 0 to 4 global
// UOP:         pg_uop.range 0 to 8 global
// UOP:         pg_uop.acc 0.0 : f32
// UOP-NEXT:    pg_uop.acc 0.0 : f32
// UOP-NEXT:    pg_uop.acc 0.0 : f32
// UOP-NEXT:    pg_uop.acc 0.0 : f32
// UOP-NEXT:    %[[R:.*]] = pg_uop.range 0 to 8 reduce
// UOP-COUNT-4: pg_uop.acc_store
// UOP:         pg_uop.end %[[R]]
// UOP-COUNT-4: pg_uop.store
// UOP:         pg_uop.end
pg_loop.kernel @mm(%a: !pg.buffer<64xf32>, %b: !pg.buffer<128xf32>, %out: !pg.buffer<128xf32>) {
  pg_loop.range %i0 = 0 to 8 global {
    pg_loop.range %i1 = 0 to 16 global {
      %s = pg_loop.reduce sum %r = 0 to 8 : f32 {
        %c8 = pg_loop.const 8
        %c16 = pg_loop.const 16
        %ar = pg_loop.index mul %i0, %c8
        %ai = pg_loop.index add %ar, %r
        %x = pg_loop.load %a[%ai] : !pg.buffer<64xf32> -> f32
        %br = pg_loop.index mul %r, %c16
        %bi = pg_loop.index add %br, %i1
        %y = pg_loop.load %b[%bi] : !pg.buffer<128xf32> -> f32
        %xy = pg_uop.binary mul %x, %y : f32
        pg_loop.yield %xy : f32
      }
      %n = pg_loop.const 16
      %or = pg_loop.index mul %i0, %n
      %oi = pg_loop.index add %or, %i1
      pg_loop.store %s, %out[%oi] : f32, !pg.buffer<128xf32>
    }
  }
}

// An elementwise kernel has no reduce: unchanged.
// CHECK-LABEL: pg_loop.kernel @elementwise(
// CHECK-NEXT:    pg_loop.range %{{.*}} = 0 to 64 global {
// CHECK-NEXT:      pg_loop.load
// CHECK-NEXT:      pg_loop.store
pg_loop.kernel @elementwise(%a: !pg.buffer<64xf32>, %out: !pg.buffer<64xf32>) {
  pg_loop.range %i = 0 to 64 global {
    %x = pg_loop.load %a[%i] : !pg.buffer<64xf32> -> f32
    pg_loop.store %x, %out[%i] : f32, !pg.buffer<64xf32>
  }
}

// 12 columns are no multiple of 8: one tile of 8 lanes, then the 4 last columns in a
// remainder range, a copy of the original one.
// CHECK-LABEL: pg_loop.kernel @ragged(
// CHECK-SAME:    pg.schedule = "split(0, 8, upcast)"
// CHECK-NEXT:    pg_loop.range %{{.*}} = 0 to 1 global {
// CHECK-NEXT:      pg_loop.range %{{.*}} = 0 to 8 upcast {
// CHECK:             pg_loop.reduce sum
// CHECK:         pg_loop.range %[[REST:.*]] = 8 to 12 global {
// CHECK-NEXT:      pg_loop.reduce sum
// CHECK:           pg_loop.store %{{.*}}, %out[%[[REST]]]
pg_loop.kernel @ragged(%a: !pg.buffer<96xf32>, %out: !pg.buffer<12xf32>) {
  pg_loop.range %i = 0 to 12 global {
    %s = pg_loop.reduce sum %r = 0 to 8 : f32 {
      %c8 = pg_loop.const 8
      %ar = pg_loop.index mul %i, %c8
      %ai = pg_loop.index add %ar, %r
      %x = pg_loop.load %a[%ai] : !pg.buffer<96xf32> -> f32
      pg_loop.yield %x : f32
    }
    pg_loop.store %s, %out[%i] : f32, !pg.buffer<12xf32>
  }
}
