// RUN: opt-tool %s -p 'loop-chunk-reduce{kernel=k0 reduce=0 size=4}' | filecheck %s
// RUN: opt-tool %s -p 'loop-chunk-reduce{reduce=0 size=5}' | filecheck %s --check-prefix=NOFIT
// RUN: not opt-tool %s -p 'loop-chunk-reduce{kernel=k1 reduce=0 size=4}' 2>&1 | filecheck %s --check-prefix=MAX

// A row sum over 12 elements (starting at 2) as 3 chunks of 4 consecutive elements: chunk
// c adds elements 2 + 4c .. 5 + 4c, then the chunks' sums are added in order; the action
// is recorded as the kernel's schedule.
// CHECK-LABEL: pg_loop.kernel @k0(
// CHECK-SAME:    pg.schedule = "chunk_reduce(0, 4)"
// CHECK:         %s = pg_loop.reduce sum %[[C:.*]] = 0 to 3 : f32 {
// CHECK-NEXT:      %[[P:.*]] = pg_loop.reduce sum %[[I:.*]] = 0 to 4 : f32 {
// CHECK-NEXT:        %[[C4:.*]] = pg_loop.const 4
// CHECK-NEXT:        %[[S:.*]] = pg_loop.index mul %[[C]], %[[C4]]
// CHECK-NEXT:        %[[W:.*]] = pg_loop.index add %[[S]], %[[I]]
// CHECK-NEXT:        %[[C2:.*]] = pg_loop.const 2
// CHECK-NEXT:        %r = pg_loop.index add %[[W]], %[[C2]]
// CHECK:             pg_loop.yield
// CHECK:           pg_loop.yield %[[P]] : f32

// With the kernel left empty, a kernel the action does not fit is left as it is.
// NOFIT-LABEL: pg_loop.kernel @k0(
// NOFIT-NOT:     pg.schedule
// NOFIT:         pg_loop.reduce sum %r = 2 to 14 : f32 {

// A max is exact in any order: chunks would not change its value, so it is refused.
// MAX: @k1: chunk_reduce(0, 4): only a sum gains accuracy in chunks
pg_loop.kernel @k0(%a: !pg.buffer<64xf32>, %out: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
    %s = pg_loop.reduce sum %r = 2 to 14 : f32 {
      %c16 = pg_loop.const 16
      %row = pg_loop.index mul %i, %c16
      %at = pg_loop.index add %row, %r
      %x = pg_loop.load %a[%at] : !pg.buffer<64xf32> -> f32
      pg_loop.yield %x : f32
    }
    pg_loop.store %s, %out[%i] : f32, !pg.buffer<4xf32>
  }
}
pg_loop.kernel @k1(%a: !pg.buffer<64xf32>, %out: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
    %m = pg_loop.reduce max %r = 0 to 16 : f32 {
      %c16 = pg_loop.const 16
      %row = pg_loop.index mul %i, %c16
      %at = pg_loop.index add %row, %r
      %x = pg_loop.load %a[%at] : !pg.buffer<64xf32> -> f32
      pg_loop.yield %x : f32
    }
    pg_loop.store %m, %out[%i] : f32, !pg.buffer<4xf32>
  }
}
