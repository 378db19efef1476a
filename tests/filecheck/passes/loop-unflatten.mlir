// RUN: opt-tool %s -p 'loop-unflatten{kernel=k0 axis=0 size=2}' | filecheck %s
// RUN: opt-tool %s -p 'loop-schedule{kernel=k0 actions="unflatten(0, 2)"}' | filecheck %s
// RUN: not opt-tool %s -p 'loop-unflatten{kernel=k0 axis=1 size=3}' 2>&1 | filecheck %s --check-prefix=BAD

// A range the kernel divides by 2 (a 2 x 2 pool's rows: row h // 2, tap h % 2) becomes a
// range over the 4 row pairs holding one over the 2 taps; the division and the remainder
// become the two indices. The store still writes element h * 8 + w.
// CHECK-LABEL: pg_loop.kernel @k0(
// CHECK-SAME:    pg.schedule = "unflatten(0, 2)"
// CHECK-NEXT:    pg_loop.range %h_o = 0 to 4 global {
// CHECK-NEXT:      pg_loop.range %h_global = 0 to 2 global {
// CHECK:             %h = pg_loop.index add %{{.*}}, %h_global
// CHECK-NEXT:        pg_loop.range %w = 0 to 8 global {
// CHECK-NOT:           div
// CHECK-NOT:           mod
// CHECK:               %r4 = pg_loop.index mul %h_o, %c4
// CHECK:               %tt = pg_loop.index mul %h_global, %t32
// CHECK:               %o0 = pg_loop.index mul %h, %c8
// CHECK:               pg_loop.store %x, %out[%o]

// A size that does not divide the range is a one-line error.
// BAD: loop-unflatten: @k0: unflatten(1, 3): size 3 must divide the range's 8 iterations, between 1 and 8 exclusive
pg_loop.kernel @k0(%a: !pg.buffer<64xf32>, %out: !pg.buffer<64xf32>) {
  pg_loop.range %h = 0 to 8 global {
    pg_loop.range %w = 0 to 8 global {
      %c2 = pg_loop.const 2
      %c8 = pg_loop.const 8
      %row = pg_loop.index div %h, %c2
      %tap = pg_loop.index mod %h, %c2
      %c4 = pg_loop.const 4
      %r4 = pg_loop.index mul %row, %c4
      %t32 = pg_loop.const 32
      %tt = pg_loop.index mul %tap, %t32
      %at0 = pg_loop.index add %r4, %tt
      %at = pg_loop.index add %at0, %w
      %x = pg_loop.load %a[%at] : !pg.buffer<64xf32> -> f32
      %o0 = pg_loop.index mul %h, %c8
      %o = pg_loop.index add %o0, %w
      pg_loop.store %x, %out[%o] : f32, !pg.buffer<64xf32>
    }
  }
}
