// RUN: opt-tool %s -p 'loop-schedule{kernel=mm actions="split(1, 8, upcast); split(0, 4, upcast); interchange(1)"}' | filecheck %s
// RUN: opt-tool %s -p loop-upcast > %t.upcast
// RUN: opt-tool %s -p 'loop-schedule{kernel=mm actions="split(1, 8, upcast); split(0, 4, upcast); interchange(1)"}' | diff - %t.upcast

// Replaying loop-upcast's recorded schedule gives exactly loop-upcast's output (the diff
// above); the actions are recorded on the kernel.
// CHECK-LABEL: pg_loop.kernel @mm(
// CHECK-SAME:    pg.schedule = "split(1, 8, upcast); split(0, 4, upcast); interchange(1)"
// CHECK-NEXT:    pg_loop.range %{{.*}} = 0 to 2 global {
// CHECK-NEXT:      pg_loop.range %{{.*}} = 0 to 2 global {
// CHECK-NEXT:        pg_loop.range %{{.*}} = 0 to 4 upcast {
// CHECK:               pg_loop.range %{{.*}} = 0 to 8 upcast {

// A malformed action is an error naming it: tests/unit/passes/test_loop_schedule_pass.py
// (lit's `not` loses PYTHONPATH when its command holds a double-quoted option here).
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
