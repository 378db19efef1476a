// RUN: opt-tool %s -p 'loop-split-reduce{kernel=k0 reduce=0 factor=4}' | filecheck %s
// RUN: opt-tool %s -p 'loop-split-reduce{reduce=0 factor=4}' | filecheck %s
// RUN: opt-tool %s -p 'loop-split-reduce{reduce=0 factor=5}' | filecheck %s --check-prefix=NOFIT

// A row max over 12 elements (starting at 2) as 4 partial maxes: lane l takes elements
// 2 + l, 6 + l, 10 + l; the action is recorded as the kernel's schedule.
// CHECK-LABEL: pg_loop.kernel @k0(
// CHECK-SAME:    pg.schedule = "split_reduce(0, 4)"
// CHECK:         %m = pg_loop.reduce max %[[L:.*]] = 0 to 4 as upcast : f32 {
// CHECK-NEXT:      %[[P:.*]] = pg_loop.reduce max %[[B:.*]] = 0 to 3 : f32 {
// CHECK-NEXT:        %[[C4:.*]] = pg_loop.const 4
// CHECK-NEXT:        %[[S:.*]] = pg_loop.index mul %[[B]], %[[C4]]
// CHECK-NEXT:        %[[W:.*]] = pg_loop.index add %[[S]], %[[L]]
// CHECK-NEXT:        %[[C2:.*]] = pg_loop.const 2
// CHECK-NEXT:        %r = pg_loop.index add %[[W]], %[[C2]]
// CHECK:             pg_loop.yield
// CHECK:           pg_loop.yield %[[P]] : f32

// With the kernel left empty, a kernel the action does not fit is left as it is.
// NOFIT-LABEL: pg_loop.kernel @k0(
// NOFIT-NOT:     pg.schedule
// NOFIT:         pg_loop.reduce max %r = 2 to 14 : f32 {
pg_loop.kernel @k0(%a: !pg.buffer<64xf32>, %out: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
    %m = pg_loop.reduce max %r = 2 to 14 : f32 {
      %c16 = pg_loop.const 16
      %row = pg_loop.index mul %i, %c16
      %at = pg_loop.index add %row, %r
      %x = pg_loop.load %a[%at] : !pg.buffer<64xf32> -> f32
      pg_loop.yield %x : f32
    }
    pg_loop.store %m, %out[%i] : f32, !pg.buffer<4xf32>
  }
}
