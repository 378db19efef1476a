// RUN: opt-tool %s -p 'loop-stash{kernel=k0 reduce=1}' | filecheck %s
// RUN: opt-tool %s -p 'loop-stash{reduce=0}' | filecheck %s --check-prefix=NOFIT

// A softmax row: the sum of exp(x - max) and the output loop's exp(x - max) / sum. The
// exps are computed once, in a new range before the sum, into the output; the sum and the
// output loop read them back.
// CHECK-LABEL: pg_loop.kernel @k0(
// CHECK-SAME:    pg.schedule = "stash(1)"
// CHECK:         %m = pg_loop.reduce max
// CHECK:         pg_loop.range %i = 0 to 8 global {
// CHECK:           %[[E:.*]] = pg_uop.unary exp %{{.*}} : f32
// CHECK-NEXT:      pg_loop.store %[[E]], %out[%at] : f32, !pg.buffer<32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %s = pg_loop.reduce sum %r1 = 0 to 8 : f32 {
// CHECK:           %[[B:.*]] = pg_loop.load %out[%{{.*}}] : !pg.buffer<32xf32> -> f32
// CHECK-NEXT:      pg_loop.yield %[[B]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    pg_loop.range %[[I:.*]] = 0 to 8 global {
// CHECK-NOT:       exp
// CHECK:           %[[AT:.*]] = pg_loop.index add %{{.*}}, %[[I]]
// CHECK-NEXT:      %[[A:.*]] = pg_loop.load %out[%[[AT]]] : !pg.buffer<32xf32> -> f32
// CHECK-NEXT:      %[[Q:.*]] = pg_uop.binary div %[[A]], %s : f32
// CHECK-NEXT:      pg_loop.store %[[Q]], %out[%[[AT]]] : f32, !pg.buffer<32xf32>

// The max combines loaded values as they are: nothing to compute once, the kernel is left
// as it is.
// NOFIT-LABEL: pg_loop.kernel @k0(
// NOFIT-NOT:     pg.schedule
// NOFIT:         %s = pg_loop.reduce sum %r1 = 0 to 8 : f32 {
// NOFIT-NEXT:      %c8b = pg_loop.const 8
pg_loop.kernel @k0(%x: !pg.buffer<32xf32>, %out: !pg.buffer<32xf32>) {
  pg_loop.range %row = 0 to 4 global {
    %m = pg_loop.reduce max %r0 = 0 to 8 : f32 {
      %c8a = pg_loop.const 8
      %ra = pg_loop.index mul %row, %c8a
      %ia = pg_loop.index add %ra, %r0
      %xa = pg_loop.load %x[%ia] : !pg.buffer<32xf32> -> f32
      pg_loop.yield %xa : f32
    }
    %s = pg_loop.reduce sum %r1 = 0 to 8 : f32 {
      %c8b = pg_loop.const 8
      %rb = pg_loop.index mul %row, %c8b
      %ib = pg_loop.index add %rb, %r1
      %xb = pg_loop.load %x[%ib] : !pg.buffer<32xf32> -> f32
      %db = pg_uop.binary sub %xb, %m : f32
      %eb = pg_uop.unary exp %db : f32
      pg_loop.yield %eb : f32
    }
    pg_loop.range %i = 0 to 8 global {
      %c8 = pg_loop.const 8
      %r = pg_loop.index mul %row, %c8
      %at = pg_loop.index add %r, %i
      %xc = pg_loop.load %x[%at] : !pg.buffer<32xf32> -> f32
      %dc = pg_uop.binary sub %xc, %m : f32
      %ec = pg_uop.unary exp %dc : f32
      %q = pg_uop.binary div %ec, %s : f32
      pg_loop.store %q, %out[%at] : f32, !pg.buffer<32xf32>
    }
  }
}
