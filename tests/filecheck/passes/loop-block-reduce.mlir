// RUN: opt-tool %s -p 'loop-block-reduce{kernel=k0 reduce=0 size=4 axis=0}' | filecheck %s
// RUN: opt-tool %s -p 'loop-block-reduce{kernel=k0 reduce=0 size=4 axis=1}' | filecheck %s --check-prefix=INNER
// RUN: opt-tool %s -p 'loop-block-reduce{reduce=0 size=3 axis=0}' | filecheck %s --check-prefix=NOFIT

// A 4 x 2 matmul over K = 8 in two blocks of 4, the block loop around the row range: each
// block sums its 4 products and adds them to what the earlier block stored (no load for
// the first block). The action is recorded as the kernel's schedule.
// CHECK-LABEL: pg_loop.kernel @k0(
// CHECK-SAME:    pg.schedule = "block_reduce(0, 4, 0)"
// CHECK:         pg_loop.range %j = 0 to 2 global {
// CHECK-NEXT:      pg_loop.range %[[B:.*]] = 0 to 2 loop {
// CHECK-NEXT:        pg_loop.range %i = 0 to 4 global {
// CHECK-NEXT:          %s = pg_loop.reduce sum %[[IN:.*]] = 0 to 4 : f32 {
// CHECK-NEXT:            %[[C4:.*]] = pg_loop.const 4
// CHECK-NEXT:            %[[S:.*]] = pg_loop.index mul %[[B]], %[[C4]]
// CHECK-NEXT:            %r = pg_loop.index add %[[S]], %[[IN]]
// CHECK:                 pg_loop.yield %xy : f32
// CHECK:               %oi = pg_loop.index add %orow, %j
// CHECK-NEXT:          %[[Z:.*]] = pg_loop.const 0
// CHECK-NEXT:          %[[LATER:.*]] = pg_loop.cmp gt %[[B]], %[[Z]]
// CHECK-NEXT:          %[[P:.*]] = pg_loop.load %out[%oi] if %[[LATER]] else 0.0 : !pg.buffer<8xf32> -> f32
// CHECK-NEXT:          %[[T:.*]] = pg_uop.binary add %[[P]], %s : f32
// CHECK-NEXT:          pg_loop.store %[[T]], %out[%oi] : f32, !pg.buffer<8xf32>

// Around the row range's body instead: the blocks of one output element run back to back.
// INNER:         pg_loop.range %i = 0 to 4 global {
// INNER-NEXT:      pg_loop.range %{{.*}} = 0 to 2 loop {
// INNER-NEXT:        %s = pg_loop.reduce sum %{{.*}} = 0 to 4 : f32 {

// With the kernel left empty, a kernel the action does not fit is left as it is.
// NOFIT-LABEL: pg_loop.kernel @k0(
// NOFIT-NOT:     pg.schedule
// NOFIT:         pg_loop.reduce sum %r = 0 to 8 : f32 {
pg_loop.kernel @k0(%a: !pg.buffer<32xf32>, %b: !pg.buffer<16xf32>, %out: !pg.buffer<8xf32>) {
  pg_loop.range %j = 0 to 2 global {
    pg_loop.range %i = 0 to 4 global {
      %s = pg_loop.reduce sum %r = 0 to 8 : f32 {
        %c8 = pg_loop.const 8
        %row = pg_loop.index mul %i, %c8
        %ai = pg_loop.index add %row, %r
        %x = pg_loop.load %a[%ai] : !pg.buffer<32xf32> -> f32
        %c2 = pg_loop.const 2
        %br = pg_loop.index mul %r, %c2
        %bi = pg_loop.index add %br, %j
        %y = pg_loop.load %b[%bi] : !pg.buffer<16xf32> -> f32
        %xy = pg_uop.binary mul %x, %y : f32
        pg_loop.yield %xy : f32
      }
      %c2o = pg_loop.const 2
      %orow = pg_loop.index mul %i, %c2o
      %oi = pg_loop.index add %orow, %j
      pg_loop.store %s, %out[%oi] : f32, !pg.buffer<8xf32>
    }
  }
}
